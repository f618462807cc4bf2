"""``mt-eval report CARD``: write a run card as one self-contained HTML page.

The page (inline CSS, no external assets, optional inline JS for sorting/filtering the entries
table) is built by :mod:`mt_eval.htmlreport`; this module holds the file writing and the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mt_eval.errors import UserError
from mt_eval.htmlreport import render_html

__all__ = ["default_out_path", "register", "render_html", "write_report"]


def default_out_path(card_path: Path) -> Path:
    """``report.html`` in the card's folder."""
    return card_path.parent / "report.html"


def write_report(card_path: Path, out_path: Path | None = None) -> Path:
    """Render the card at ``card_path`` and write it; returns the path written."""
    from mt_eval.api import load_card

    card = load_card(card_path)
    try:
        page = render_html(card)
    except UserError as exc:
        if exc.file is None:
            exc.file = str(card_path)
            exc.args = (exc.one_line(),)
        raise
    target = out_path if out_path is not None else default_out_path(card_path)
    if target.is_dir():
        raise UserError("is a directory; give a file name for --out", file=str(target))
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write report: {exc.strerror or exc}", file=str(target)) from None
    return target


def register(app: typer.Typer) -> None:
    """Add ``report`` to the ``mt-eval`` app."""

    @app.command("report")
    def report_command(
        card: Annotated[Path, typer.Argument(help="Run card JSON.")],
        out_path: Annotated[Path | None, typer.Option(
            "--out", "-o", help="Write the HTML here (default: report.html beside the card).")] = None,
    ) -> None:
        """Write a run card as one self-contained HTML page and print its path.

        Example: mt-eval report runs/<run_id>/run_card.json --out report.html
        """
        from mt_eval.cli import guarded

        def go() -> None:
            typer.echo(str(write_report(card, out_path)))

        guarded(go)

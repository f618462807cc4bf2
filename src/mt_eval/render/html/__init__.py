"""Self-contained HTML reports: one run card (``page``) or several compared (``compare_page``).

Inline CSS and JS, no network. Writing follows one rule for both: an existing file is never
replaced silently (``--force`` says so), because a report is often kept beside the card it was
made from, and a second ``mt-eval report`` run on other cards would otherwise erase it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.render.html.page import render_html

__all__ = ["check_target", "render_html", "write_page", "write_report"]


def check_target(target: Path, *, force: bool = False) -> Path:
    """``target`` if a page may be written there; a ``UserError`` before any work otherwise."""
    if target.is_dir():
        raise UserError("is a directory; give a file name for --out", file=str(target))
    if target.exists() and not force:
        raise UserError("already exists; pass --force to overwrite it (or --out another file)", file=str(target))
    return target


def write_page(page: str, target: Path, *, force: bool = False) -> Path:
    """Write ``page`` to ``target`` under the overwrite rule; returns the path written."""
    check_target(target, force=force)
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write report: {exc.strerror or exc}", file=str(target)) from None
    return target


def write_report(card: dict[str, Any], card_path: Path, out_path: Path | None = None, *, force: bool = False,
                 problems: list[str] | None = None, metrics: list[str] | None = None) -> Path:
    """Render ``card`` (read from ``card_path``) and write it, by default as report.html beside the card."""
    target = check_target(out_path if out_path is not None else card_path.parent / "report.html", force=force)
    try:
        page = render_html(card, problems=problems, metrics=metrics)
    except UserError as exc:
        if exc.file is None:
            exc.file = str(card_path)
            exc.args = (exc.one_line(),)
        raise
    return write_page(page, target, force=force)

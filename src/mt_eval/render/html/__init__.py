"""Self-contained HTML report of a run card (``mt-eval report CARD``): inline CSS and JS, no network."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.render.html.page import render_html

__all__ = ["render_html", "write_report"]


def write_report(card: dict[str, Any], card_path: Path, out_path: Path | None = None) -> Path:
    """Render ``card`` (read from ``card_path``) and write it, by default as report.html beside the card."""
    try:
        page = render_html(card)
    except UserError as exc:
        if exc.file is None:
            exc.file = str(card_path)
            exc.args = (exc.one_line(),)
        raise
    target = out_path if out_path is not None else card_path.parent / "report.html"
    if target.is_dir():
        raise UserError("is a directory; give a file name for --out", file=str(target))
    try:
        target.write_text(page, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write report: {exc.strerror or exc}", file=str(target)) from None
    return target

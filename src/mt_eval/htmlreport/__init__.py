"""Self-contained HTML report of a run card (``mt-eval report CARD``)."""

from __future__ import annotations

from mt_eval.htmlreport.page import render_html

__all__ = ["render_html"]

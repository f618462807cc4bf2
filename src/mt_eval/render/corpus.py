"""Terminal rendering of a corpus summary (``mt-eval validate``): overview, count tables, warnings."""

from __future__ import annotations

from rich.columns import Columns
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mt_eval.corpus.validate import CorpusSummary


def _counts_table(title: str, counts: dict[str, int] | dict[int, int], total: int) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False)
    table.add_column(title.removeprefix("by "))
    table.add_column("entries", justify="right")
    table.add_column("share", justify="right")
    for key, n in counts.items():
        style = "dim" if n == 0 else ""
        share = f"{100 * n / total:.0f}%" if total else "-"
        table.add_row(Text(str(key)), str(n), share, style=style)
    return table


def render_summary(summary: CorpusSummary, console: Console) -> None:
    """Print the overview, four count tables and the warnings (yellow) or an all-clear line."""
    overview = Table(show_header=False, show_edge=False, box=None, pad_edge=False)
    overview.add_column(style="bold")
    overview.add_column(overflow="fold")  # the full sha256 must stay copyable, never "…"
    for label, value in (
        ("dataset", f"{summary.dataset_id} v{summary.version}"),
        ("language pair", f"{summary.language_pair} ({summary.source_language} → {summary.target_language})"),
        ("file", summary.path),
        ("sha256", summary.sha256),
        ("entries", str(summary.entry_count)),
    ):
        overview.add_row(label, Text(value))
    console.print(overview)
    tables = [
        _counts_table(title, counts, summary.entry_count)
        for title, counts in (
            ("by segment", summary.by_segment),
            ("by difficulty", summary.by_difficulty),
            ("by provenance", summary.by_provenance),
            ("by register", summary.by_register),
        )
    ]
    console.print()
    console.print(Columns(tables, padding=(1, 4)))
    console.print()
    if summary.warnings:
        for warning in summary.warnings:
            console.print(Text(f"warning: {warning}", style="yellow"))
    else:
        console.print(Text("meets the Benchmark Spec §11.1 corpus minimums", style="green"))

"""What ``mt-eval metrics generate-judges`` wrote: one row per generated judge card."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape
from rich.table import Table

from mt_eval.metrics.judges import read_spec


def judge_cards_table(paths: Sequence[Path]) -> Table:
    """The judges in the cards just written: id, kind, criterion, file (each read back, so what is shown is
    what ``--judge`` will load)."""
    table = Table(title=f"{len(paths)} generated judges (egress remote, AI-generated: review before use)")
    for col in ("id", "kind", "criterion", "file"):
        table.add_column(col)
    for path in paths:
        spec = read_spec(path)
        table.add_row(spec.id, spec.kind, escape(spec.criterion), escape(str(path)))
    return table

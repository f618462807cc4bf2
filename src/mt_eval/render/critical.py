"""Critical errors of one card as ``show`` prints them: the rate per check and the worst entries with the
offending tokens (``metrics.critical.worst_entries`` recomputes the tokens from ``results[]``; the rates and
per-entry flags are the sealed card's own)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.markup import escape
from rich.table import Table

from mt_eval.metrics.critical import FLAG_METRICS, PARENT, critical_summary, worst_entries
from mt_eval.render.card_data import neutral

# the card's keys in the order a report lists them: the share with any flag, then one rate per check
CRITICAL_KEYS = (PARENT, *FLAG_METRICS)


def critical_table(card: Mapping[str, Any], n: int) -> Table | None:
    """The ``n`` entries with most critical-error flags (id, flags with their tokens, output); None when no entry
    is flagged or the card predates the metrics."""
    summary = critical_summary(card)
    if summary is None:
        return None
    count, worst = worst_entries(card, n)
    total = len(card.get("results") or [])
    table = Table(title=f"Critical errors: {count} of {total} entries flagged ({summary})", title_justify="left")
    for col in ("id", "flags (offending tokens)", "predicted"):
        table.add_column(col, overflow="fold", max_width=None if col == "id" else 50)
    for entry in worst:
        table.add_row(escape(neutral(entry.entry_id)), escape(neutral(entry.label)), escape(neutral(entry.predicted)))
    return table

"""The report's critical-errors section: each rate with its interval and the worst entries with the offending
tokens (the same data ``show`` prints, from ``metrics.critical.worst_entries``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mt_eval.metrics.critical import critical_summary, worst_entries
from mt_eval.render.html.parts import e

SHOWN = 20  # worst entries listed


def _flags(flags: Mapping[str, list[str]]) -> str:
    return "<br>".join(f"<strong>{e(flag)}</strong> {e(' '.join(tokens))}" for flag, tokens in flags.items())


def critical_section(card: Mapping[str, Any], n: int = SHOWN) -> str:
    """``<section id="critical">``, or "" for a card scored before the critical-error metrics."""
    summary = critical_summary(card)
    if summary is None:
        return ""
    count, worst = worst_entries(card, n)
    total = len(card.get("results") or [])
    rows = "".join(f"<tr><td>{e(w.entry_id)}</td><td>{_flags(w.flags)}</td><td>{e(w.predicted)}</td></tr>"
                   for w in worst)
    table = ('<div class="scroll"><table id="critical-table"><caption>Worst entries by number of flags</caption>'
             "<thead><tr><th>id</th><th>flags (offending tokens)</th><th>predicted</th></tr></thead>"
             f"<tbody>{rows}</tbody></table></div>") if worst else '<p class="muted">No entry is flagged.</p>'
    return (f'<section id="critical"><h2>Critical errors ({count} of {total} entries flagged)</h2>'
            f"<p>{e(summary)}</p>{table}"
            '<p class="muted">Tokens: -X missing from the output, +X in the output but in neither source nor '
            "reference. What each check cannot catch: <code>mt-eval metrics show critical_error_rate</code>.</p>"
            "</section>")

"""Terminal rendering of ``rescore`` (each card's outcome and its change log) and ``reproduce`` (each
weighted metric: published, reproduced, Δ, Δ %). Text from a card is escaped: a card is untrusted input."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.runcard.reproduce import TOLERANCE, Reproduction
from mt_eval.store.rescore import RescoreOutcome

STATUSES = ("rescored", "would rescore", "unchanged", "not selected", "skipped")


def _value(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _changes(log: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(what, old, new, signatures) rows of one change log: metrics, then composite, tier and rule."""
    rows = []
    for metric, c in (log.get("metrics") or {}).items():
        sig = "" if c["old_signature"] == c["new_signature"] else \
            f"{_value(c['old_signature'])} → {_value(c['new_signature'])}"
        rows.append((escape(metric), _value(c["old"]), _value(c["new"]), sig))
    for key, c in (log.get("scores") or {}).items():
        rows.append((escape(key), _value(c["old"]), _value(c["new"]), ""))
    return rows


def render_rescore(outcomes: Sequence[RescoreOutcome], console: Console, *, dry_run: bool = False) -> None:
    """One table: every card that changed with each change; then a count of the rest."""
    changed = [o for o in outcomes if o.status in ("rescored", "would rescore")]
    if changed:
        table = Table(title="would change (dry run: nothing written)" if dry_run else "rescored",
                      title_justify="left")
        for header in ("card → new card", "method", "changed", "old", "new", "signature"):
            table.add_column(header, overflow="fold")
        for o in changed:
            first = True
            for what, old, new, sig in _changes(o.change_log):
                card = f"{o.old_hash[:12]} → {(o.new_hash or '')[:12]}" if first else ""
                table.add_row(card, escape(o.method) if first else "", what, old, new, sig)
                first = False
        console.print(table)
    for o in outcomes:
        if o.status == "skipped":
            console.print(f"{o.old_hash[:12]} ({escape(o.method)}): skipped, {escape(str(o.change_log.get('reason')))}",
                          highlight=False)
    counts = {status: sum(o.status == status for o in outcomes) for status in STATUSES}
    summary = ", ".join(f"{n} {status}" for status, n in counts.items() if n) or "no cards matched"
    console.print(f"{len(outcomes)} card(s): {summary}", highlight=False)


def render_reproduction(result: Reproduction, tier: str | None, console: Console) -> None:
    """Each weighted metric against the published card, the verdict, where the new card is."""
    table = Table(title=f"reproduction of {result.published_hash[:12]} (±{TOLERANCE:.0%} per weighted metric)",
                  title_justify="left")
    for header in ("metric", "weight", "published", "reproduced", "Δ", "Δ %", ""):
        table.add_column(header, justify="left" if header == "metric" else "right", no_wrap=True)
    for c in result.checks:
        pct = "–" if c.delta_pct is None else f"{c.delta_pct:+.2f}"
        delta = "–" if c.delta is None else f"{c.delta:+.4f}"
        mark = "[green]ok[/green]" if c.within else "[red]differs[/red]"
        table.add_row(escape(c.metric), f"{c.weight:.3f}", _value(c.published), _value(c.reproduced), delta, pct,
                      mark)
    console.print(table)
    differing = [c.metric for c in result.checks if not c.within]
    if result.verified:
        verdict = "[green]verified[/green]: every weighted metric within tolerance"
    elif differing:
        verdict = f"[red]not verified[/red]: {escape(', '.join(differing))} differ"
    else:
        verdict = "[red]not verified[/red]: the card has no weighted metric to compare"
    console.print(verdict + (f"; verification tier: {escape(tier)}" if tier else ""), highlight=False)
    console.print(f"reproduced card: [bold]{escape(str(result.path))}[/bold]", highlight=False)

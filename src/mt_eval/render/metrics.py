"""The MetricBank shown by ``mt-eval metrics list|show|suggest``: a table of cards, one card as text, a ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from mt_eval.metrics.bank import BOOLEANS, SECTIONS, MetricCard

SECTION_TITLES = {
    "details": "Metric details",
    "intended_use": "Intended use",
    "implementation": "Implementation",
    "limitations": "Known limitations",
    "authors": "Metric card authors",
}


def _yes(value: object) -> str:
    return "yes" if value else "no"


def metrics_table(cards: Mapping[str, MetricCard], missing: Sequence[str] = ()) -> Table:
    """One row per metric: range, direction, whether it needs a reference or the source, egress."""
    table = Table(title="Metric cards")
    for col in ("id", "name", "range", "higher better", "reference", "source", "egress"):
        table.add_column(col)
    for metric_id, card in sorted(cards.items()):
        d = card.sections["details"]
        table.add_row(metric_id, card.name, str(d["range"]), _yes(d["higher_is_better"]),
                      _yes(d["reference_based"]), _yes(d["source_required"]), card.egress)
    for metric_id in missing:
        table.add_row(metric_id, "[yellow](no metric card)[/yellow]", "", "", "", "", "?")
    return table


def card_text(card: MetricCard) -> Group:
    """The whole card, section by section, in the Metric Card's reading order."""
    parts: list[Text | str] = [Text(f"Metric card: {card.name} ({card.id})", style="bold"),
                               Text(card.summary), Text(f"egress: {card.egress}")]
    for section, keys in SECTIONS.items():
        parts.append(Text(f"\n{SECTION_TITLES[section]}", style="bold underline"))
        for key in keys:
            value = card.sections[section][key]
            shown = _yes(value) if key in BOOLEANS else str(value)
            parts.append(f"[bold]{key.replace('_', ' ')}[/bold]: {escape(shown)}")
    parts.append(Text("\nRelated metrics", style="bold underline"))
    parts.append(escape(", ".join(card.related)))
    parts.append(Text("\nFurther reading", style="bold underline"))
    parts += [f"- {escape(ref)}" for ref in card.further_reading]
    return Group(*parts)


def suggestions_table(task: str, method: str, ranked: Sequence[tuple[MetricCard, float]]) -> Table:
    table = Table(title=f"Metrics for: {task} (ranked by {method})")
    for col in ("rank", "id", "score", "summary"):
        table.add_column(col)
    for rank, (card, score) in enumerate(ranked, 1):
        table.add_row(str(rank), card.id, f"{score:.3f}", card.summary)
    return table

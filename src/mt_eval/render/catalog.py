"""What ``mt-eval datasets list|show|fetch`` print: the catalogue's families, one family in full."""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from mt_eval.catalog import Family, Fetched


def catalog_table(families: Sequence[Family]) -> Table:
    table = Table(title="Public test sets (mt-eval datasets fetch ID; --corpus ID anywhere)")
    for col in ("family", "id", "licence", "released", "known exposure", "title"):
        table.add_column(col, overflow="fold")
    for family in families:
        exposure = family.exposure
        known = "; ".join(exposure.inclusion) if exposure.inclusion else "none documented"
        table.add_row(family.name, escape(family.usage), family.licence + (" (gated)" if family.gated else ""),
                      exposure.released, escape(known), escape(family.title))
    return table


def family_lines(family: Family, dataset_id: str | None, accepted: bool) -> list[str]:
    exposure = family.exposure
    lines = [
        f"[bold]{escape(dataset_id or family.name)}[/bold]: {escape(family.title)}",
        f"usage: {escape(family.usage)}",
        f"examples: {escape(', '.join(family.examples))}",
        f"source: {escape(family.homepage)} (version {escape(family.version)})",
        f"licence: {escape(family.licence)}" + (" [green]accepted[/green]" if accepted else
                                                 " [yellow]not accepted yet: fetch with --accept-licence[/yellow]"),
        f"terms: {escape(family.terms)}",
        f"citation: {escape(family.citation)}",
        f"released: {exposure.released}" + (f" ({escape(exposure.note)})" if exposure.note else ""),
        "known training-set inclusion: " + (escape("; ".join(exposure.inclusion)) or "none documented"),
        "sources: " + escape(", ".join(exposure.sources)),
    ]
    if family.pinned:
        lines.append(f"pinned sha256: {len(family.pinned)} upstream files; others are recorded at first fetch")
    return lines


def fetched_line(fetched: Fetched) -> str:
    where = "from the cache" if not fetched.downloaded else f"{fetched.downloaded} file(s) downloaded"
    return (f"{escape(fetched.plan.dataset_id)}: {fetched.entry_count} entries "
            f"({fetched.plan.source_language}→{fetched.plan.target_language}, {where}) → {escape(str(fetched.path))}")

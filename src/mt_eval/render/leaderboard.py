"""Terminal rendering of the leaderboard (Benchmark Spec §9.7): one table per dataset's ranked group,
rank ranges from the significance clusters on the dataset's ranking key (named in the title), the
composite with its interval (the spec's view, on every row), then the cards set apart with the reason.
Every text that came from a card is escaped (a card is untrusted input)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.scoring.composite import tier_label
from mt_eval.store.query import BoardRow
from mt_eval.store.ranking import RankedBoard
from mt_eval.store.sovereign import verification_label


def _num(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _composite(row: BoardRow) -> str:
    lo, hi = row.composite_ci
    ci = f" [{_num(lo, 3)}, {_num(hi, 3)}]" if lo is not None and hi is not None else ""
    return f"{_num(row.composite, 3)}{ci}"


SPEC_METRICS = (("chrF++", "chrf_plus_plus", 2), ("FST", "fst_acceptance_rate", 3),
                ("exact", "exact_match_rate", 3), ("sem.", "semantic_score", 3))
"""The metric columns of Benchmark Spec §9.7: header, metric id, digits ("–" where a card has none)."""


def _metric(row: BoardRow, metric: str, digits: int) -> str:
    return _num((row.scores.get(metric) or {}).get("value"), digits)


def _table(rows: Sequence[BoardRow], title: str, *, ranked: bool) -> tuple[Table, list[str]]:
    """One line per card: the method with its condition, model and class beneath (dim), the §9.7 scores,
    quality tier over verification tier, cost over cost-adjusted score, speed; the submitter is in
    ``--json`` and ``export``. A §9.7 metric no card here has is left out (and named in the footnote)
    so that the table fits a terminal."""
    metrics = [(h, m, d) for h, m, d in SPEC_METRICS if any(_metric(r, m, d) != "–" for r in rows)]
    absent = [m for _, m, _ in SPEC_METRICS if all(_metric(r, m, 2) == "–" for r in rows)]
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("rank" if ranked else "not ranked because", overflow="fold", no_wrap=ranked)
    table.add_column("method · condition\nmodel · class", overflow="fold", min_width=18)
    table.add_column("composite [95% CI]", no_wrap=True)
    for header, _, _ in metrics:
        table.add_column(header, justify="right", no_wrap=True)
    table.add_column("quality tier\nverification", no_wrap=True)
    # cost and latency only where a card has them (unknown for a replayed predictions file, never shown as 0)
    cost = any(r.cost_per_entry is not None or r.cost_adjusted is not None for r in rows)
    latency = any(r.avg_latency is not None for r in rows)
    if cost:
        table.add_column("$/entry\ncost-adj.", justify="right", no_wrap=True)
    if latency:
        table.add_column("latency s", justify="right", no_wrap=True)
    table.add_column("published\ncard", no_wrap=True)
    for r in rows:
        first = r.rank or "–" if ranked else escape(r.unranked_reason or "")
        who = f"{escape(r.method)} · {escape(r.condition)}\n[dim]{escape(r.model)} · {escape(r.method_class)}[/dim]"
        verification = escape(verification_label(r.verification_tier))
        tiers = f"{escape(tier_label(r.quality_tier, r.reviewed))}\n[dim]{verification}[/dim]"
        table.add_row(first, who, _composite(r), *(_metric(r, m, d) for _, m, d in metrics), tiers,
                      *([f"{_num(r.cost_per_entry, 5)}\n{_num(r.cost_adjusted, 3)}"] if cost else []),
                      *([_num(r.avg_latency, 3)] if latency else []),
                      f"{r.published_at:%Y-%m-%d}\n[dim]{r.run_card_hash[:8]}[/dim]")  # fmt: skip
    return table, absent


def render(boards: Sequence[RankedBoard], console: Console) -> None:
    """Each board's ranked table, its cards set apart, and how to read the rank ranges."""
    if not boards:
        console.print("no published cards match")
        return
    absent: set[str] = set()
    for board in boards:
        title = f"{escape(board.dataset_id)} ({board.dataset_sha256[:12]})"
        if board.signed is not None:  # a sovereign tier: ranked by its organisation's signed clusters
            title += (f" · sovereign, clusters signed by {escape(board.signed.organisation)} "
                      f"(ranking {board.signed.ranking_sha256[:12]}, {board.signed.systems} cards)")
        else:
            title += f" · ranked by {escape(key_phrase(board))}"
        for rows, heading, ranked in ((board.rows, f"{len(board.rows)} ranked", True),
                                      (board.unranked, "not comparable with the ranked cards", False)):
            if rows:
                table, missing = _table(rows, f"{title}: {heading}", ranked=ranked)
                console.print(table)
                absent.update(missing)
    if absent:
        console.print(f"[dim]no card shown has {', '.join(sorted(absent))}: column left out[/dim]")
    console.print("rank: cards with the same range are not significantly different on their board's ranking key "
                  "(paired bootstrap between neighbours, Holm-corrected); order within a range is not evidence; "
                  "the composite and tier are the spec's view of each card")


def key_phrase(board: RankedBoard) -> str:
    """What ranks a board: "chrF++ (the dataset's primary metric)", or the composite of an unregistered one."""
    if not board.key.registered:
        return "composite (dataset not registered)"
    return f"{board.key.label} (the dataset's primary metric)"

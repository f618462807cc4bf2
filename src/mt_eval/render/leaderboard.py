"""Terminal rendering of the leaderboard (Benchmark Spec §9.7): one table per dataset's ranked group,
rank ranges from the significance clusters, the composite with its interval, then the cards set
apart with the reason. Every text that came from a card is escaped (a card is untrusted input)."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.scoring.composite import tier_label
from mt_eval.store.query import BoardRow
from mt_eval.store.ranking import RankedBoard


def _num(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _composite(row: BoardRow) -> str:
    lo, hi = row.composite_ci
    ci = f" [{_num(lo)}, {_num(hi)}]" if lo is not None and hi is not None else ""
    return f"{_num(row.composite)}{ci}"


def _table(rows: Sequence[BoardRow], title: str, *, ranked: bool) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("rank" if ranked else "not ranked because", overflow="fold")
    for name in ("method", "condition", "model", "class", "composite [95% CI]", "quality tier", "verification",
                 "cost/entry $", "cost-adjusted", "latency s", "submitter", "published", "card"):
        table.add_column(name, overflow="fold", justify="right" if name.startswith(("cost", "latency")) else "left")
    for r in rows:
        first = r.rank or "–" if ranked else escape(r.unranked_reason or "")
        table.add_row(first, escape(r.method), escape(r.condition), escape(r.model), escape(r.method_class),
                      _composite(r), escape(tier_label(r.quality_tier)), escape(r.verification_tier),
                      _num(r.cost_per_entry, 6), _num(r.cost_adjusted), _num(r.avg_latency, 3),
                      escape(r.submitter or "–"), r.published_at.strftime("%Y-%m-%d"),
                      r.run_card_hash[:12])  # fmt: skip
    return table


def render(boards: Sequence[RankedBoard], console: Console) -> None:
    """Each board's ranked table, its cards set apart, and how to read the rank ranges."""
    if not boards:
        console.print("no published cards match")
        return
    for board in boards:
        title = f"{escape(board.dataset_id)} ({board.dataset_sha256[:12]})"
        if board.rows:
            console.print(_table(board.rows, f"{title}: {len(board.rows)} ranked", ranked=True))
        if board.unranked:
            console.print(_table(board.unranked, f"{title}: not comparable with the ranked cards", ranked=False))
    console.print("rank: cards with the same range are not significantly different on the composite "
                  "(paired bootstrap between neighbours, Holm-corrected); order within a range is not evidence")

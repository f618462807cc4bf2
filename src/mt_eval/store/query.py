"""Leaderboard queries: filters and sort keys as bound parameters and whitelisted columns only.

Every value that comes from a command line (dataset id or hash, method class, tiers, a metric name
to sort by) reaches the database as a bound parameter; the sort key chooses among column objects
declared here, never text pasted into SQL. An unknown sort key is a ``UserError`` before any query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, or_, select
from sqlalchemy.orm import Session, load_only, selectinload

from mt_eval.errors import UserError
from mt_eval.store.models import Card, CardMetric, Dataset

FIXED_SORTS: dict[str, tuple[Any, bool]] = {
    # key -> (column, higher is better)
    "composite": (Card.composite, True),
    "cost_adjusted": (Card.cost_adjusted, True),
    "cost_per_entry": (Card.cost_per_entry, False),
    "latency": (Card.avg_latency, False),
}
ROW_COLUMNS = (Card.run_card_hash, Card.run_id, Card.dataset_sha256, Card.entry_ids_sha256, Card.profile,
               Card.composite_rule, Card.metric_set, Card.method_name, Card.method_class, Card.model_slug,
               Card.condition, Card.composite, Card.composite_ci_lower, Card.composite_ci_upper, Card.cost_adjusted,
               Card.quality_tier, Card.verification_tier, Card.submitter, Card.published_at, Card.cost_per_entry,
               Card.avg_latency)  # fmt: skip


@dataclass(frozen=True)
class Filters:
    """What the leaderboard shows: each a bound parameter when set."""

    dataset: str | None = None
    method_class: str | None = None
    tier: str | None = None
    verification: str | None = None


@dataclass
class BoardRow:
    """One card on the board, as the table, ``--json`` and ``export`` show it."""

    run_card_hash: str
    run_id: str
    dataset_id: str
    dataset_sha256: str
    entry_ids_sha256: str
    profile: str
    composite_rule: str
    metric_set: str
    method: str
    method_class: str
    model: str
    condition: str
    composite: float | None
    composite_ci: tuple[float | None, float | None]
    cost_adjusted: float | None
    cost_per_entry: float | None
    avg_latency: float | None
    quality_tier: str
    verification_tier: str
    submitter: str | None
    published_at: datetime
    scores: dict[str, dict[str, float | None]] = field(default_factory=dict)
    rank: str | None = None
    """The rank range of the row's significance cluster ("1–3"), or None when it is not ranked."""
    unranked_reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The row for JSON and JSON lines: every score with its interval."""
        return {
            "rank": self.rank, "run_card_hash": self.run_card_hash, "run_id": self.run_id,
            "method": self.method, "condition": self.condition, "model": self.model,
            "method_class": self.method_class, "dataset_id": self.dataset_id, "dataset_sha256": self.dataset_sha256,
            "profile": self.profile, "composite_rule": self.composite_rule,
            "composite": {"value": self.composite, "ci_lower": self.composite_ci[0], "ci_upper": self.composite_ci[1]},
            "scores": self.scores, "cost_adjusted": self.cost_adjusted, "cost_per_entry_usd": self.cost_per_entry,
            "avg_latency_seconds": self.avg_latency, "quality_tier": self.quality_tier,
            "verification_tier": self.verification_tier, "submitter": self.submitter,
            "published_at": self.published_at.isoformat(), "unranked_reason": self.unranked_reason,
        }  # fmt: skip


def _filters(stmt: Select[Any], filters: Filters) -> Select[Any]:
    if filters.dataset:
        wanted = filters.dataset.lower()
        matches = [Dataset.dataset_id == filters.dataset, Card.dataset_sha256 == wanted]
        if len(wanted) >= 8:  # a hash prefix, as short as git's; LIKE wildcards in it are escaped
            matches.append(Card.dataset_sha256.startswith(wanted, autoescape=True))
        stmt = stmt.where(or_(*matches))
    if filters.method_class:
        stmt = stmt.where(Card.method_class == filters.method_class)
    if filters.tier:
        stmt = stmt.where(Card.quality_tier == filters.tier)
    if filters.verification:
        stmt = stmt.where(Card.verification_tier == filters.verification)
    return stmt


def sort_key(session: Session, sort: str) -> tuple[ColumnElement[Any] | None, Any, bool]:
    """(join condition, column, higher is better) for ``sort``: a fixed key or a stored metric's id."""
    if sort in FIXED_SORTS:
        column, higher = FIXED_SORTS[sort]
        return None, column, higher
    direction = session.scalar(select(CardMetric.higher_is_better).where(CardMetric.metric == sort).limit(1))
    if direction is None:
        known = session.scalars(select(CardMetric.metric).distinct()).all()
        raise UserError(f"cannot sort by {sort!r}: give one of {', '.join([*FIXED_SORTS, *sorted(known)])}")
    return and_(CardMetric.card_id == Card.id, CardMetric.metric == sort), CardMetric.value, bool(direction)


def query_rows(session: Session, filters: Filters | None = None, *, sort: str = "composite",
               limit: int | None = None) -> list[BoardRow]:
    """The cards matching ``filters``, best first by ``sort`` (nulls last, then by hash: never by time)."""
    join, column, higher = sort_key(session, sort)
    stmt = select(Card).join(Dataset, Card.dataset_pk == Dataset.id)
    if join is not None:
        stmt = stmt.outerjoin(CardMetric, join)
    order = column.desc() if higher else column.asc()
    stmt = _filters(stmt, filters or Filters()).order_by(order.nulls_last(), Card.run_card_hash)
    stmt = stmt.options(load_only(*ROW_COLUMNS), selectinload(Card.metrics), selectinload(Card.dataset))
    if limit is not None:
        stmt = stmt.limit(limit)
    return [_row(card) for card in session.scalars(stmt)]


def _row(card: Card) -> BoardRow:
    return BoardRow(
        run_card_hash=card.run_card_hash, run_id=card.run_id, dataset_id=card.dataset.dataset_id,
        dataset_sha256=card.dataset_sha256, entry_ids_sha256=card.entry_ids_sha256, profile=card.profile,
        composite_rule=card.composite_rule, metric_set=card.metric_set, method=card.method_name,
        method_class=card.method_class, model=card.model_slug, condition=card.condition, composite=card.composite,
        composite_ci=(card.composite_ci_lower, card.composite_ci_upper), cost_adjusted=card.cost_adjusted,
        cost_per_entry=card.cost_per_entry, avg_latency=card.avg_latency, quality_tier=card.quality_tier,
        verification_tier=card.verification_tier, submitter=card.submitter, published_at=card.published_at,
        scores={m.metric: {"value": m.value, "ci_lower": m.ci_lower, "ci_upper": m.ci_upper}
                for m in sorted(card.metrics, key=lambda m: m.metric)},
    )  # fmt: skip


def entry_rows(session: Session, hashes: Sequence[str]) -> list[dict[str, Any]]:
    """Per-entry rows of the given cards (``export --entries``), in card then entry order."""
    from mt_eval.store.models import EntryResult

    stmt = (select(Card.run_card_hash, EntryResult.entry_id, EntryResult.predicted, EntryResult.error,
                   EntryResult.values)
            .join(EntryResult, EntryResult.card_id == Card.id)
            .where(Card.run_card_hash.in_(list(hashes)))
            .order_by(Card.run_card_hash, EntryResult.entry_id))  # fmt: skip
    return [{"run_card_hash": h, "entry_id": e, "predicted": p, "error": err, "values": v}
            for h, e, p, err, v in session.execute(stmt)]  # fmt: skip

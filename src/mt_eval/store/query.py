"""Leaderboard queries: filters and sort keys as bound parameters and whitelisted columns only.

Every value that comes from a command line (dataset id or hash, method class, tiers, a metric name
to sort by) reaches the database as a bound parameter; the sort key chooses among column objects
declared here, never text pasted into SQL. An unknown sort key is a ``UserError`` before any query.

A card that ``rescore`` replaced (it is the ``old_card_id`` of a ``card_links`` row) is superseded:
it stays in the store, but the board lists only the newest card of each lineage unless asked for
every card (``Filters.include_superseded``), so a run never appears twice under two scorings.

Which deployable/fluent cards community review accepted is the caller's to say (``gate``: in practice
``review.gate.accepted_in``): the gate's rules (quality control, conduct, standing) live in ``review``, above the
store, which only applies the answer. Without a gate no card counts as reviewed, so a gated tier shows capped
(``functional``), never higher than review allowed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Select, and_, exists, or_, select
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.scoring.composite import REVIEW_GATED, UNREVIEWED_CAP, effective_tier, tier_label
from mt_eval.store.models import Card, CardLink, CardMetric, Dataset
from mt_eval.store.rank_key import RankKey, keys_for

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


class ReviewGate(Protocol):
    """The §7.2 review gate as the store uses it: which of these cards community review accepted, read in the
    caller's open session (``review.gate.accepted_in``)."""

    def __call__(self, session: Session, run_card_hashes: Sequence[str], /) -> set[str]: ...


@dataclass(frozen=True)
class Filters:
    """What the leaderboard shows: each a bound parameter when set."""

    dataset: str | None = None
    method_class: str | None = None
    tier: str | None = None
    verification: str | None = None
    include_superseded: bool = False
    """Also the cards a rescore replaced (by default only the newest card of each lineage)."""
    clean_only: bool = False
    """Only cards whose method's declared training cut-off predates the month their test set became public
    (both known: an undeclared cut-off or an unknown release never counts as clean; decisions §55)."""


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
    reviewed: bool = False
    """Community review accepted this card (the §7.2 gate): a deployable/fluent tier then counts."""
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
            "quality_tier_shown": tier_label(self.quality_tier, self.reviewed),
            "effective_tier": effective_tier(self.quality_tier, self.reviewed), "review_accepted": self.reviewed,
            "verification_tier": self.verification_tier, "submitter": self.submitter,
            "published_at": self.published_at.isoformat(), "unranked_reason": self.unranked_reason,
        }  # fmt: skip


def superseded_by(session: Session, card_id: int) -> int | None:
    """The id of the card that replaced card ``card_id`` (a rescore), or None while it is current."""
    return session.scalar(select(CardLink.new_card_id).where(CardLink.old_card_id == card_id)
                          .order_by(CardLink.id.desc()).limit(1))  # fmt: skip


def dataset_matches(dataset: str) -> ColumnElement[bool]:
    """The datasets a ``--dataset`` value names: its id, its sha256, or a sha256 prefix of 8+ characters."""
    wanted = dataset.lower()
    matches = [Dataset.dataset_id == dataset, Dataset.sha256 == wanted]
    if len(wanted) >= 8:  # a hash prefix, as short as git's; LIKE wildcards in it are escaped
        matches.append(Dataset.sha256.startswith(wanted, autoescape=True))
    return or_(*matches)


def card_conditions(filters: Filters, dataset_pks: Sequence[int] | None = None) -> list[ColumnElement[bool]]:
    """The WHERE conditions for ``filters`` on ``Card`` joined with ``Dataset``: every value a bound
    parameter; superseded cards left out unless ``include_superseded``."""
    conditions: list[ColumnElement[bool]] = []
    if not filters.include_superseded:
        conditions.append(~exists().where(CardLink.old_card_id == Card.id))
    if filters.dataset or dataset_pks is not None:
        # the matching datasets' keys (``dataset_pks``, looked up first in the small datasets table), so the
        # planner reads cards in the order of the (dataset, composite, hash) index and stops after the top
        # 50 (docs/decisions.md §39); without them, the same as a subquery
        chosen = list(dataset_pks) if dataset_pks is not None else select(Dataset.id).where(
            dataset_matches(filters.dataset or ""))
        conditions.append(Card.dataset_pk.in_(chosen))
    if filters.method_class:
        conditions.append(Card.method_class == filters.method_class)
    if filters.tier:  # the tier that counts (docs/decisions.md §20): unreviewed deployable/fluent are functional;
        # which gated cards review accepted is settled after the query (``apply_review_gate``)
        if filters.tier == UNREVIEWED_CAP:
            conditions.append(Card.quality_tier.in_([UNREVIEWED_CAP, *REVIEW_GATED]))
        else:
            conditions.append(Card.quality_tier == filters.tier)
    if filters.verification:
        conditions.append(Card.verification_tier == filters.verification)
    if filters.clean_only:  # YYYY-MM strings order as the months they name
        conditions.append(and_(Card.training_cutoff.is_not(None), Card.test_released.is_not(None),
                               Card.training_cutoff < Card.test_released))
    return conditions


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
               limit: int | None = None, dataset_pk: int | None = None, key: RankKey | None = None,
               gate: ReviewGate | None = None) -> list[BoardRow]:
    """The cards matching ``filters``, best first by ``sort`` (nulls last, then by hash: never by time).
    ``dataset_pk``: only that dataset row's cards; ``key``: best first by a ranking key instead of ``sort``;
    ``gate``: which gated cards review accepted (the module doc).

    Plain column queries, not ORM objects: two statements (the rows, then their metrics by card id),
    and the card JSON is never read, so a top-50 query costs the same with 100 or 100,000 cards."""
    filters = filters or Filters()
    pks = ([dataset_pk] if dataset_pk is not None else
           list(session.scalars(select(Dataset.id).where(dataset_matches(filters.dataset)))) if filters.dataset
           else None)  # fmt: skip
    gated_filter = filters.tier in (*REVIEW_GATED, UNREVIEWED_CAP)  # decided after review: limit afterwards
    cap = limit if limit is not None and not gated_filter else None
    base = select(Card.id, Dataset.dataset_id, *ROW_COLUMNS).join(Dataset, Card.dataset_pk == Dataset.id)
    conditions = card_conditions(filters, pks)
    if key is not None and key.metric != "composite":
        records = by_metric(session, base, conditions, key, cap)
    else:
        join, column, higher = sort_key(session, sort) if key is None else (None, Card.composite, True)
        stmt = base.outerjoin(CardMetric, join) if join is not None else base
        order = column.desc() if higher else column.asc()
        stmt = stmt.where(*conditions).order_by(order.nulls_last(), Card.run_card_hash)
        records = list(session.execute(stmt.limit(cap) if cap is not None else stmt).mappings())
    scores: dict[int, dict[str, dict[str, float | None]]] = {r["id"]: {} for r in records}
    if records:
        metrics = (select(CardMetric.card_id, CardMetric.metric, CardMetric.value, CardMetric.ci_lower,
                          CardMetric.ci_upper)
                   .where(CardMetric.card_id.in_(list(scores)))
                   .order_by(CardMetric.card_id, CardMetric.metric))  # fmt: skip
        for card_id, metric, value, lo, hi in session.execute(metrics):
            scores[card_id][metric] = {"value": value, "ci_lower": lo, "ci_upper": hi}
    rows = apply_review_gate(session, [_row(r, scores[r["id"]]) for r in records], filters.tier, gate)
    return rows[:limit] if limit is not None else rows


def by_metric(session: Session, base: Select[*tuple[Any, ...]], conditions: Sequence[ColumnElement[bool]], key: RankKey,
              cap: int | None) -> list[Any]:
    """The records of ``base`` best first by the metric ``key`` names, then those without it (by hash).

    Read from ``card_metrics`` (an inner join: a stored metric always has a value) in the order of its
    (metric, value) index, so the planner stops after ``cap`` rows instead of sorting every card of the
    dataset (an outer join from the cards cannot use that index: 109 ms at 4,000 cards, bench_leaderboard);
    only when fewer than ``cap`` cards have a value are the others read, after them."""
    has = and_(CardMetric.card_id == Card.id, CardMetric.metric == key.metric)
    order = CardMetric.value.desc() if key.higher_is_better else CardMetric.value.asc()
    valued = base.join(CardMetric, has).where(*conditions).order_by(order, Card.run_card_hash)
    records = list(session.execute(valued.limit(cap) if cap is not None else valued).mappings())
    if cap is None or len(records) < cap:
        rest = base.where(*conditions, ~exists().where(has)).order_by(Card.run_card_hash)
        left = None if cap is None else cap - len(records)
        records += session.execute(rest.limit(left) if left is not None else rest).mappings()
    return records


def top_rows(session: Session, filters: Filters | None = None, *, limit: int | None = None,
             gate: ReviewGate | None = None) -> tuple[list[BoardRow], dict[str, RankKey]]:
    """Each matching dataset's top ``limit`` cards by its own ranking key (``store.rank_key``: a registered
    dataset's primary metric, else the composite), dataset after dataset (by id, then hash); and the keys by
    sha256. One query per dataset, each read in its key's order and stopped at ``limit`` (the datasets table
    is small), so a dataset's board is never crowded out by another's cards."""
    filters = filters or Filters()
    stmt = select(Dataset.id, Dataset.sha256).order_by(Dataset.dataset_id, Dataset.sha256, Dataset.entry_ids_sha256)
    if filters.dataset:
        stmt = stmt.where(dataset_matches(filters.dataset))
    datasets = session.execute(stmt).all()
    keys = keys_for(session, {sha for _, sha in datasets})
    rows: list[BoardRow] = []
    for pk, sha in datasets:
        rows += query_rows(session, filters, limit=limit, dataset_pk=pk, key=keys[sha], gate=gate)
    return rows, keys


def apply_review_gate(session: Session, rows: list[BoardRow], tier: str | None = None,
                      gate: ReviewGate | None = None) -> list[BoardRow]:
    """Mark the deployable/fluent rows that community review accepted (``gate``; None: none), and keep only
    the rows whose tier that counts is ``tier`` when one is asked for."""
    gated = [r.run_card_hash for r in rows if r.quality_tier in REVIEW_GATED]
    accepted = gate(session, gated) if gated and gate is not None else set()
    for r in rows:
        r.reviewed = r.run_card_hash in accepted
    return [r for r in rows if effective_tier(r.quality_tier, r.reviewed) == tier] if tier else rows


def utc(when: datetime) -> datetime:
    """SQLite gives back naive times (stored in UTC); PostgreSQL aware ones: both as aware UTC."""
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _row(r: Any, scores: dict[str, dict[str, float | None]]) -> BoardRow:
    return BoardRow(
        run_card_hash=r["run_card_hash"], run_id=r["run_id"], dataset_id=r["dataset_id"],
        dataset_sha256=r["dataset_sha256"], entry_ids_sha256=r["entry_ids_sha256"], profile=r["profile"],
        composite_rule=r["composite_rule"], metric_set=r["metric_set"], method=r["method_name"],
        method_class=r["method_class"], model=r["model_slug"], condition=r["condition"], composite=r["composite"],
        composite_ci=(r["composite_ci_lower"], r["composite_ci_upper"]), cost_adjusted=r["cost_adjusted"],
        cost_per_entry=r["cost_per_entry"], avg_latency=r["avg_latency"], quality_tier=r["quality_tier"],
        verification_tier=r["verification_tier"], submitter=r["submitter"], published_at=utc(r["published_at"]),
        scores=scores,
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

"""What the web pages read from the store: boards with the web's extra filters, Pareto frontiers,
a card's public view, a dataset's counts, and a comparison of stored runs. No web framework here.

**Secret segments.** A card stores every entry's source, reference and prediction, and the store
keeps the card whole. Entries of the ``gold_standard`` and ``held_out`` segments must never be
shown (Benchmark Spec §8: the test set never leaves the governance organisation), so everything a
page or the API serves goes through ``public_entries`` (texts of the other segments only) or
counts; the stored card JSON itself is never served.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from mt_eval.corpus.models import is_secret
from mt_eval.errors import UserError
from mt_eval.metrics.critical import critical_view
from mt_eval.runcard.io import as_dict
from mt_eval.scoring.composite import effective_tier, tier_label
from mt_eval.store.board import DEFAULT_LIMIT, RANK, resort
from mt_eval.store.dataset_power import dataset_power
from mt_eval.store.db import Store
from mt_eval.store.keys import KeyInfo, lookup
from mt_eval.store.models import Card, CardSignature, Dataset
from mt_eval.store.query import BoardRow, Filters, ReviewGate, sort_key, top_rows, utc
from mt_eval.store.ranking import N_RESAMPLES, RankedBoard, rank
from mt_eval.store.ranking import as_card as card_dict
from mt_eval.store.ranking import load_cards as load_with_statistics

BREAKDOWNS = ("by_difficulty", "by_provenance", "by_register", "by_segment")
FACETS = ("segment", "difficulty", "provenance", "register")
ENTRY_FIELDS = ("entry_id", "segment", "difficulty", "provenance", "register", "source", "reference", "predicted",
                "error", "exact_match", "entry_chrf", "latency_seconds", "metrics")  # fmt: skip
MAX_COMPARED = 8
DISAGREEMENTS = 10


@dataclass(frozen=True)
class BoardQuery:
    """The leaderboard filters: the store's own (``Filters``) and the web's model and coverage."""

    filters: Filters = field(default_factory=Filters)
    model: str | None = None
    complete_only: bool = False
    limit: int = DEFAULT_LIMIT
    sort: str = RANK


def board_page(store: Store, query: BoardQuery, *, n_resamples: int = N_RESAMPLES,
               gate: ReviewGate | None = None) -> list[RankedBoard]:
    """``store.board.leaderboard`` with the model and coverage filters applied before ranking, so the
    clusters are those of the cards shown (as ``--method-class`` does on the command line). ``gate``: which
    gated cards review accepted (``review.gate.accepted_in``; None: none)."""
    if query.limit < 1:
        raise UserError("limit must be at least 1")
    with store.session() as session:
        higher = True if query.sort == RANK else sort_key(session, query.sort)[2]  # unknown: refused first
        narrowed = query.model is not None or query.complete_only
        # the store's Filters know neither model nor coverage: those narrow the rows here, so then every
        # matching row is read (the top ``limit`` of each dataset's remaining rows is ranked)
        rows, keys = top_rows(session, query.filters, limit=None if narrowed else query.limit, gate=gate)
        if query.model:
            rows = [r for r in rows if r.model == query.model]
        if query.complete_only:
            complete = complete_hashes(session, [r.run_card_hash for r in rows])
            rows = [r for r in rows if r.run_card_hash in complete]
        boards = rank(session, per_dataset(rows, query.limit), n_resamples=n_resamples, keys=keys)
    resort(boards, query.sort, higher)
    return boards


def per_dataset(rows: Sequence[BoardRow], limit: int) -> list[BoardRow]:
    """The first ``limit`` rows of each dataset (sha256 + entries), in the order given."""
    seen: Counter[tuple[str, str]] = Counter()
    out = []
    for row in rows:
        seen[(row.dataset_sha256, row.entry_ids_sha256)] += 1
        if seen[(row.dataset_sha256, row.entry_ids_sha256)] <= limit:
            out.append(row)
    return out


def store_stamp(store: Store) -> tuple[object, ...]:
    """(cards, highest card id, ratings, highest rating id, latest rating time, highest sovereign ranking id,
    the registered datasets' ranking keys): changes whenever a card is published or removed, a review rating is
    stored (the §7.2 gate moves a card's shown tier), a signed sovereign ranking is published (it ranks
    sovereign cards) or a dataset is registered or its key switched (it re-ranks the board), so a board
    computed for one stamp may be reused until the stamp changes. Aggregates on primary keys; the registered
    datasets are a few rows."""
    from mt_eval.store.dataset_models import RegisteredDataset
    from mt_eval.store.models import ReviewRating, SovereignRanking

    with store.session() as session:
        count, highest = session.execute(select(func.count(Card.id), func.max(Card.id))).one()
        rated = session.execute(select(func.count(ReviewRating.id), func.max(ReviewRating.id),
                                       func.max(ReviewRating.rated_at))).one()
        ranking = session.scalar(select(func.max(SovereignRanking.id)))
        stmt = select(RegisteredDataset.sha256, RegisteredDataset.primary_metric).order_by(RegisteredDataset.sha256)
        keys = tuple((str(sha), str(key)) for sha, key in session.execute(stmt))
    return int(count or 0), int(highest or 0), *tuple(rated), int(ranking or 0), keys


def complete_hashes(session: Session, hashes: Sequence[str]) -> set[str]:
    """Cards with complete coverage: every entry of the dataset (no selection) and no failed entry.

    Read as two JSON fields, never the whole card (a card can be megabytes)."""
    if not hashes:
        return set()
    stmt = select(Card.run_card_hash, Card.card["dataset"]["selection"], Card.card["scores"]["errors"]).where(
        Card.run_card_hash.in_(list(hashes)))
    return {h for h, selection, errors in session.execute(stmt) if not selection and errors == 0}


def facets(store: Store) -> dict[str, list[str]]:
    """The values the filter menus offer: each distinct value in the store."""
    with store.session() as session:
        def distinct(column: Any) -> list[str]:
            return sorted(str(v) for v in session.scalars(select(column).distinct()) if v is not None)

        return {"dataset": distinct(Dataset.dataset_id), "method_class": distinct(Card.method_class),
                "model": distinct(Card.model_slug), "tier": distinct(Card.quality_tier),
                "verification": distinct(Card.verification_tier)}  # fmt: skip


@dataclass(frozen=True)
class ParetoPoint:
    run_card_hash: str
    label: str
    composite: float
    x: float
    on_frontier: bool


def pareto(rows: Iterable[BoardRow], axis: str) -> list[ParetoPoint]:
    """Composite (higher is better) against ``axis`` (``cost_per_entry`` or ``avg_latency``; lower is
    better), cheapest first: a card is on the frontier when no other card is at least as good on both
    and better on one (two identical points are both on it). Cards without a composite or a value on
    the axis are left out."""
    points = [(r, getattr(r, axis)) for r in rows if r.composite is not None and getattr(r, axis) is not None]
    points.sort(key=lambda p: (p[1], -(p[0].composite or 0.0), p[0].run_card_hash))
    best, best_x = float("-inf"), None
    out = []
    for row, x in points:
        composite = float(row.composite or 0.0)
        on = composite > best or (composite == best and x == best_x)
        if composite > best:
            best, best_x = composite, x
        out.append(ParetoPoint(row.run_card_hash, row.method, composite, float(x), on))
    return out


class CardReview(Protocol):
    """Community review's verdict on one card as its page shows it (``review.gate.card_review``), read in the
    caller's open session; None when no review covered it."""

    def __call__(self, session: Session, run_card_hash: str, /) -> dict[str, Any] | None: ...


@dataclass(frozen=True)
class StoredCard:
    """A published card and what the store records beside it."""

    card: dict[str, Any]
    verification_tier: str
    submitter: str | None
    published_at: str
    signatures: list[dict[str, Any]]
    review: dict[str, Any] | None = None
    """Community review's verdict on this card (``review.gate``), or None when no review covered it."""


def load_card(store: Store, run_card_hash: str, card: dict[str, Any] | None = None, *,
              review: CardReview | None = None) -> StoredCard | None:
    """A published card by its full hash (the caller checks the spelling), or None. ``card``: the
    card's JSON where the caller already holds it (it never changes under its hash), so only what the
    store records beside it is read. ``review``: its verdict's source (None: the card shows no review)."""
    columns = [Card.id, Card.verification_tier, Card.submitter, Card.published_at]
    stmt = select(*columns, Card.card) if card is None else select(*columns)
    with store.session() as session:
        found = session.execute(stmt.where(Card.run_card_hash == run_card_hash)).first()
        if found is None:
            return None
        record: Any = found  # a Row whose width depends on the columns asked for
        card_id, tier, submitter, when = record[:4]
        signed = session.scalars(select(CardSignature).where(CardSignature.card_id == card_id)
                                 .order_by(CardSignature.key_id)).all()  # fmt: skip
        verdict = review(session, run_card_hash) if review is not None else None
        registry = lookup(session, [s.key_id for s in signed])  # read anew: a key may be revoked since
        return StoredCard(card if card is not None else card_dict(record[4]), tier, submitter, utc(when).isoformat(), [
            {"key_id": s.key_id, "signer": s.signer, "public_key": s.public_key, "signature": s.signature,
             "signed_at": s.signed_at.isoformat() if s.signed_at else None,
             **registry_status(registry.get(s.key_id), s.public_key)} for s in signed],
            verdict)  # fmt: skip


def registry_status(key: KeyInfo | None, public_key: str) -> dict[str, Any]:
    """What the store's key registry says of one signature's key: ``registered`` (to whom), ``revoked`` (when),
    or ``unregistered``. The signer name in a ``.sig`` is the signer's own claim (anyone can make a key and
    call it "alice"); only the registry binds a key to a submitter (``store.keys``). A registered key id whose
    stored public key differs is treated as unregistered (the id is a hash prefix, never the key itself)."""
    if key is None or key.public_key != public_key:
        return {"registry": "unregistered", "registered_submitter": None, "revoked_at": None}
    return {"registry": "registered" if key.active else "revoked", "registered_submitter": key.submitter,
            "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None}


def facet(result: Mapping[str, Any], name: str) -> str:
    """An entry's segment, difficulty, provenance or register as text; no register is "unspecified",
    as the card's ``by_register`` breakdown names it."""
    value = result.get(name)
    return "unspecified" if value is None and name == "register" else str(value)


def run_view(stored: StoredCard) -> dict[str, Any]:
    """What the run page and ``/api/runs/{hash}`` show beside the card's summary (``show --json``):
    breakdowns, cost, speed, fingerprint, environment, signatures and entry counts. No text of any
    entry: those come page by page from ``public_entries``."""
    card = stored.card
    scores = as_dict(card.get("scores"))
    results = [r for r in card.get("results") or [] if isinstance(r, Mapping)]
    hidden = sum(1 for r in results if is_secret(r))
    method = as_dict(card.get("method"))
    tier = str(scores.get("quality_tier"))
    accepted = bool(stored.review and stored.review["accepted"])
    return {
        "tier_label": tier_label(tier, accepted),
        "tier_shown": effective_tier(tier, accepted),
        "method": {k: method.get(k) for k in ("name", "method_class", "version", "config_sha256")},
        "breakdowns": {b: as_dict(scores.get(b)) for b in BREAKDOWNS},
        "fingerprint": as_dict(card.get("fingerprint")),
        "environment": as_dict(card.get("environment")),
        "cost_block": as_dict(card.get("cost")),
        "speed_block": as_dict(card.get("speed")),
        "signatures": stored.signatures,
        "review": stored.review,
        "verification_tier": stored.verification_tier,
        "submitter": stored.submitter,
        "published_at": stored.published_at,
        "entry_counts": {"total": len(results), "shown": len(results) - hidden, "secret": hidden},
        "entry_facets": {name: sorted({facet(r, name) for r in results if not is_secret(r)}) for name in FACETS},
        "critical": critical_view(card, keep=lambda r: not is_secret(r)),  # worst flagged entries, none secret
        "timestamp": card.get("timestamp"),
    }


@dataclass(frozen=True)
class EntryFilter:
    """The per-entry table's filters: facet values, a text search, and the page."""

    segment: str | None = None
    difficulty: int | None = None
    provenance: str | None = None
    register: str | None = None
    q: str | None = None
    offset: int = 0
    limit: int = 100


def _public(result: Mapping[str, Any]) -> dict[str, Any]:
    return {k: result.get(k) for k in ENTRY_FIELDS}


def public_entries(card: Mapping[str, Any], where: EntryFilter = EntryFilter()) -> dict[str, Any]:
    """A page of the card's entries outside the secret segments, filtered; with the match count."""
    results = [r for r in card.get("results") or [] if isinstance(r, Mapping) and not is_secret(r)]
    needle = (where.q or "").casefold()

    def keep(r: Mapping[str, Any]) -> bool:
        for name in FACETS:
            wanted = getattr(where, name)
            if wanted is not None and facet(r, name) != str(wanted):
                return False
        texts = (str(r.get("source", "")), str(r.get("reference", "")), str(r.get("predicted", "")))
        return not needle or any(needle in t.casefold() for t in texts) or needle == str(r.get("entry_id"))

    matched = [r for r in results if keep(r)]
    return {"matched": len(matched), "offset": where.offset, "limit": where.limit,
            "entries": [_public(r) for r in matched[where.offset : where.offset + where.limit]]}  # fmt: skip


def dataset_view(store: Store, dataset_id: str) -> list[dict[str, Any]]:
    """Each version of ``dataset_id`` in the store (corpus hash + entries) with its counts per segment,
    difficulty, provenance and register, read from one of its cards. Counts only: no text."""
    with store.session() as session:
        datasets = session.scalars(select(Dataset).where(Dataset.dataset_id == dataset_id)
                                   .order_by(Dataset.sha256, Dataset.entry_ids_sha256)).all()  # fmt: skip
        out = []
        for ds in datasets:
            n_cards = session.scalar(select(func.count(Card.id)).where(Card.dataset_pk == ds.id)) or 0
            card = session.scalar(select(Card.card).where(Card.dataset_pk == ds.id).order_by(Card.id).limit(1))
            results = [r for r in as_dict(card_dict(card)).get("results") or [] if isinstance(r, Mapping)] \
                if card is not None else []
            out.append({
                "dataset_id": ds.dataset_id, "version": ds.version, "sha256": ds.sha256,
                "entry_ids_sha256": ds.entry_ids_sha256, "language_pair": ds.language_pair,
                "entry_count": ds.entry_count, "cards": n_cards,
                "counts": {name: dict(sorted(Counter(facet(r, name) for r in results).items())) for name in FACETS},
                "secret_entries": sum(1 for r in results if is_secret(r)),
                "power": dataset_power(session, ds.id),  # what this many entries can resolve (stats/power.py)
            })  # fmt: skip
    return out


def datasets(store: Store) -> list[dict[str, Any]]:
    """Every dataset id with its versions and card counts (the dataset index)."""
    with store.session() as session:
        rows = session.execute(select(Dataset.dataset_id, Dataset.language_pair, Dataset.entry_count, Dataset.sha256)
                               .order_by(Dataset.dataset_id, Dataset.sha256)).all()  # fmt: skip
    return [{"dataset_id": d, "language_pair": p, "entry_count": n, "sha256": s} for d, p, n, s in rows]


def compare_runs(store: Store, hashes: Sequence[str], *, n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """2–8 stored runs on the same entries, the first the baseline: every run's scores with CIs and the
    paired test per metric (``mt_eval.comparison.compare`` on the stored statistics, Holm per metric),
    and the public entries where the runs disagree most (the widest spread of per-entry chrF++)."""
    from mt_eval.comparison import compare
    from mt_eval.runcard.statistics import decode

    unique = list(dict.fromkeys(hashes))
    if not 2 <= len(unique) <= MAX_COMPARED:
        raise UserError(f"compare needs 2 to {MAX_COMPARED} different runs, got {len(unique)}")
    with store.session() as session:
        cards, blobs = load_with_statistics(session, unique)
        untested = [h for h in unique if h not in cards and session.scalar(
            select(Card.id).where(Card.run_card_hash == h)) is not None]  # published without statistics
    if untested:  # a sovereign card keeps no per-entry statistics: they would leak per-entry scores
        raise UserError(f"run {untested[0][:12]} has no per-entry statistics (a sovereign card): it cannot be "
                        "compared entry by entry")
    missing = [h for h in unique if h not in cards]
    if missing:
        raise LookupError(missing[0])
    ordered = [cards[h] for h in unique]
    stored = [decode(blobs[h], cards[h]["statistics"]) for h in unique]
    result = compare(ordered, statistics=stored, n_resamples=n_resamples, sources=[h[:12] for h in unique])
    return {"runs": unique, "comparison": result.as_dict(), "disagreements": disagreements(ordered)}


def disagreements(cards: Sequence[Mapping[str, Any]], n: int = DISAGREEMENTS) -> list[dict[str, Any]]:
    """The ``n`` public entries whose per-entry chrF++ differs most across the runs, with every output."""
    by_run = [{r["entry_id"]: r for r in c.get("results") or [] if isinstance(r, Mapping)} for c in cards]
    spread: list[tuple[float, int, list[Mapping[str, Any]]]] = []
    for entry_id in by_run[0]:
        found = [run.get(entry_id) for run in by_run]
        rows = [r for r in found if r is not None]
        if any(is_secret(r) for r in rows) or len(rows) != len(found):
            continue
        numbers = [float(v) for v in (r.get("entry_chrf") for r in rows) if isinstance(v, int | float)]
        if len(numbers) == len(rows):
            spread.append((max(numbers) - min(numbers), entry_id, rows))
    spread.sort(key=lambda s: (-s[0], s[1]))
    return [{"entry_id": entry_id, "spread": width, "source": rows[0].get("source"),
             "reference": rows[0].get("reference"),
             "outputs": [{"predicted": r.get("predicted"), "entry_chrf": r.get("entry_chrf")} for r in rows]}
            for width, entry_id, rows in spread[:n]]  # fmt: skip


# The disagreement lens on the compare page: metrics against people.

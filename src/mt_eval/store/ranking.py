"""Ranking: which cards may be ranked together, by which key, and their significance clusters.

Each dataset's board is ranked by its key (``store.rank_key``: a registered dataset's primary metric, chrF++
unless it says otherwise; the composite for a dataset nobody registered). Ranked by the composite, cards are
comparable only with the same dataset (``sha256`` and the same entries), the same set of available metrics,
the same profile and the same composite rule (Scoring Spec §4.1): the largest such group is ranked. Ranked by
a metric, every card of the same dataset and entries with a value for it is ranked (profile and rule change
the composite, not the metric). Every other card is listed apart with the reason. Within a ranked group the
cards are ordered by the key and each adjacent pair is tested with the paired bootstrap on the stored
statistics (``mt_eval.comparison``: for the composite, each resample's composite is the card's own composite
function); the adjacent p-values are Holm-corrected together, and a significant step separates two clusters.
Every card of a cluster gets the cluster's rank range ("1–3"): the order inside a cluster is not evidence, and
time of submission never breaks a tie (docs/decisions.md §27, §51).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.store.models import Card, CardStatistics, SovereignRank, SovereignRanking
from mt_eval.store.query import BoardRow, utc
from mt_eval.store.rank_key import COMPOSITE, UNREGISTERED, RankKey, keys_for

if TYPE_CHECKING:
    from mt_eval.runcard.statistics import StoredStatistics

N_RESAMPLES = 1000
ALPHA = 0.05


@dataclass(frozen=True)
class AdjacentTest:
    """The paired test between two neighbours in the order of the ranking key (``delta``: better − worse, in
    the metric's units; negative for a metric where lower is better)."""

    better: str
    worse: str
    delta: float
    p_value: float
    p_adjusted: float
    significant: bool
    metric: str = COMPOSITE


@dataclass(frozen=True)
class SignedClusters:
    """Whose ranking a board shows when the store could not test its cards: a governance organisation's
    signed clusters of its sovereign cards (``sovereign.ranking``), computed where their texts are."""

    organisation: str
    ranking_sha256: str
    key_id: str
    systems: int
    published_at: datetime


@dataclass
class RankedBoard:
    """One dataset's ranked group (best first by ``key``), its tests, and the cards set apart; ``signed``:
    a sovereign tier of the dataset, ranked by a published signed ranking (no tests of its own)."""

    dataset_id: str
    dataset_sha256: str
    rows: list[BoardRow]
    tests: list[AdjacentTest]
    unranked: list[BoardRow]
    signed: SignedClusters | None = None
    key: RankKey = UNREGISTERED


def key_value(row: BoardRow, key: RankKey) -> float | None:
    """The row's value of the ranking key: its composite, or the metric's value."""
    if key.metric == COMPOSITE:
        return row.composite
    return (row.scores.get(key.metric) or {}).get("value")


def by_key(key: RankKey) -> Callable[[BoardRow], tuple[bool, float, str]]:
    """Sort key: best first by ``key`` (no value last), then by hash (never by time)."""
    def order(row: BoardRow) -> tuple[bool, float, str]:
        value = key_value(row, key)
        if value is None:
            return (True, 0.0, row.run_card_hash)
        return (False, -value if key.higher_is_better else value, row.run_card_hash)

    return order


def comparability_key(row: BoardRow) -> tuple[str, ...]:
    return (row.dataset_sha256, row.entry_ids_sha256, row.metric_set, row.profile, row.composite_rule)


def _reason(row: BoardRow, ref: BoardRow) -> str:
    """Why ``row`` cannot be ranked with the group ``ref`` belongs to, most specific first."""
    if row.composite is None:
        return "no composite"
    if row.profile != ref.profile:
        return f"profile {row.profile} (ranked: {ref.profile})"
    if row.composite_rule != ref.composite_rule:
        return f"composite rule {row.composite_rule} (ranked: {ref.composite_rule})"
    mine, theirs = set(row.metric_set.split(",")) - {""}, set(ref.metric_set.split(",")) - {""}
    extra, lacking = sorted(mine - theirs), sorted(theirs - mine)
    parts = ([f"has {', '.join(extra)}"] if extra else []) + ([f"lacks {', '.join(lacking)}"] if lacking else [])
    return "different available metrics: " + "; ".join(parts)


def split_groups(rows: Sequence[BoardRow], keys: Mapping[str, RankKey] | None = None,
                 ) -> list[tuple[list[BoardRow], list[BoardRow]]]:
    """Per dataset (sha256 + entries), in order of first appearance: (ranked group, set apart), by each
    dataset's key in ``keys`` (by sha256; the composite where none is given)."""
    datasets: dict[tuple[str, str], list[BoardRow]] = {}
    for row in rows:
        datasets.setdefault((row.dataset_sha256, row.entry_ids_sha256), []).append(row)
    out: list[tuple[list[BoardRow], list[BoardRow]]] = []
    for (sha, _), members in datasets.items():
        key = (keys or {}).get(sha, UNREGISTERED)
        if key.metric != COMPOSITE:  # a metric: every card with a value for it
            name = key.label
            out.append(([r for r in members if key_value(r, key) is not None],
                        [_apart(r, f"no {name}") for r in members if key_value(r, key) is None]))
            continue
        groups: dict[tuple[str, ...], list[BoardRow]] = {}
        for row in members:
            if row.composite is not None and key.profile in (None, row.profile):
                groups.setdefault(comparability_key(row), []).append(row)
        if not groups:
            out.append(([], [_apart(r, "no composite" if r.composite is None or key.profile is None
                                    else f"profile {r.profile} (ranked: {key.profile})") for r in members]))
            continue
        # the largest group; equal sizes: the one holding the best composite, then the key (deterministic)
        chosen = max(groups, key=lambda k: (len(groups[k]), max(r.composite or 0.0 for r in groups[k]), k))
        ranked = groups[chosen]
        apart = [_apart(r, _reason(r, ranked[0]))
                 for r in members if comparability_key(r) != chosen or r.composite is None]  # fmt: skip
        out.append((ranked, apart))
    return out


def _apart(row: BoardRow, reason: str) -> BoardRow:
    row.rank, row.unranked_reason = None, reason
    return row


def rank(session: Session, rows: Sequence[BoardRow], *, n_resamples: int = N_RESAMPLES,
         keys: Mapping[str, RankKey] | None = None) -> list[RankedBoard]:
    """Rank ``rows`` (already filtered) into boards with significance clusters, each dataset by its key
    (``keys`` by sha256; default: the store's, ``rank_key.keys_for``); sovereign cards that a published signed
    ranking places form their own board after their dataset's (``signed_boards``)."""
    signed, rows = signed_boards(session, rows)
    tested = with_statistics(session, [r.run_card_hash for r in rows])
    keys = keys if keys is not None else keys_for(session, {r.dataset_sha256 for r in rows})
    boards = []
    for ranked, apart in split_groups(rows, keys):
        if len(ranked) > 1 and any(r.run_card_hash not in tested for r in ranked):
            apart = [*apart, *(_apart(r, "no per-entry statistics stored with it (a sovereign card, or one older "
                                  "than statistics sidecars): not tested against others")
                               for r in ranked if r.run_card_hash not in tested)]  # fmt: skip
            ranked = [r for r in ranked if r.run_card_hash in tested]
        first = ranked[0] if ranked else apart[0]
        key = keys.get(first.dataset_sha256, UNREGISTERED)
        ordered = sorted(ranked, key=by_key(key))
        tests = adjacent_tests(session, ordered, n_resamples=n_resamples, metric=key.metric) if len(ordered) > 1 \
            else []
        assign_ranks(ordered, [t.significant for t in tests])
        boards.append(RankedBoard(first.dataset_id, first.dataset_sha256, ordered, tests, apart, key=key))
    for board in signed:  # after the last board of the same dataset, else at the end
        at = max((i + 1 for i, b in enumerate(boards) if b.dataset_sha256 == board.dataset_sha256), default=len(boards))
        boards.insert(at, board)
    return boards


def signed_boards(session: Session, rows: Sequence[BoardRow]) -> tuple[list[RankedBoard], list[BoardRow]]:
    """The rows a published sovereign ranking places, one board per ranking with its signed rank ranges
    (best cluster first; within one, by composite then hash: that order is not evidence), and the other rows.

    Sovereign cards are compared among themselves only: the store holds no statistics to test them against a
    self-run card. Per dataset, entries and organisation the newest ranking counts; a card it does not name
    stays with the others (set apart: no per-entry statistics). The ranks are those among all the ranking's
    cards, also when filters show fewer of them."""
    by_hash = {r.run_card_hash: r for r in rows}
    if not by_hash:
        return [], list(rows)
    found = session.execute(select(SovereignRanking.id, SovereignRanking.dataset_sha256,
                                   SovereignRanking.entry_ids_sha256, SovereignRanking.organisation,
                                   SovereignRanking.ranking_sha256, SovereignRanking.key_id,
                                   SovereignRanking.published_at, SovereignRanking.document)
                            .where(SovereignRanking.dataset_sha256.in_({r.dataset_sha256 for r in rows}))
                            .order_by(SovereignRanking.id)).all()  # fmt: skip
    newest = {(f.dataset_sha256, f.entry_ids_sha256, f.organisation): f for f in found}  # the last id wins
    places = session.execute(select(SovereignRank.ranking_id, Card.run_card_hash, SovereignRank.cluster,
                                    SovereignRank.rank)
                             .join(Card, Card.id == SovereignRank.card_id)
                             .where(SovereignRank.ranking_id.in_([f.id for f in newest.values()]),
                                    Card.run_card_hash.in_(list(by_hash)))).all()  # fmt: skip
    members: dict[int, list[tuple[int, BoardRow]]] = {}
    for ranking_id, digest, cluster, label in places:
        by_hash[digest].rank, by_hash[digest].unranked_reason = label, None
        members.setdefault(ranking_id, []).append((cluster, by_hash[digest]))
    boards = []
    for f in newest.values():
        if f.id not in members:
            continue
        ordered = [r for _, r in sorted(members[f.id], key=lambda m: (m[0], -(m[1].composite or 0.0),
                                                                        m[1].run_card_hash))]  # fmt: skip
        signed = SignedClusters(f.organisation, f.ranking_sha256, f.key_id, int(as_card(f.document)["systems"]),
                                utc(f.published_at))
        boards.append(RankedBoard(ordered[0].dataset_id, f.dataset_sha256, ordered, [], [], signed))
    taken = {r.run_card_hash for b in boards for r in b.rows}
    return boards, [r for r in rows if r.run_card_hash not in taken]


def assign_ranks(ordered: Sequence[BoardRow], breaks: Sequence[bool]) -> None:
    """Rank ranges from the significant steps: ``breaks[i]`` separates ``ordered[i]`` and ``ordered[i+1]``."""
    for row, (_, label) in zip(ordered, clusters(len(ordered), breaks), strict=True):
        row.rank = label


def clusters(n: int, breaks: Sequence[bool]) -> list[tuple[int, str]]:
    """(cluster number from 1, rank range) of each of ``n`` systems in composite order, from the
    significant steps between neighbours (``breaks[i]`` separates systems ``i`` and ``i + 1``)."""
    out: list[tuple[int, str]] = []
    start = 0
    for i in range(n):
        if i == n - 1 or breaks[i]:
            label = str(start + 1) if i == start else f"{start + 1}–{i + 1}"
            out += [(len({c for c, _ in out}) + 1, label)] * (i + 1 - start)
            start = i + 1
    return out


def adjacent_tests(session: Session, ordered: Sequence[BoardRow], *, n_resamples: int,
                   metric: str = COMPOSITE) -> list[AdjacentTest]:
    """Paired bootstrap on ``metric`` between neighbours, from the stored statistics; Holm across them."""
    from mt_eval.runcard.statistics import decode

    cards, blobs = load_cards(session, [r.run_card_hash for r in ordered])
    stored = {h: decode(blobs[h], cards[h]["statistics"]) for h in cards}
    return paired_tests([r.run_card_hash for r in ordered], cards, stored, n_resamples=n_resamples, metric=metric)


def paired_tests(ordered: Sequence[str], cards: Mapping[str, Mapping[str, Any]],
                 stored: Mapping[str, StoredStatistics], *, n_resamples: int,
                 metric: str = COMPOSITE) -> list[AdjacentTest]:
    """The tests of ``adjacent_tests`` between the cards named by ``ordered`` (hashes, best first by
    ``metric``), given each card and its per-entry statistics: the store's sidecars, or the statistics the
    governance machine rebuilds from a sovereign run's full card (``sovereign.ranking``)."""
    from mt_eval.comparison import compare
    from mt_eval.stats import holm

    raw = []
    for a, b in pairwise(ordered):
        pair = [cards[a], cards[b]] if metric == COMPOSITE else metric_only(cards[a], cards[b])
        result = compare(pair, statistics=[stored[a], stored[b]], metrics=[metric], n_resamples=n_resamples,
                         alpha=ALPHA, correction="none", names=[a[:12], b[:12]], sources=[a, b])  # fmt: skip
        test = next(p for p in result.paired if p.metric == metric)
        raw.append((a, b, test.score_a - test.score_b, test.p_value))
    adjusted = holm([p for *_, p in raw], ALPHA) if raw else []
    return [AdjacentTest(a, b, delta, p, adj, significant, metric)
            for (a, b, delta, p), (adj, significant) in zip(raw, adjusted, strict=True)]  # fmt: skip


def metric_only(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The two cards as ``compare`` must see them to test one metric: ``b`` under ``a``'s profile and
    composite rule. ``compare`` refuses different profiles or rules because it also computes the composite;
    a metric's statistics and its aggregate do not depend on either, and no composite is asked for."""
    same = {k: a[k] for k in ("profile", "composite_rule") if k in a}
    out = [dict(a), {**{k: v for k, v in b.items() if k != "composite_rule"}, **same}]
    for card in out:
        card.pop("calibrated_profile", None)
    return out


def with_statistics(session: Session, hashes: Sequence[str]) -> set[str]:
    """The cards among ``hashes`` whose statistics the store holds and whose JSON references them (the
    reference says which metrics the bytes hold): a sovereign card has none, a card written before statistics
    sidecars no reference. Two JSON fields read, never the whole card."""
    stmt = (select(Card.run_card_hash, Card.card["statistics"]["sha256"])
            .join(CardStatistics, CardStatistics.card_id == Card.id)
            .where(Card.run_card_hash.in_(list(hashes))))  # fmt: skip
    return {digest for digest, ref in session.execute(stmt) if ref is not None}


def load_cards(session: Session, hashes: Sequence[str]) -> tuple[dict[str, dict[str, Any]], dict[str, bytes]]:
    """Each card's JSON and its statistics bytes, in one query."""
    stmt = (select(Card.run_card_hash, Card.card, CardStatistics.data)
            .join(CardStatistics, CardStatistics.card_id == Card.id)
            .where(Card.run_card_hash.in_(list(hashes))))  # fmt: skip
    cards: dict[str, dict[str, Any]] = {}
    blobs: dict[str, bytes] = {}
    for digest, card, data in session.execute(stmt):
        cards[digest], blobs[digest] = as_card(card), bytes(data)
    return cards, blobs


def as_card(card: Mapping[str, Any] | str) -> dict[str, Any]:
    import json

    return json.loads(card) if isinstance(card, str) else dict(card)

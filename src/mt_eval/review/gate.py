"""The validation gate (Benchmark Spec §5, §7.2): has community review accepted a card's method?

A card is **accepted** when, over every campaign that shows its outputs, counting only reviewers who
pass quality control (``quality``), whose conduct raises no flag (``conduct``) and who stand as members of
the community (``standing``: invited by an admin, a verified identity of their own, not a submitter of a
card in the campaign), and only real outputs (never controls):

1. at least ``MIN_REVIEWERS`` (3) distinct reviewers (distinct verified identities) rated its outputs — one
   person is not a community;
2. at least ``MIN_ENTRIES`` (30) entries were rated — an interval on fewer says little;
3. the mean rating (per entry, the mean over its reviewers; then the mean over entries) is at least
   ``ACCEPTABLE`` (2.0, "acceptable: correct with minor issues");
4. the lower bound of its 95 % bootstrap interval (entries resampled, 1,000 times) is at least
   ``LOWER_BOUND`` (1.5, halfway between gist and acceptable): the mean is not acceptable by luck;
5. at most ``MAX_REJECT_SHARE`` (10 %) of entries have a mean below 1 (reviewers call them reject):
   a method that fails one sentence in five is not deployable however good the rest.

Agreement (α, AC2) is reported but not a condition: skewed ratings make α collapse on good methods.
The result is a record of its own; the card never changes (docs/decisions.md §20).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.review.campaign import OUTPUT
from mt_eval.review.proportions import wilson_interval
from mt_eval.review.ratings import counted_ratings
from mt_eval.stats.bootstrap import percentile_interval, resample_counts
from mt_eval.store.db import Store
from mt_eval.store.models import Card, ReviewItem

MIN_REVIEWERS = 3
MIN_ENTRIES = 30
ACCEPTABLE = 2.0
LOWER_BOUND = 1.5
MAX_REJECT_SHARE = 0.10
REJECT_BELOW = 1.0
N_RESAMPLES = 1000
SEED = 12345


@dataclass(frozen=True)
class ReviewVerdict:
    """Whether review accepted a card, and the evidence."""

    run_card_hash: str
    accepted: bool
    reviewers: int
    entries: int
    mean: float | None
    ci_lower: float | None
    ci_upper: float | None
    reject_share: float | None
    reasons: list[str]  # why not accepted (empty when accepted)
    # 95 % Wilson interval of the reject share (``proportions``): how sure the 10 % rule's input is
    reject_lower: float | None = None
    reject_upper: float | None = None


def judge(run_card_hash: str, entry_means: Sequence[float], reviewers: int) -> ReviewVerdict:
    """The verdict from per-entry mean ratings and the number of reviewers behind them."""
    values = np.asarray(entry_means, dtype=np.float64)
    reasons = []
    if reviewers < MIN_REVIEWERS:
        reasons.append(f"{reviewers} reviewer(s) passed quality control (needs {MIN_REVIEWERS})")
    if len(values) < MIN_ENTRIES:
        reasons.append(f"{len(values)} entries rated (needs {MIN_ENTRIES})")
    if not len(values):
        return ReviewVerdict(run_card_hash, False, reviewers, 0, None, None, None, None, reasons)
    mean = float(values.mean())
    lower, upper = (percentile_interval(resample_counts(len(values), N_RESAMPLES, SEED) @ values / len(values))
                    if len(values) > 1 else (mean, mean))
    rejected = int(np.sum(values < REJECT_BELOW))
    rejects = rejected / len(values)
    reject_ci = wilson_interval(rejected, len(values))
    if mean < ACCEPTABLE:
        reasons.append(f"mean rating {mean:.2f} is below acceptable ({ACCEPTABLE:g})")
    if lower < LOWER_BOUND:
        reasons.append(f"the interval's lower bound {lower:.2f} is below {LOWER_BOUND:g}")
    if rejects > MAX_REJECT_SHARE:
        reasons.append(f"{rejects:.0%} of entries rated reject (at most {MAX_REJECT_SHARE:.0%})")
    return ReviewVerdict(run_card_hash, not reasons, reviewers, len(values), mean, lower, upper, rejects, reasons,
                         *reject_ci)


def review_verdicts(store: Store, run_card_hashes: Sequence[str]) -> dict[str, ReviewVerdict]:
    """The verdict for each card hash (a card never reviewed is simply not accepted)."""
    with store.session() as session:
        return verdicts_in(session, run_card_hashes)


def verdicts_in(session: Session, run_card_hashes: Sequence[str]) -> dict[str, ReviewVerdict]:
    """``review_verdicts`` inside an open session (the leaderboard query applies the gate in its own)."""
    wanted = list(dict.fromkeys(run_card_hashes))
    # keyed by entry alone: an entry rated in two campaigns is one entry with more ratings, not two
    per_entry: dict[str, dict[int, list[int]]] = {h: defaultdict(list) for h in wanted}
    people: dict[str, set[str]] = {h: set() for h in wanted}
    campaigns = session.scalars(select(ReviewItem.campaign_id).join(Card, Card.id == ReviewItem.card_id)
                                .where(Card.run_card_hash.in_(wanted)).distinct()).all()
    for campaign_id in campaigns:
        for r in counted_ratings(session, campaign_id):
            if r.kind == OUTPUT and r.card_hash in per_entry:
                per_entry[r.card_hash][r.entry_id].append(r.value)
                people[r.card_hash].add(r.reviewer)
    return {h: judge(h, [float(np.mean(v)) for v in per_entry[h].values()], len(people[h])) for h in wanted}


def card_review(session: Session, run_card_hash: str) -> dict[str, Any] | None:
    """A card's verdict as its page shows it (``store.pages.load_card``'s ``review``), or None when no review
    covered it (no reviewer counted and no entry rated)."""
    verdict = verdicts_in(session, [run_card_hash])[run_card_hash]
    return asdict(verdict) if verdict.reviewers or verdict.entries else None


def review_verdict(store: Store, run_card_hash: str) -> ReviewVerdict:
    """Has community review accepted the card ``run_card_hash``? (the §7.2 gate; see the module doc)."""
    return review_verdicts(store, [run_card_hash])[run_card_hash]


def accepted_hashes(store: Store, run_card_hashes: Sequence[str]) -> set[str]:
    """The subset of ``run_card_hashes`` that review accepted: what ``effective_tier(..., reviewed=...)``
    needs for a whole leaderboard in one call."""
    with store.session() as session:
        return accepted_in(session, run_card_hashes)


def accepted_in(session: Session, run_card_hashes: Sequence[str]) -> set[str]:
    """``accepted_hashes`` inside an open session."""
    return {h for h, v in verdicts_in(session, run_card_hashes).items() if v.accepted}

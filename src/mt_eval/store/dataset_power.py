"""The dataset page's power line: what a dataset version's size can resolve on chrF++ (``stats.power``).

The variance comes from the first published card of the version that has per-entry statistics stored (its
sidecar, the bytes the ranking's paired tests read), with the two systems' correlation assumed
(``stats.power.DEFAULT_CORRELATION``): a community reads "differences under 2.0 chrF++ are often missed on
this test set" before it reads a leaderboard. Counts only: no entry's text is read, secret or not.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.store.models import Card, CardStatistics

METRIC = "chrf_plus_plus"  # the primary surface metric (Scoring Spec §2.1): every card has it
RESAMPLES = 1000


def dataset_power(session: Session, dataset_pk: int) -> dict[str, Any] | None:
    """The minimum detectable chrF++ difference for the version's entry count, or None without a card whose
    statistics the store holds (a sovereign card's, or one older than sidecars)."""
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import target_card
    from mt_eval.runcard.statistics import SidecarError, decode
    from mt_eval.stats.power import minimum_detectable_difference
    from mt_eval.store.ranking import as_card

    row = session.execute(select(Card.run_card_hash, Card.card, CardStatistics.data)
                          .join(CardStatistics, CardStatistics.card_id == Card.id)
                          .where(Card.dataset_pk == dataset_pk).order_by(Card.id).limit(1)).first()  # fmt: skip
    if row is None:
        return None
    digest, raw, data = row
    card = as_card(raw)
    if not isinstance(card.get("statistics"), dict):
        return None
    try:
        stored = decode(bytes(data), card["statistics"])
    except SidecarError:
        return None
    metrics = metrics_for(target_card(card), [METRIC])
    if not metrics or METRIC not in stored.stats or len(stored.entry_ids) < 2:
        return None
    metric = metrics[0]
    metric.bind(target_card(card))
    result = minimum_detectable_difference(stored.stats[METRIC], metric.aggregate, n_resamples=RESAMPLES)
    return {"metric": METRIC, "mdd": result.mdd, "alpha": result.alpha, "power": result.power,
            "correlation": result.correlation, "entries": result.n_entries, "baseline": str(digest)[:12],
            "baseline_score": result.baseline_score}

"""The disagreement lens of the web's compare page: where the automated score and people disagree.

Here, beside the ratings it reads, rather than in ``store.pages``: the store sits below ``review`` (review reads
the store), so a store module reading review's ratings was a package cycle (docs/decisions.md, issue 23).
"""

from __future__ import annotations

from collections.abc import Mapping
from statistics import median
from typing import Any

from sqlalchemy import select

from mt_eval.corpus.models import is_secret
from mt_eval.review.campaign import OUTPUT
from mt_eval.review.ratings import included, load_ratings
from mt_eval.store.db import Store
from mt_eval.store.models import Card, ReviewItem

LENS_HIGH = 50.0  # per-entry chrF++ at or above which the metrics call an output good…
LENS_LOW = 35.0  # …and below which they call it poor
LENS_ROWS = 20


def human_lens(store: Store, cards: Mapping[str, Mapping[str, Any]], n: int = LENS_ROWS) -> dict[str, Any]:
    """Where the automated score and people disagree, for the cards ``cards`` (hash → card): public entries
    whose per-entry chrF++ is high (≥ ``LENS_HIGH``) but whose median human rating is reject, and the
    reverse (chrF++ < ``LENS_LOW``, median acceptable or better). Ratings come from every campaign that
    rated these cards, from the reviewers who pass its quality control (``review.ratings.included``)."""
    wanted = set(cards)
    values: dict[tuple[str, int], list[int]] = {}
    with store.session() as session:
        campaigns = session.scalars(select(ReviewItem.campaign_id).distinct().join(Card, Card.id == ReviewItem.card_id)
                                    .where(Card.run_card_hash.in_(list(wanted)))).all()
        for campaign_id in campaigns:
            for r in included(load_ratings(session, campaign_id)):
                if r.kind == OUTPUT and r.card_hash in wanted:
                    values.setdefault((r.card_hash, r.entry_id), []).append(r.value)
    by_entry = {run: {r.get("entry_id"): r for r in card.get("results") or [] if isinstance(r, Mapping)}
                for run, card in cards.items()}
    rows: list[dict[str, Any]] = []
    for (run, entry_id), rated in values.items():
        result = by_entry[run].get(entry_id)
        chrf = result.get("entry_chrf") if result else None
        if result is None or is_secret(result) or not isinstance(chrf, int | float):
            continue
        human = float(median(rated))
        kind = "metric high, human reject" if chrf >= LENS_HIGH and human <= 0 else (
            "metric low, human acceptable" if chrf < LENS_LOW and human >= 2 else None)
        if kind:
            rows.append({"kind": kind, "run": run, "system": str((cards[run].get("method") or {}).get("name", "")),
                         "entry_id": entry_id, "entry_chrf": float(chrf), "human_median": human,
                         "ratings": len(rated), "source": result.get("source"),
                         "reference": result.get("reference"), "predicted": result.get("predicted")})
    rows.sort(key=lambda r: (-abs(float(r["entry_chrf"]) / 100 - float(r["human_median"]) / 3),
                             int(r["entry_id"]), str(r["run"])))  # the widest gap first
    rated_entries = len(values)
    return {"thresholds": {"high": LENS_HIGH, "low": LENS_LOW}, "rated": rated_entries, "rows": rows[:n]}

"""What the admin's review pages read from the store: the cards a campaign may be made from, whether
secret-segment entries may be reviewed here, and the campaigns. No web framework here.

**Secret segments in review.** A campaign's items carry their texts and reviewers see them, so the web
refuses a campaign over cards with gold_standard or held_out entries unless the store's operator
declared it a governance store (``store_settings``: ``review_secret_segments`` = ``allow``), whose
reviewers are vetted people of the governance organisation (Benchmark Spec §8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import select

from mt_eval.corpus.models import is_secret
from mt_eval.store.db import Store
from mt_eval.store.models import Card, Dataset, ReviewCampaign, StoreSetting

SECRET_REVIEW_SETTING = "review_secret_segments"


def review_choices(store: Store) -> list[dict[str, Any]]:
    """Published cards an admin may put into a campaign, by dataset then composite."""
    with store.session() as session:
        rows = session.execute(select(Card.run_card_hash, Card.method_name, Card.composite, Card.quality_tier,
                                      Dataset.dataset_id, Card.dataset_sha256).join(Dataset)
                               .order_by(Dataset.dataset_id, Card.composite.desc())).all()
    return [{"run_card_hash": h, "method": m, "composite": c, "tier": t, "dataset": d, "dataset_sha256": s}
            for h, m, c, t, d, s in rows]  # fmt: skip


def secret_review_allowed(store: Store) -> bool:
    """Whether this store lets review campaigns include gold_standard/held_out entries: only a store whose
    operator declared it a governance store (``store_settings``: review_secret_segments = allow)."""
    with store.session() as session:
        value = session.scalar(select(StoreSetting.value).where(StoreSetting.name == SECRET_REVIEW_SETTING))
    return value == "allow"


def secret_entry_count(store: Store, hashes: Sequence[str]) -> int:
    """How many entries of the cards ``hashes`` are in a secret segment."""
    with store.session() as session:
        cards = session.scalars(select(Card.card).where(Card.run_card_hash.in_(list(hashes)))).all()
    results: list[Any] = [r for card in cards for r in card.get("results") or []]  # type: ignore[attr-defined]
    return sum(1 for r in results if isinstance(r, Mapping) and is_secret(r))


def campaign_list(store: Store) -> list[dict[str, Any]]:
    """Every review campaign, newest first (the admin's page)."""
    with store.session() as session:
        rows = session.execute(select(ReviewCampaign.name, ReviewCampaign.uid, ReviewCampaign.created_at,
                                      ReviewCampaign.target_language, ReviewCampaign.settings)
                               .order_by(ReviewCampaign.created_at.desc())).all()
    rows_: Any = rows  # settings is JSON: a dict whose "cards" is a list
    return [{"name": n, "uid": u, "created_at": c, "target_language": t, "cards": len(s.get("cards") or [])}
            for n, u, c, t, s in rows_]  # fmt: skip

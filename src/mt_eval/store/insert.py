"""Inserting a card into the store, without checking it: ``publish`` calls it with the card the store
recomputed (``store/recompute.py``), ``rescore`` with a rebuilt card, ``store/sovereign.py`` with a public
sovereign card, and the benchmark with synthetic cards. Everything that trusts a card is the caller's.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from mt_eval.catalog.cutoffs import release_month, training_cutoff
from mt_eval.corpus.models import is_secret
from mt_eval.runcard.signing import SignatureCheck
from mt_eval.runcard.statistics import sha256_bytes
from mt_eval.scoring.calibrated import card_profile
from mt_eval.scoring.composite import composite_rule
from mt_eval.scoring.economics import ranked_figures
from mt_eval.store.models import Card, CardMetric, CardSignature, CardStatistics, Dataset, EntryResult

SELF_BENCHMARKED = "self-benchmarked"


def add_signatures(session: Session, card_id: int, checks: Sequence[SignatureCheck]) -> None:
    """Keep the card's valid signatures (``card_signatures``), each key once."""
    have = set(session.scalars(select(CardSignature.key_id).where(CardSignature.card_id == card_id)))
    session.add_all(CardSignature(card_id=card_id, key_id=c.signature.key_id, signer=c.signature.signer,
                                  public_key=c.signature.public_key, signature=c.signature.signature,
                                  signed_at=c.signature.signed_time())
                    for c in checks if c.signature.key_id not in have)  # fmt: skip


def _number(value: Any) -> float | None:
    """A finite float, or None (JSON null, NaN and infinities are not sortable values)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _dataset(session: Session, ds: Mapping[str, Any]) -> Dataset:
    found = session.scalar(select(Dataset).where(Dataset.sha256 == ds["sha256"],
                                                 Dataset.entry_ids_sha256 == ds["entry_ids_sha256"]))  # fmt: skip
    if found is None:
        found = Dataset(dataset_id=str(ds["id"]), version=str(ds.get("version", "")), sha256=str(ds["sha256"]),
                        entry_ids_sha256=str(ds["entry_ids_sha256"]), language_pair=str(ds.get("language_pair", "")),
                        entry_count=int(ds["entry_count"]))  # fmt: skip
        session.add(found)
        session.flush()
    return found


def available_metrics(card: Mapping[str, Any]) -> list[str]:
    """The card's metrics that have a value (Scoring Spec §4.1: what its composite could use)."""
    scores = card["scores"]
    return sorted(m for m in card.get("metrics", {}) if _number(scores.get(m)) is not None)


def insert_card(
    session: Session,
    card: Mapping[str, Any],
    statistics: bytes | None,
    *,
    submitter: str | None = None,
    published_at: datetime | None = None,
    verification_tier: str = SELF_BENCHMARKED,
    entries: bool = True,
) -> Card:
    """Insert one card (not verified here) with its metrics, entries and statistics bytes.

    A sovereign card (``store/sovereign.py``) comes with neither: ``entries=False`` and ``statistics=None``
    (its per-entry texts and statistics stay with the governance organisation)."""
    scores, ds = card["scores"], card["dataset"]
    cis = scores.get("confidence_intervals") or {}
    composite_ci = cis.get("composite") or {}
    row = Card(
        run_card_hash=str(card["run_card_hash"]), run_id=str(card["run_id"]), dataset=_dataset(session, ds),
        dataset_sha256=str(ds["sha256"]), entry_ids_sha256=str(ds["entry_ids_sha256"]),
        profile=card_profile(card), composite_rule=composite_rule(card),
        metric_set=",".join(available_metrics(card)), method_name=str(card["method"]["name"]),
        method_class=str(card["method_class"]), model_slug=str(card["model_slug"]), condition=str(card["condition"]),
        composite=_number(scores.get("composite")), composite_ci_lower=_number(composite_ci.get("ci_lower")),
        composite_ci_upper=_number(composite_ci.get("ci_upper")),
        quality_tier=str(scores.get("quality_tier", "")), verification_tier=verification_tier, submitter=submitter,
        published_at=published_at or datetime.now(UTC), card=dict(card),
        **ranked_figures(card),  # cost_adjusted, cost_per_entry, avg_latency: measured only (scoring/economics.py)
        training_cutoff=training_cutoff(card), test_released=release_month(card),  # catalog/cutoffs.py
    )  # fmt: skip
    for metric, info in (card.get("metrics") or {}).items():
        value = _number(scores.get(metric))
        if value is None:
            continue
        ci = cis.get(metric) or {}
        row.metrics.append(CardMetric(metric=metric, value=value, ci_lower=_number(ci.get("ci_lower")),
                                      ci_upper=_number(ci.get("ci_upper")), weight=_number(info.get("weight")),
                                      higher_is_better=info.get("higher_is_better")))  # fmt: skip
    session.add(row)
    session.flush()
    if entries:  # drill-down and export rows: never a secret segment's output (it leaks the gold set)
        session.add_all(EntryResult(card_id=row.id, entry_id=int(r["entry_id"]), predicted=str(r.get("predicted", "")),
                                    error=r.get("error"), values=_entry_values(r))
                        for r in card["results"] if not is_secret(r))  # fmt: skip
    if statistics is not None:
        session.add(CardStatistics(card_id=row.id, sha256=sha256_bytes(statistics), data=statistics))
    return row


def _entry_values(result: Mapping[str, Any]) -> dict[str, Any]:
    """The per-entry metric values worth drilling into, without nulls (compact)."""
    values = {k: v for k, v in (result.get("metrics") or {}).items() if v is not None}
    if result.get("entry_chrf") is not None:
        values.setdefault("entry_chrf", result["entry_chrf"])
    values["exact_match"] = bool(result.get("exact_match"))
    return values

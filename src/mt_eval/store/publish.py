"""Publishing: verify each card as ``mt-eval verify`` does, then insert all of them in one transaction.

A store is only as trustworthy as what goes in, so ``publish`` re-runs ``verify_card`` on every card
(seal, fingerprint, every derivable score, the statistics sidecar) and refuses the whole batch,
writing nothing, when one fails. A card already there (same ``run_card_hash``) is skipped: a replay
changes nothing. ``insert_card`` is the insertion itself, without verification, for callers that
have already verified (``publish``) or deliberately insert synthetic cards (the benchmark).

Signatures (``<card>.sig``, ``runcard/signing.py``) are checked on the way in: an invalid one refuses
the card whether or not the store requires signatures (a forged signature is never silently dropped);
when the store requires them (``store/keys.py``), a card needs a valid signature by a registered,
unrevoked key, and ``--submitter`` must be that key's submitter. Valid signatures are kept in
``card_signatures``; without ``--submitter`` the card's submitter is the registered owner of its key.

A card that scored opt-in metrics needing something only the publisher can give (generated judges: their
judge cards; ``comet_score``: its checkpoint) is verified with what ``publish`` is given (``judges``,
``comet``), exactly as ``mt-eval verify --judge/--comet-model``; without them it is refused with verify's own
line naming the judge or checkpoint, never inserted unchecked. ``semantic_score`` needs nothing given: the
card names its embedding backend.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from mt_eval.corpus.models import is_secret
from mt_eval.errors import UserError
from mt_eval.runcard.io import migrate, read_card_json
from mt_eval.runcard.signing import SignatureCheck, check_card_signatures
from mt_eval.runcard.statistics import SidecarError, sha256_bytes, sidecar_path
from mt_eval.scoring.calibrated import card_profile
from mt_eval.scoring.composite import composite_rule
from mt_eval.store.db import Store, StoreError
from mt_eval.store.keys import accept, signatures_required
from mt_eval.store.models import Card, CardMetric, CardSignature, CardStatistics, Dataset, EntryResult

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric

SELF_BENCHMARKED = "self-benchmarked"
CARD_KEYS = ("run_card_hash", "results", "scores", "dataset", "method")


class CardRefused(UserError):
    """A card that does not verify: refused, nothing written (exit 1, like a failing ``verify``)."""

    exit_code = 1


@dataclass(frozen=True)
class PendingCard:
    """A card read from disk and verified, with its sidecar's bytes and its signatures (all valid)."""

    path: str
    card: dict[str, Any]
    statistics: bytes
    signatures: tuple[SignatureCheck, ...] = ()


@dataclass(frozen=True)
class PublishResult:
    """What one ``publish`` did with each card: ``inserted`` or ``already published``; ``signed_by``:
    the submitters whose registered, unrevoked keys signed it."""

    path: str
    run_card_hash: str
    status: str
    signed_by: tuple[str, ...] = ()


def read_for_publish(path: str | Path, judges: Sequence[JudgeMetric] = (),
                     comet: CometConfig | None = None) -> PendingCard:
    """The card at ``path``, checked: a run card of a known schema (else ``UserError``, exit 2), that
    verifies with its sidecar (else ``CardRefused`` naming the first differing field, exit 1).

    ``judges`` and ``comet``: the judge cards and COMET checkpoint that recompute what the card recorded
    (``runcard.judges.require_judges``, ``runcard.rescore.require_comet``); a card that needs one not given
    is refused with verify's line."""
    from mt_eval.runcard.judges import card_judges, require_judges
    from mt_eval.runcard.rescore import require_comet
    from mt_eval.runcard.verify import verify_card  # heavy: metrics, sacrebleu

    p = Path(path)
    data = read_card_json(p)
    missing = [k for k in CARD_KEYS if k not in data]
    if data.get("kind") not in (None, "mt") or missing:
        raise UserError(f"not a run card (no {', '.join(missing) or 'MT card kind'})", file=str(p))
    if isinstance(data.get("sovereign"), Mapping):
        raise UserError("a sovereign card cannot be re-scored from texts; publish it with its governance "
                        "signature: mt-eval governance publish CARD --db …", file=str(p))
    card = migrate(data, file=str(p))
    checks = check_card_signatures(p, card.get("run_card_hash"))  # cheap: a forged signature is refused first
    for check in checks:
        if not check.valid:
            raise CardRefused(f"refused: signature by key {check.signature.key_id} is invalid ({check.problem})",
                              file=str(p))
    try:  # checked before verifying, so the line is verify's own (verify_card would say "cannot be rescored")
        used, checkpoint = require_judges(card_judges(card), judges), require_comet(card, comet)
    except UserError as exc:
        raise CardRefused(f"refused: {exc.message}", file=str(p)) from None
    problems = verify_card(card, p, judges=used, comet=checkpoint)
    if problems:
        raise CardRefused(f"refused, does not verify: {problems[0]}", file=str(p))
    ref = card.get("statistics")
    if not isinstance(ref, Mapping):
        raise CardRefused("refused: the card stores no statistics (written before they were); rescore it", file=str(p))
    try:
        sidecar = sidecar_path(ref, p)
        blob = sidecar.read_bytes()
    except (SidecarError, OSError) as exc:
        raise CardRefused(f"refused: its statistics sidecar cannot be read ({exc})", file=str(p)) from None
    if sha256_bytes(blob) != ref.get("sha256"):
        raise CardRefused("refused: statistics.sha256 does not match the sidecar", file=str(p))
    return PendingCard(str(p), card, blob, tuple(checks))


def publish(store: Store, cards: Sequence[str | Path | PendingCard], *, submitter: str | None = None,
            judges: Sequence[JudgeMetric] = (), comet: CometConfig | None = None) -> list[PublishResult]:
    """Verify every card (paths are read and verified here, with ``judges`` and ``comet`` as in
    ``read_for_publish``; ``PendingCard``s already were), then insert the new ones in one transaction:
    all or nothing."""
    pending = [c if isinstance(c, PendingCard) else read_for_publish(c, judges, comet) for c in cards]
    now = datetime.now(UTC)
    try:
        return _insert_new(store, pending, submitter, now)
    except IntegrityError:  # another publisher inserted one of these cards between our check and insert
        raise StoreError("a card was published concurrently by someone else; nothing written, run again") from None


def _insert_new(store: Store, pending: Sequence[PendingCard], submitter: str | None,
                now: datetime) -> list[PublishResult]:
    """Insert the cards not yet in the store, in one transaction."""
    results: list[PublishResult] = []
    with store.session() as session:
        required = signatures_required(session)
        seen: set[str] = set()
        for item in pending:
            accepted, refused = accept(session, item.signatures, submitter=submitter, required=required)
            if refused is not None:  # raised inside the transaction: nothing of the batch is written
                raise CardRefused(f"refused: {refused}", file=item.path)
            digest = str(item.card["run_card_hash"])
            signed_by = tuple(accepted.submitters)
            found = session.scalar(select(Card.id).where(Card.run_card_hash == digest))
            if digest in seen or found is not None:
                if found is not None:  # signed since it was published: its new signatures are kept
                    add_signatures(session, found, item.signatures)
                results.append(PublishResult(item.path, digest, "already published", signed_by))
                continue
            seen.add(digest)
            owner = submitter or next(iter(signed_by), None)
            row = insert_card(session, item.card, item.statistics, submitter=owner, published_at=now)
            add_signatures(session, row.id, item.signatures)
            results.append(PublishResult(item.path, digest, "inserted", signed_by))
    return results


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
        composite_ci_upper=_number(composite_ci.get("ci_upper")), cost_adjusted=_number(scores.get("cost_adjusted")),
        quality_tier=str(scores.get("quality_tier", "")), verification_tier=verification_tier, submitter=submitter,
        published_at=published_at or datetime.now(UTC),
        cost_per_entry=_number((card.get("cost") or {}).get("cost_per_entry_usd")),
        avg_latency=_number(scores.get("avg_latency_seconds")), card=dict(card),
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

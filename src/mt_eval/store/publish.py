"""Publishing: every card is rescored against its registered dataset, then all are inserted in one transaction.

A store is only as trustworthy as what goes in, and a sealed card proves only that it agrees with itself
(issue 21: outputs scored against forged references, resealed, reached rank 1). So ``publish`` trusts a
card's outputs and its method's identity, nothing else: its dataset must be registered in the store
(``mt-eval dataset register``, ``store/datasets.py``; a card on a dataset that is not is refused), and the
store rebuilds the card from those outputs against the registered texts with its own metric versions
(``store/recompute.py``). The store keeps the submission itself when its rebuild gives exactly it, else
its own card, and records every submission (``card_submissions``: the submitted hash, the card kept, the
differences, one line each). A self-run card with entries of a secret segment (gold_standard, held_out)
is refused (Benchmark Spec §6.4/§9.5) unless the store is a governance store (the organisation's private
store, ``store/datasets.governance_store``); sovereign cards have their own path (``store/sovereign.py``).

Before that, each card is checked as far as it can be without the store (``read_for_publish``): a run card of
a known schema, within the model's bounds, whose seal holds (a card edited after sealing is refused naming
the first field ``verify`` finds changed), whose statistics sidecar, when it is beside the card, is the one
the card seals. The whole batch is refused, nothing written, when one card is. A card already there (by its
own hash or a submission's) is skipped: a replay changes nothing.

Signatures (``<card>.sig``, ``runcard/signing.py``) are checked on the way in: an invalid one refuses
the card whether or not the store requires signatures (a forged signature is never silently dropped);
when the store requires them (``store/keys.py``), a card needs a valid signature by a registered,
unrevoked key, and ``--submitter`` must be that key's submitter. Valid signatures are kept in
``card_signatures``; without ``--submitter`` the card's submitter is the registered owner of its key. A
signature signs the submission: when the store keeps its own card instead, ``card_submissions`` names it.

A card that scored opt-in metrics needing something only the publisher can give (generated judges: their
judge cards; ``comet_score``: its checkpoint) is rescored with what ``publish`` is given (``judges``,
``comet``), exactly as ``mt-eval verify --judge/--comet-model``; without them it is refused with verify's own
line naming the judge or checkpoint, never inserted unchecked. ``semantic_score`` needs nothing given: the
card names its embedding backend.

``insert_card`` (``store/insert.py``) is the insertion itself, unchecked, for callers that checked (``publish``,
``rescore``, ``store/sovereign.py``) or deliberately insert synthetic cards (the benchmark).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from mt_eval.errors import UserError
from mt_eval.runcard.io import migrate, read_card_json
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.signing import SignatureCheck, check_card_signatures
from mt_eval.runcard.statistics import SidecarError, sha256_bytes, sidecar_path
from mt_eval.store.dataset_models import CardSubmission
from mt_eval.store.datasets import RegisteredCorpus, governance_store, load_registered
from mt_eval.store.db import Store, StoreError
from mt_eval.store.insert import SELF_BENCHMARKED, add_signatures, available_metrics, insert_card
from mt_eval.store.keys import accept, signatures_required
from mt_eval.store.models import Card
from mt_eval.store.recompute import CardRefused, Recomputed, recompute

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric

__all__ = ["SELF_BENCHMARKED", "CardRefused", "PendingCard", "PublishResult", "add_signatures", "available_metrics",
           "insert_card", "publish", "read_for_publish"]

CARD_KEYS = ("run_card_hash", "results", "scores", "dataset", "method")


@dataclass(frozen=True)
class PendingCard:
    """A card read from disk and checked (schema, seal, sidecar, signatures all valid), with the judges and
    COMET checkpoint that rescore its opt-in metrics."""

    path: str
    card: dict[str, Any]
    signatures: tuple[SignatureCheck, ...] = ()
    judges: tuple[JudgeMetric, ...] = ()
    comet: CometConfig | None = None


@dataclass(frozen=True)
class PublishResult:
    """What one ``publish`` did with each card: ``inserted`` or ``already published``. ``run_card_hash`` is
    the card the store keeps, ``submitted_hash`` the card given (the same unless ``recomputed``);
    ``differences``: one line each between the two; ``signed_by``: the submitters whose registered,
    unrevoked keys signed it."""

    path: str
    run_card_hash: str
    status: str
    signed_by: tuple[str, ...] = ()
    submitted_hash: str = ""
    recomputed: bool = False
    differences: tuple[str, ...] = ()


def read_for_publish(path: str | Path, judges: Sequence[JudgeMetric] = (),
                     comet: CometConfig | None = None) -> PendingCard:
    """The card at ``path``, checked without the store: a run card of a known schema (else ``UserError``,
    exit 2) within the model's bounds, sealed (an edited card: ``CardRefused`` naming the first field
    ``verify`` finds changed, exit 1), with its sidecar when one is beside it, valid signatures, and the
    judges and checkpoint its opt-in metrics need (``runcard.judges.require_judges``,
    ``runcard.rescore.require_comet``; one not given is refused with verify's line)."""
    from mt_eval.runcard.judges import card_judges, require_judges
    from mt_eval.runcard.rescore import require_comet

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
    try:  # checked before rescoring, so the line is verify's own
        used, checkpoint = require_judges(card_judges(card), judges), require_comet(card, comet)
    except UserError as exc:
        raise CardRefused(f"refused: {exc.message}", file=str(p)) from None
    _check_sealed(card, p, used, checkpoint)
    return PendingCard(str(p), card, tuple(checks), tuple(used), checkpoint)


def _check_sealed(card: dict[str, Any], path: Path, judges: Sequence[JudgeMetric], comet: CometConfig | None) -> None:
    """The card's schema and bounds, its seal and its sidecar (when beside it). The card's scores are not
    recomputed here (the store rescores them against its registered dataset); only a broken seal is
    explained by ``verify``, which names the field that was changed."""
    try:
        RunCard.model_validate(card)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise CardRefused(f"refused, does not verify: {'.'.join(str(x) for x in err['loc'])}: {err['msg']}",
                          file=str(path)) from None
    if card_hash(card) != card.get("run_card_hash"):
        from mt_eval.runcard.verify import verify_card  # heavy: metrics, sacrebleu

        problems = verify_card(card, path, judges=judges, comet=comet) or ["run_card_hash: changed after sealing"]
        raise CardRefused(f"refused, does not verify: {problems[0]}", file=str(path))
    ref = card.get("statistics")
    if not isinstance(ref, Mapping):
        return  # the store computes the statistics itself
    try:
        sidecar = sidecar_path(ref, path)
    except SidecarError as exc:
        raise CardRefused(f"refused: {exc}", file=str(path)) from None
    if sidecar.is_file() and sha256_bytes(sidecar.read_bytes()) != ref.get("sha256"):
        raise CardRefused("refused: statistics.sha256 does not match the sidecar", file=str(path))


def publish(store: Store, cards: Sequence[str | Path | PendingCard], *, submitter: str | None = None,
            judges: Sequence[JudgeMetric] = (), comet: CometConfig | None = None) -> list[PublishResult]:
    """Check every card (paths are read here, with ``judges`` and ``comet`` as in ``read_for_publish``;
    ``PendingCard``s already were), rescore each against its registered dataset, then insert the new ones in
    one transaction: all or nothing."""
    pending = [c if isinstance(c, PendingCard) else read_for_publish(c, judges, comet) for c in cards]
    prepared = _prepare(store, pending)  # the slow part, outside any write transaction
    now = datetime.now(UTC)
    try:
        return _insert_new(store, prepared, submitter, now)
    except IntegrityError:  # another publisher inserted one of these cards between our check and insert
        raise StoreError("a card was published concurrently by someone else; nothing written, run again") from None


def _stored_id(session: Session, digest: str) -> int | None:
    """The stored card for a card hash: the card itself, or the one kept for that submission."""
    found = session.scalar(select(Card.id).where(Card.run_card_hash == digest))
    if found is None:
        found = session.scalar(select(CardSubmission.card_id).where(CardSubmission.submitted_hash == digest))
    return found


def _prepare(store: Store, pending: Sequence[PendingCard]) -> list[tuple[PendingCard, Recomputed | None]]:
    """Each card with what the store keeps for it (None: already published), rescored against its registered
    dataset; ``CardRefused`` when its dataset is not registered or its entries are not the dataset's public ones."""
    known: set[str] = set()
    corpora: dict[str, RegisteredCorpus | None] = {}
    with store.session() as session:  # read only
        governance = governance_store(session)
        for item in pending:
            digest, sha = str(item.card["run_card_hash"]), str(item.card["dataset"]["sha256"])
            if _stored_id(session, digest) is not None:
                known.add(digest)
            elif sha not in corpora:
                corpora[sha] = load_registered(session, sha)
    out: list[tuple[PendingCard, Recomputed | None]] = []
    for item in pending:
        if str(item.card["run_card_hash"]) in known:
            out.append((item, None))
            continue
        ds = item.card["dataset"]
        corpus = corpora[str(ds["sha256"])]
        if corpus is None:
            raise CardRefused(f"refused: its dataset {ds.get('id')!r} (sha256 {str(ds['sha256'])[:12]}…) is not "
                              "registered in this store, so its references cannot be checked", file=item.path,
                              hint="register the corpus the card was scored on: mt-eval dataset register CORPUS --db …")
        out.append((item, recompute(item.card, corpus, judges=item.judges, comet=item.comet, path=item.path,
                                    allow_secret=governance)))
    return out


def _insert_new(store: Store, prepared: Sequence[tuple[PendingCard, Recomputed | None]], submitter: str | None,
                now: datetime) -> list[PublishResult]:
    """Insert the cards not yet in the store and record each submission, in one transaction."""
    results: list[PublishResult] = []
    with store.session() as session:
        required = signatures_required(session)
        batch: dict[str, int] = {}  # submitted or stored hash -> stored card id, within this batch
        for item, kept in prepared:
            accepted, refused = accept(session, item.signatures, submitter=submitter, required=required)
            if refused is not None:  # raised inside the transaction: nothing of the batch is written
                raise CardRefused(f"refused: {refused}", file=item.path)
            digest = str(item.card["run_card_hash"])
            signed_by = tuple(accepted.submitters)
            owner = submitter or next(iter(signed_by), None)
            stored = digest if kept is None else str(kept.card["run_card_hash"])
            found = batch.get(digest) or batch.get(stored) or _stored_id(session, digest) or _stored_id(session, stored)
            if found is not None:  # signed since it was published: its new signatures are kept
                add_signatures(session, found, item.signatures)
                if kept is not None and _stored_id(session, digest) is None:  # a new submission of a stored card
                    _record(session, digest, found, kept, owner, now)
                batch[digest] = found
                results.append(PublishResult(item.path, _hash_of(session, found), "already published", signed_by,
                                             digest, kept.recomputed if kept else False,
                                             kept.differences if kept else ()))  # fmt: skip
                continue
            assert kept is not None  # a card not in the store was rescored by _prepare
            row = insert_card(session, kept.card, kept.statistics, submitter=owner, published_at=now)
            add_signatures(session, row.id, item.signatures)
            _record(session, digest, row.id, kept, owner, now)
            batch[digest] = batch[stored] = row.id
            results.append(PublishResult(item.path, stored, "inserted", signed_by, digest, kept.recomputed,
                                         kept.differences))
    return results


def _record(session: Session, digest: str, card_id: int, kept: Recomputed, owner: str | None, now: datetime) -> None:
    session.add(CardSubmission(submitted_hash=digest, card_id=card_id, recomputed=kept.recomputed,
                               differences=list(kept.differences), submitter=owner, submitted_at=now))
    session.flush()


def _hash_of(session: Session, card_id: int) -> str:
    return str(session.scalar(select(Card.run_card_hash).where(Card.id == card_id)))



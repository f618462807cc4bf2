"""Registered datasets: the texts every published card is rescored against (issue 21; docs/decisions.md).

``register_dataset`` stores a corpus as ``corpus.loaders.load_corpus`` loaded it, once per dataset version:
its envelope, licence, attribution, the SHA-256 of the file (what run cards record as ``dataset.sha256``,
so a card finds its dataset by it) and every entry with its texts and metadata. The same content registered
again changes nothing; the same id and version with other content is refused (a new content is a new
version: cards already ranked on the old one must keep meaning what they meant).

A secret segment's entry (gold_standard, held_out: Benchmark Spec §2.3, §8) is kept with its id, segment and
difficulty only, never its texts: the store is public, those texts stay with the governance organisation.
``publish`` needs no more of it than to know the entry is secret (a self-run card over it is refused). Only a
governance store (its operator set ``review_secret_segments`` = ``allow``: the organisation's private store
where full cards are published and reviewed by vetted people) keeps those texts, and takes such cards.

``primary_metric`` is the dataset's ranking key on the leaderboard (default chrF++); ``set_primary_metric``
changes it without touching any card.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from mt_eval.corpus.models import SECRET_SEGMENTS, Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.runcard.seal import entry_ids_sha256
from mt_eval.store.dataset_models import DEFAULT_PRIMARY_METRIC, RegisteredDataset, RegisteredEntry
from mt_eval.store.db import Store, StoreError
from mt_eval.store.models import Card, StoreSetting
from mt_eval.store.review_pages import SECRET_REVIEW_SETTING

COMPOSITE = "composite"
PROFILE_PREFIX = "profile:"  # the composite of the cards scored under one calibrated profile
_PROFILE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_COLUMNS = ("id", "source", "reference", "segment", "difficulty", "register", "context")
_SECRET_DETAIL = ("provenance",)  # all a secret entry keeps beside its id, segment and difficulty
MIN_PREFIX = 8


@dataclass(frozen=True)
class DatasetSummary:
    """A registered dataset as ``dataset list``/``show`` print it (``cards``: published cards on it)."""

    dataset_id: str
    version: str
    sha256: str
    language_pair: str
    source_language: str
    target_language: str
    licence: str | None
    attribution: str | None
    entry_count: int
    secret_count: int
    primary_metric: str
    registered_at: datetime
    registered_by: str | None
    cards: int = 0


@dataclass(frozen=True)
class Registration:
    """What ``register_dataset`` did: ``registered`` or ``already registered``."""

    status: str
    dataset: DatasetSummary


@dataclass
class RegisteredCorpus:
    """A registered dataset loaded back: ``dataset`` holds its entries whose texts the store has (the public
    ones; a governance store's secret ones too), in the file's order, as a ``corpus.models.Dataset`` with the
    registered sha256; ``secret`` maps every secret entry's id to its segment."""

    summary: DatasetSummary
    dataset: Dataset
    secret: dict[int, str] = field(default_factory=dict)
    by_id: dict[int, Entry] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.by_id = {e.id: e for e in self.dataset.entries}


def check_primary_metric(metric: str) -> str:
    """``metric`` if it can rank a dataset: ``composite``, ``profile:ID`` (a calibrated profile's composite),
    or a metric this harness knows (built-in, opt-in or a generated judge's id); else ``UserError``."""
    from mt_eval.metrics.judges.cards import is_judge_id
    from mt_eval.metrics.registry import OPT_IN, available_metrics

    name = metric.strip()
    known = set(available_metrics()) | set(OPT_IN)
    if name == COMPOSITE or name in known or is_judge_id(name):
        return name
    if name.startswith(PROFILE_PREFIX) and _PROFILE_ID.fullmatch(name.removeprefix(PROFILE_PREFIX)):
        return name
    raise UserError(f"primary metric {metric!r}: not a metric this harness knows",
                    hint=f"give {COMPOSITE}, {PROFILE_PREFIX}<calibrated profile id> or one of "
                         f"{', '.join(sorted(known))}")


def _summary(row: RegisteredDataset, cards: int = 0) -> DatasetSummary:
    return DatasetSummary(row.dataset_id, row.version, row.sha256, row.language_pair, row.source_language,
                          row.target_language, row.licence, row.attribution, row.entry_count, row.secret_count,
                          row.primary_metric, row.registered_at, row.registered_by, cards)


def governance_store(session: Session) -> bool:
    """Whether the store's operator declared it a governance store (``review_secret_segments`` = ``allow``):
    the only kind that keeps secret segments' texts and takes cards over them."""
    value = session.scalar(select(StoreSetting.value).where(StoreSetting.name == SECRET_REVIEW_SETTING))
    return value == "allow"


def _entry_row(entry: Entry, position: int, keep_secret: bool) -> RegisteredEntry:
    secret = entry.segment.value in SECRET_SEGMENTS and not keep_secret
    dumped = entry.model_dump(mode="json", exclude=set(_COLUMNS))
    detail = {k: v for k, v in dumped.items() if k in _SECRET_DETAIL} if secret else dumped
    return RegisteredEntry(
        entry_id=entry.id, position=position, segment=entry.segment.value,
        source=None if secret else entry.source, reference=None if secret else entry.reference,
        difficulty=entry.difficulty, register=entry.register.value if entry.register else None,
        context=entry.context.value if entry.context else None, detail=detail)  # fmt: skip


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def register_dataset(store: Store, dataset: Dataset, *, primary_metric: str = DEFAULT_PRIMARY_METRIC,
                     registered_by: str | None = None) -> Registration:
    """Register ``dataset`` (a loaded corpus). The same file again: ``already registered`` (its primary
    metric unchanged: ``set_primary_metric`` changes it). Refused (``UserError``) when its id and version
    are registered with other content."""
    metric = check_primary_metric(primary_metric)
    info = dataset.info
    with store.session() as session:
        found = session.scalar(select(RegisteredDataset).where(RegisteredDataset.sha256 == dataset.sha256))
        if found is not None:
            return Registration("already registered", _summary(found))
        clash = session.scalar(select(RegisteredDataset).where(RegisteredDataset.dataset_id == info.id,
                                                               RegisteredDataset.version == info.version))
        if clash is not None:
            raise UserError(f"dataset {info.id} version {info.version} is already registered with other content "
                            f"(sha256 {clash.sha256[:12]}…, this file {dataset.sha256[:12]}…)",
                            file=dataset.path or None,
                            hint="a changed corpus is a new version: raise dataset.version in the file")
        secret = sum(e.segment.value in SECRET_SEGMENTS for e in dataset.entries)
        extra = info.model_extra or {}
        row = RegisteredDataset(
            dataset_id=info.id, version=info.version, sha256=dataset.sha256,
            entry_ids_sha256=entry_ids_sha256([e.id for e in dataset.entries]),
            language_pair=info.language_pair or f"{info.source_language.upper()}→{info.target_language.upper()}",
            source_language=info.source_language, target_language=info.target_language,
            licence=_text(info.license), attribution=_text(extra.get("attribution")),
            entry_count=len(dataset.entries), secret_count=secret, primary_metric=metric,
            info=info.model_dump(mode="json"), registered_by=registered_by,
            registered_at=datetime.now(UTC))  # fmt: skip
        keep = governance_store(session)
        row.entries.extend(_entry_row(e, i, keep) for i, e in enumerate(dataset.entries))
        session.add(row)
        try:
            session.flush()
        except IntegrityError:  # registered by someone else meanwhile: the transaction is rolled back
            raise StoreError(f"dataset {info.id} was registered concurrently; run again") from None
        return Registration("registered", _summary(row))


def find_dataset(session: Session, ref: str) -> RegisteredDataset:
    """The registered dataset ``ref`` names: its sha256 (or a prefix of 8+ hex digits), ``ID@VERSION``, or
    its id when one version is registered. ``UserError`` naming what matched otherwise."""
    wanted = ref.strip()
    if "@" in wanted:
        dataset_id, version = wanted.rsplit("@", 1)
        rows = list(session.scalars(select(RegisteredDataset).where(RegisteredDataset.dataset_id == dataset_id,
                                                                    RegisteredDataset.version == version)))
    else:
        rows = list(session.scalars(select(RegisteredDataset).where(RegisteredDataset.dataset_id == wanted)))
        if not rows and len(wanted) >= MIN_PREFIX and all(c in "0123456789abcdef" for c in wanted.lower()):
            stmt = select(RegisteredDataset).where(RegisteredDataset.sha256.startswith(wanted.lower(), autoescape=True))
            rows = list(session.scalars(stmt.limit(2)))
    if not rows:
        raise UserError(f"no registered dataset {ref!r}", hint="mt-eval dataset list shows them; register one "
                        "with: mt-eval dataset register CORPUS")
    if len(rows) > 1:
        versions = ", ".join(f"{r.dataset_id}@{r.version}" for r in rows)
        raise UserError(f"{ref!r} names several registered datasets ({versions}): give ID@VERSION or the sha256")
    return rows[0]


def _card_counts(session: Session, sha256s: Sequence[str]) -> dict[str, int]:
    stmt = (select(Card.dataset_sha256, func.count()).where(Card.dataset_sha256.in_(sha256s))
            .group_by(Card.dataset_sha256))  # fmt: skip
    return {str(sha): int(n) for sha, n in session.execute(stmt)}


def list_datasets(store: Store) -> list[DatasetSummary]:
    """Every registered dataset, by id and version, with how many cards are published on it."""
    with store.session() as session:
        rows = list(session.scalars(select(RegisteredDataset).order_by(RegisteredDataset.dataset_id,
                                                                       RegisteredDataset.version)))
        counts = _card_counts(session, [r.sha256 for r in rows]) if rows else {}
        return [_summary(r, counts.get(r.sha256, 0)) for r in rows]


def show_dataset(store: Store, ref: str) -> DatasetSummary:
    """One registered dataset (``find_dataset``'s ``ref``) with its card count."""
    with store.session() as session:
        row = find_dataset(session, ref)
        return _summary(row, _card_counts(session, [row.sha256]).get(row.sha256, 0))


def set_primary_metric(store: Store, ref: str, metric: str) -> DatasetSummary:
    """Change a dataset's ranking key; no card changes (the leaderboard reads the key when it ranks)."""
    name = check_primary_metric(metric)
    with store.session() as session:
        row = find_dataset(session, ref)
        row.primary_metric = name
        return _summary(row)


def primary_metrics(session: Session, sha256s: Sequence[str]) -> dict[str, str]:
    """The ranking key of each registered dataset among ``sha256s`` (cards' ``dataset_sha256``); a dataset
    not registered is absent (its cards are not ranked with registered ones)."""
    stmt = (select(RegisteredDataset.sha256, RegisteredDataset.primary_metric)
            .where(RegisteredDataset.sha256.in_(sha256s)))  # fmt: skip
    return {str(sha): str(metric) for sha, metric in session.execute(stmt)}


def load_registered(session: Session, sha256: str) -> RegisteredCorpus | None:
    """The registered dataset whose corpus file hashes to ``sha256``, loaded back (None: not registered)."""
    row = session.scalar(select(RegisteredDataset).where(RegisteredDataset.sha256 == sha256))
    if row is None:
        return None
    entries: list[Entry] = []
    secret: dict[int, str] = {}
    for e in session.scalars(select(RegisteredEntry).where(RegisteredEntry.dataset_pk == row.id)
                             .order_by(RegisteredEntry.position)):  # fmt: skip
        if e.segment in SECRET_SEGMENTS:
            secret[e.entry_id] = e.segment
        if e.source is None or e.reference is None:  # a secret entry registered in a public store
            continue
        entries.append(Entry.model_validate({**e.detail, "id": e.entry_id, "source": e.source,
                                             "reference": e.reference, "segment": e.segment,
                                             "difficulty": e.difficulty, "register": e.register,
                                             "context": e.context}))  # fmt: skip
    dataset = Dataset(info=DatasetInfo.model_validate(row.info), entries=entries, sha256=row.sha256)
    return RegisteredCorpus(_summary(row), dataset, secret)

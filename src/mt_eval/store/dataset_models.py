"""Tables of registered datasets and card submissions (migration 0008; ``store/datasets.py``, ``publish.py``).

Kept apart from ``models.py`` only for its length; they share its ``Base``. A card links to its registered
dataset by ``run_cards.dataset_sha256 = registered_datasets.sha256`` (both indexed), not by a foreign key:
cards published before 0008, and sovereign cards, have no registered dataset, and the link must not be
needed to read them.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column, relationship

from mt_eval.store.models import Base

DEFAULT_PRIMARY_METRIC = "chrf_plus_plus"
"""The ranking key a dataset gets when registered without one (docs/decisions.md: the number the field
reports, and the one the spec's own authors moved to)."""


class RegisteredDataset(Base):
    """A dataset version registered in the store: what every card on it is rescored against."""

    __tablename__ = "registered_datasets"
    __table_args__ = (UniqueConstraint("dataset_id", "version", name="uq_registered_datasets_id_version"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(100))
    sha256: Mapped[str] = mapped_column(String(64), unique=True)  # of the corpus file: cards' dataset.sha256
    entry_ids_sha256: Mapped[str] = mapped_column(String(64))  # every entry, in the file's order
    language_pair: Mapped[str] = mapped_column(String(100))
    source_language: Mapped[str] = mapped_column(String(50))
    target_language: Mapped[str] = mapped_column(String(50))
    licence: Mapped[str | None] = mapped_column(String(200))
    attribution: Mapped[str | None] = mapped_column(Text)
    entry_count: Mapped[int] = mapped_column(Integer)
    secret_count: Mapped[int] = mapped_column(Integer)  # gold_standard + held_out entries (texts not kept)
    primary_metric: Mapped[str] = mapped_column(String(100), default=DEFAULT_PRIMARY_METRIC)
    info: Mapped[dict[str, object]] = mapped_column(JSON)  # the corpus envelope as loaded (DatasetInfo)
    registered_by: Mapped[str | None] = mapped_column(String(200))
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    entries: Mapped[list[RegisteredEntry]] = relationship(
        order_by="RegisteredEntry.position", cascade="all, delete-orphan", passive_deletes=True)


class RegisteredEntry(Base):
    """One entry of a registered dataset. ``source``/``reference`` are null for a secret segment's entry;
    ``detail`` holds the rest of the entry (provenance, variants, every reference, notes...)."""

    __tablename__ = "registered_entries"

    dataset_pk: Mapped[int] = mapped_column(ForeignKey("registered_datasets.id", ondelete="CASCADE"),
                                            primary_key=True)
    entry_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    position: Mapped[int] = mapped_column(Integer)  # in the corpus file, from 0
    segment: Mapped[str] = mapped_column(String(30))
    source: Mapped[str | None] = mapped_column(Text)
    reference: Mapped[str | None] = mapped_column(Text)
    difficulty: Mapped[int] = mapped_column(Integer)
    register: Mapped[str | None] = mapped_column(String(50))
    context: Mapped[str | None] = mapped_column(String(50))
    detail: Mapped[dict[str, object]] = mapped_column(JSON)


class CardSubmission(Base):
    """A submitted card (by its own ``run_card_hash``) and the card the store keeps for it: the submission
    itself when the store's rescoring gives exactly it (``recomputed`` false), else the store's card; the
    ``differences`` are one line each (metric, dataset field, texts that differ from the registered ones)."""

    __tablename__ = "card_submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    submitted_hash: Mapped[str] = mapped_column(String(64), unique=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), index=True)
    recomputed: Mapped[bool] = mapped_column()
    differences: Mapped[list[str]] = mapped_column(JSON)
    submitter: Mapped[str | None] = mapped_column(String(200))
    submitted_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

"""Tables of the store (SQLAlchemy 2 declarative models); the schema itself is made by migrations.

A card is kept whole (``card``: JSON, JSONB on PostgreSQL) so that nothing is lost and a published
card can be exported or re-verified as it was; the columns beside it are copies of the fields the
leaderboard filters and sorts on, indexed, so a top-50 query never parses JSON. Metric values live
in ``card_metrics`` (one row per metric) rather than one column each, so that a metric added by a
plugin needs no migration and sorting by a metric is a join on a bound name, never a column name
taken from the command line.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    """Declarative base of the store's tables."""


class Dataset(Base):
    """One dataset as cards reference it: the same corpus file and the same entries."""

    __tablename__ = "datasets"
    __table_args__ = (UniqueConstraint("sha256", "entry_ids_sha256", name="uq_datasets_sha_entries"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    dataset_id: Mapped[str] = mapped_column(String(200), index=True)
    version: Mapped[str] = mapped_column(String(100))
    sha256: Mapped[str] = mapped_column(String(64), index=True)
    entry_ids_sha256: Mapped[str] = mapped_column(String(64))
    language_pair: Mapped[str] = mapped_column(String(100))
    entry_count: Mapped[int] = mapped_column(Integer)


class Card(Base):
    """A published run card: the whole card plus indexed copies of what is filtered and sorted on."""

    __tablename__ = "run_cards"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    run_card_hash: Mapped[str] = mapped_column(String(64), unique=True)
    run_id: Mapped[str] = mapped_column(String(100), index=True)
    dataset_pk: Mapped[int] = mapped_column(ForeignKey("datasets.id"), index=True)
    dataset_sha256: Mapped[str] = mapped_column(String(64), index=True)
    entry_ids_sha256: Mapped[str] = mapped_column(String(64))
    profile: Mapped[str] = mapped_column(String(64))  # "A", "B" or a calibrated profile's id
    composite_rule: Mapped[str] = mapped_column(String(32))
    metric_set: Mapped[str] = mapped_column(Text)
    method_name: Mapped[str] = mapped_column(String(300))
    method_class: Mapped[str] = mapped_column(String(100), index=True)
    model_slug: Mapped[str] = mapped_column(String(300))
    condition: Mapped[str] = mapped_column(String(300))
    composite: Mapped[float | None] = mapped_column(Float, index=True)
    composite_ci_lower: Mapped[float | None] = mapped_column(Float)
    composite_ci_upper: Mapped[float | None] = mapped_column(Float)
    cost_adjusted: Mapped[float | None] = mapped_column(Float, index=True)
    quality_tier: Mapped[str] = mapped_column(String(50), index=True)
    verification_tier: Mapped[str] = mapped_column(String(50), index=True)
    submitter: Mapped[str | None] = mapped_column(String(200))
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    cost_per_entry: Mapped[float | None] = mapped_column(Float, index=True)
    avg_latency: Mapped[float | None] = mapped_column(Float, index=True)
    # Contamination facts, YYYY-MM or null (migration 0010, catalog/cutoffs.py): leaderboard --clean-only.
    training_cutoff: Mapped[str | None] = mapped_column(String(7))
    test_released: Mapped[str | None] = mapped_column(String(7))
    card: Mapped[dict[str, object]] = mapped_column(JSONType)

    dataset: Mapped[Dataset] = relationship()
    metrics: Mapped[list[CardMetric]] = relationship(cascade="all, delete-orphan", passive_deletes=True)


Index("ix_run_cards_board", Card.dataset_sha256, Card.entry_ids_sha256, Card.composite)


class CardMetric(Base):
    """One metric's value on a card, with its interval and the composite weight it has there."""

    __tablename__ = "card_metrics"

    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True)
    metric: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[float | None] = mapped_column(Float)
    ci_lower: Mapped[float | None] = mapped_column(Float)
    ci_upper: Mapped[float | None] = mapped_column(Float)
    weight: Mapped[float | None] = mapped_column(Float)
    higher_is_better: Mapped[bool | None] = mapped_column()


Index("ix_card_metrics_metric_value", CardMetric.metric, CardMetric.value)


class EntryResult(Base):
    """One entry of a card for drill-down: the output and its per-entry metric values (compact JSON)."""

    __tablename__ = "entry_results"

    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True)
    entry_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    predicted: Mapped[str] = mapped_column(Text)
    error: Mapped[str | None] = mapped_column(Text)
    values: Mapped[dict[str, object]] = mapped_column(JSON)


class CardStatistics(Base):
    """The card's sealed statistics sidecar, byte for byte: paired tests need no files."""

    __tablename__ = "card_statistics"

    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True)
    sha256: Mapped[str] = mapped_column(String(64))
    data: Mapped[bytes] = mapped_column(LargeBinary)


class CardLink(Base):
    """A card that replaced another (``rescore``): both stay; the link says why and what changed."""

    __tablename__ = "card_links"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    old_card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), index=True)
    new_card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), index=True)
    reason: Mapped[str] = mapped_column(String(50))
    change_log: Mapped[dict[str, object]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SubmitterKey(Base):
    """A submitter's registered Ed25519 public key (raw 32 bytes, base64); revoked keys stay listed."""

    __tablename__ = "submitter_keys"

    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    submitter: Mapped[str] = mapped_column(String(200), index=True)
    public_key: Mapped[str] = mapped_column(String(100))
    registered_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class CardSignature(Base):
    """An Ed25519 signature over a card's ``run_card_hash``, as it was on the card when published."""

    __tablename__ = "card_signatures"

    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True)
    key_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    signer: Mapped[str | None] = mapped_column(String(200))
    public_key: Mapped[str] = mapped_column(String(100))
    signature: Mapped[str] = mapped_column(String(200))
    signed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class StoreSetting(Base):
    """One setting of this store (e.g. ``require_signatures``), kept in the store so every client obeys it."""

    __tablename__ = "store_settings"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


class Reproduction(Base):
    """One ``reproduce`` attempt of a published card: the new card's hash, the verdict and each difference."""

    __tablename__ = "reproductions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), index=True)
    reproduced_hash: Mapped[str] = mapped_column(String(64))
    verified: Mapped[bool] = mapped_column()
    differences: Mapped[dict[str, object]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Sweep(Base):
    """A benchmark sweep (Benchmark Spec §6): its file's content hash and the parsed declaration."""

    __tablename__ = "sweeps"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    file_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    spec: Mapped[dict[str, object]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SweepCell(Base):
    """One cell of a sweep: its axis values and, once run and published, its card."""

    __tablename__ = "sweep_cells"

    sweep_id: Mapped[int] = mapped_column(ForeignKey("sweeps.id", ondelete="CASCADE"), primary_key=True)
    cell_key: Mapped[str] = mapped_column(String(300), primary_key=True)
    params: Mapped[dict[str, object]] = mapped_column(JSON)
    status: Mapped[str] = mapped_column(String(30))
    card_id: Mapped[int | None] = mapped_column(ForeignKey("run_cards.id", ondelete="SET NULL"))


# Human review (Benchmark Spec §7.3; mt_eval.review). A campaign's items carry their own texts, copied
# from the cards' results[], so what a reviewer rated stays what is stored even if a card is re-published.


class ReviewCampaign(Base):
    """A review campaign: a stratified sample of entries of one dataset, shown for several cards."""

    __tablename__ = "review_campaigns"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    uid: Mapped[str] = mapped_column(String(32), unique=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    dataset_sha256: Mapped[str] = mapped_column(String(64), index=True)
    source_language: Mapped[str] = mapped_column(String(50))
    target_language: Mapped[str] = mapped_column(String(50))
    seed: Mapped[int] = mapped_column(Integer)
    size: Mapped[int] = mapped_column(Integer)
    control_share: Mapped[float] = mapped_column(Float)
    reference_policy: Mapped[str] = mapped_column(String(20))
    settings: Mapped[dict[str, object]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewItem(Base):
    """One text to rate: a card's output for an entry, or a control (``card_id`` null), with its hash."""

    __tablename__ = "review_items"
    __table_args__ = (Index("ix_review_items_campaign_entry", "campaign_id", "entry_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("review_campaigns.id", ondelete="CASCADE"))
    entry_id: Mapped[int] = mapped_column(Integer)
    card_id: Mapped[int | None] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    source: Mapped[str] = mapped_column(Text)
    output: Mapped[str] = mapped_column(Text)
    reference: Mapped[str] = mapped_column(Text)
    difficulty: Mapped[int] = mapped_column(Integer)
    register: Mapped[str | None] = mapped_column(String(100))
    item_hash: Mapped[str] = mapped_column(String(64), unique=True)
    detail: Mapped[dict[str, object]] = mapped_column(JSON)


class Reviewer(Base):
    """A reviewer by name; their batch tokens are kept (hashed) on the assignments, never in clear."""

    __tablename__ = "reviewers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewAssignment(Base):
    """A campaign's batch for one reviewer: the SHA-256 of the token written into the exported file."""

    __tablename__ = "review_assignments"
    __table_args__ = (UniqueConstraint("campaign_id", "reviewer_id", name="uq_review_assignments"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    campaign_id: Mapped[int] = mapped_column(ForeignKey("review_campaigns.id", ondelete="CASCADE"), index=True)
    reviewer_id: Mapped[int] = mapped_column(ForeignKey("reviewers.id", ondelete="CASCADE"), index=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    imported_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ReviewRating(Base):
    """One rating on the 0–3 scale (reject, gist, acceptable, excellent), with comment and timing."""

    __tablename__ = "review_ratings"
    __table_args__ = (UniqueConstraint("assignment_id", "item_id", name="uq_review_ratings"),
                      CheckConstraint("value >= 0 AND value <= 3", name="ck_review_ratings_scale"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    assignment_id: Mapped[int] = mapped_column(ForeignKey("review_assignments.id", ondelete="CASCADE"), index=True)
    item_id: Mapped[int] = mapped_column(ForeignKey("review_items.id", ondelete="CASCADE"), index=True)
    value: Mapped[int] = mapped_column(Integer)
    comment: Mapped[str | None] = mapped_column(Text)
    seconds: Mapped[float | None] = mapped_column(Float)
    rated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


# Web accounts (mt_eval.accounts). Secrets are never stored in clear: passwords as argon2 hashes, session
# ids and invitation tokens as SHA-256 (a leaked store can neither sign anyone in nor accept an invitation).


class Account(Base):
    """A web account: an ``admin`` or a ``reviewer`` (public viewers need none). A reviewer's ratings are
    stored under the ``reviewers`` row of the same name."""

    __tablename__ = "accounts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), unique=True)
    role: Mapped[str] = mapped_column(String(20))
    password_hash: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    disabled_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # 0009: the normalised identity an accepted invitation verified (unique), and who invited the account
    identity: Mapped[str | None] = mapped_column(String(320), unique=True)
    invited_by: Mapped[str | None] = mapped_column(String(200))
    verified_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AccountSession(Base):
    """A server-side web session by the SHA-256 of its id; ``account_id`` null before sign-in (a login or
    invitation form needs a session for its CSRF token)."""

    __tablename__ = "account_sessions"

    id_sha256: Mapped[str] = mapped_column(String(64), primary_key=True)
    account_id: Mapped[int | None] = mapped_column(ForeignKey("accounts.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class Invitation(Base):
    """A single-use, expiring invitation to make an account (and, for a reviewer, join a campaign)."""

    __tablename__ = "invitations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    token_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(20))
    campaign_id: Mapped[int | None] = mapped_column(ForeignKey("review_campaigns.id", ondelete="CASCADE"))
    created_by: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    identity: Mapped[str | None] = mapped_column(String(320))  # 0009: where the admin sent it (normalised)


class LoginAttempt(Base):
    """A failed sign-in, by key (``account:<name>`` or ``address:<ip>``), for the rate limit."""

    __tablename__ = "login_attempts"
    __table_args__ = (Index("ix_login_attempts_key_at", "key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(300))
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


# Sovereign rankings (mt_eval.sovereign.ranking): the governance organisation's signed significance clusters of
# its public sovereign cards, which the store cannot compute itself (those cards carry no per-entry statistics).


class SovereignRanking(Base):
    """A signed ranking document as published: who signed it, for which dataset, the document and signature."""

    __tablename__ = "sovereign_rankings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    ranking_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    organisation: Mapped[str] = mapped_column(String(200))
    key_id: Mapped[str] = mapped_column(String(64))
    dataset_sha256: Mapped[str] = mapped_column(String(64), index=True)
    entry_ids_sha256: Mapped[str] = mapped_column(String(64))
    document: Mapped[dict[str, object]] = mapped_column(JSON)
    signature: Mapped[dict[str, object]] = mapped_column(JSON)
    published_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SovereignRank(Base):
    """One card's place in a signed ranking: its cluster (from 1) and rank range ("1–2")."""

    __tablename__ = "sovereign_ranks"

    ranking_id: Mapped[int] = mapped_column(ForeignKey("sovereign_rankings.id", ondelete="CASCADE"), primary_key=True)
    card_id: Mapped[int] = mapped_column(ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True, index=True)
    cluster: Mapped[int] = mapped_column(Integer)
    rank: Mapped[str] = mapped_column(String(20))

"""0008: registered datasets (``mt-eval dataset register``), their entries, and each card's submission.

A dataset is registered once per version: its envelope, licence and attribution, the SHA-256 of the corpus
file (what cards record as ``dataset.sha256``) and the leaderboard's ranking key (``primary_metric``). Its
entries hold the texts ``publish`` rescores every card against; a secret segment's entry (gold_standard,
held_out) is kept without its texts (they stay with the governance organisation). ``card_submissions``
links each submitted card's own hash to the card the store keeps (the submission itself, or the store's
recomputation of it) with the differences found.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "registered_datasets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.String(200), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("entry_ids_sha256", sa.String(64), nullable=False),
        sa.Column("language_pair", sa.String(100), nullable=False),
        sa.Column("source_language", sa.String(50), nullable=False),
        sa.Column("target_language", sa.String(50), nullable=False),
        sa.Column("licence", sa.String(200), nullable=True),
        sa.Column("attribution", sa.Text, nullable=True),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.Column("secret_count", sa.Integer, nullable=False),
        sa.Column("primary_metric", sa.String(100), nullable=False, server_default="chrf_plus_plus"),
        sa.Column("info", sa.JSON, nullable=False),
        sa.Column("registered_by", sa.String(200), nullable=True),
        sa.Column("registered_at", TS, nullable=False),
        sa.UniqueConstraint("dataset_id", "version", name="uq_registered_datasets_id_version"),
    )
    op.create_index("ix_registered_datasets_dataset_id", "registered_datasets", ["dataset_id"])
    op.create_table(
        "registered_entries",
        sa.Column("dataset_pk", sa.Integer, sa.ForeignKey("registered_datasets.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("entry_id", sa.Integer, primary_key=True),
        sa.Column("position", sa.Integer, nullable=False),
        sa.Column("segment", sa.String(30), nullable=False),
        sa.Column("source", sa.Text, nullable=True),
        sa.Column("reference", sa.Text, nullable=True),
        sa.Column("difficulty", sa.Integer, nullable=False),
        sa.Column("register", sa.String(50), nullable=True),
        sa.Column("context", sa.String(50), nullable=True),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    op.create_table(
        "card_submissions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("submitted_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), nullable=False),
        sa.Column("recomputed", sa.Boolean, nullable=False),
        sa.Column("differences", sa.JSON, nullable=False),
        sa.Column("submitter", sa.String(200), nullable=True),
        sa.Column("submitted_at", TS, nullable=False),
    )
    op.create_index("ix_card_submissions_card_id", "card_submissions", ["card_id"])


def downgrade() -> None:
    op.drop_index("ix_card_submissions_card_id", table_name="card_submissions")
    op.drop_table("card_submissions")
    op.drop_table("registered_entries")
    op.drop_index("ix_registered_datasets_dataset_id", table_name="registered_datasets")
    op.drop_table("registered_datasets")

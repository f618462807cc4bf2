"""0003: human review campaigns, their items, reviewers, assignments (hashed tokens) and ratings.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def _fk(name: str, target: str, *, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.Integer, sa.ForeignKey(target, ondelete="CASCADE"), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "review_campaigns",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uid", sa.String(32), nullable=False, unique=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("dataset_sha256", sa.String(64), nullable=False),
        sa.Column("source_language", sa.String(50), nullable=False),
        sa.Column("target_language", sa.String(50), nullable=False),
        sa.Column("seed", sa.Integer, nullable=False),
        sa.Column("size", sa.Integer, nullable=False),
        sa.Column("control_share", sa.Float, nullable=False),
        sa.Column("reference_policy", sa.String(20), nullable=False),
        sa.Column("settings", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_review_campaigns_dataset_sha256", "review_campaigns", ["dataset_sha256"])
    op.create_table(
        "review_items",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("campaign_id", "review_campaigns.id"),
        sa.Column("entry_id", sa.Integer, nullable=False),
        _fk("card_id", "run_cards.id", nullable=True),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("source", sa.Text, nullable=False),
        sa.Column("output", sa.Text, nullable=False),
        sa.Column("reference", sa.Text, nullable=False),
        sa.Column("difficulty", sa.Integer, nullable=False),
        sa.Column("register", sa.String(100), nullable=True),
        sa.Column("item_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    op.create_index("ix_review_items_campaign_entry", "review_items", ["campaign_id", "entry_id"])
    op.create_index("ix_review_items_card_id", "review_items", ["card_id"])
    op.create_table(
        "reviewers",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_table(
        "review_assignments",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("campaign_id", "review_campaigns.id"),
        _fk("reviewer_id", "reviewers.id"),
        sa.Column("token_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("imported_at", TS, nullable=True),
        sa.UniqueConstraint("campaign_id", "reviewer_id", name="uq_review_assignments"),
    )
    op.create_index("ix_review_assignments_campaign_id", "review_assignments", ["campaign_id"])
    op.create_index("ix_review_assignments_reviewer_id", "review_assignments", ["reviewer_id"])
    op.create_table(
        "review_ratings",
        sa.Column("id", sa.Integer, primary_key=True),
        _fk("assignment_id", "review_assignments.id"),
        _fk("item_id", "review_items.id"),
        sa.Column("value", sa.Integer, nullable=False),
        sa.Column("comment", sa.Text, nullable=True),
        sa.Column("seconds", sa.Float, nullable=True),
        sa.Column("rated_at", TS, nullable=True),
        sa.UniqueConstraint("assignment_id", "item_id", name="uq_review_ratings"),
        sa.CheckConstraint("value >= 0 AND value <= 3", name="ck_review_ratings_scale"),
    )
    op.create_index("ix_review_ratings_assignment_id", "review_ratings", ["assignment_id"])
    op.create_index("ix_review_ratings_item_id", "review_ratings", ["item_id"])


def downgrade() -> None:
    op.drop_index("ix_review_ratings_item_id", table_name="review_ratings")
    op.drop_index("ix_review_ratings_assignment_id", table_name="review_ratings")
    op.drop_table("review_ratings")
    op.drop_index("ix_review_assignments_reviewer_id", table_name="review_assignments")
    op.drop_index("ix_review_assignments_campaign_id", table_name="review_assignments")
    op.drop_table("review_assignments")
    op.drop_table("reviewers")
    op.drop_index("ix_review_items_card_id", table_name="review_items")
    op.drop_index("ix_review_items_campaign_entry", table_name="review_items")
    op.drop_table("review_items")
    op.drop_index("ix_review_campaigns_dataset_sha256", table_name="review_campaigns")
    op.drop_table("review_campaigns")

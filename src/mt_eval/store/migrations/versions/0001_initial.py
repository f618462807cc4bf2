"""0001: datasets, run cards, their metrics, per-entry results and statistics sidecars.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON_CARD = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("dataset_id", sa.String(200), nullable=False),
        sa.Column("version", sa.String(100), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("entry_ids_sha256", sa.String(64), nullable=False),
        sa.Column("language_pair", sa.String(100), nullable=False),
        sa.Column("entry_count", sa.Integer, nullable=False),
        sa.UniqueConstraint("sha256", "entry_ids_sha256", name="uq_datasets_sha_entries"),
    )
    op.create_index("ix_datasets_dataset_id", "datasets", ["dataset_id"])
    op.create_index("ix_datasets_sha256", "datasets", ["sha256"])
    op.create_table(
        "run_cards",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("run_card_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("run_id", sa.String(100), nullable=False),
        sa.Column("dataset_pk", sa.Integer, sa.ForeignKey("datasets.id"), nullable=False),
        sa.Column("dataset_sha256", sa.String(64), nullable=False),
        sa.Column("entry_ids_sha256", sa.String(64), nullable=False),
        sa.Column("profile", sa.String(8), nullable=False),
        sa.Column("composite_rule", sa.String(32), nullable=False),
        sa.Column("metric_set", sa.Text, nullable=False),
        sa.Column("method_name", sa.String(300), nullable=False),
        sa.Column("method_class", sa.String(100), nullable=False),
        sa.Column("model_slug", sa.String(300), nullable=False),
        sa.Column("condition", sa.String(300), nullable=False),
        sa.Column("composite", sa.Float, nullable=True),
        sa.Column("composite_ci_lower", sa.Float, nullable=True),
        sa.Column("composite_ci_upper", sa.Float, nullable=True),
        sa.Column("cost_adjusted", sa.Float, nullable=True),
        sa.Column("quality_tier", sa.String(50), nullable=False),
        sa.Column("verification_tier", sa.String(50), nullable=False),
        sa.Column("submitter", sa.String(200), nullable=True),
        sa.Column("published_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cost_per_entry", sa.Float, nullable=True),
        sa.Column("avg_latency", sa.Float, nullable=True),
        sa.Column("card", JSON_CARD, nullable=False),
    )
    for column in ("run_id", "dataset_pk", "dataset_sha256", "method_class", "composite", "cost_adjusted",
                   "quality_tier", "verification_tier", "cost_per_entry", "avg_latency"):
        op.create_index(f"ix_run_cards_{column}", "run_cards", [column])
    op.create_index("ix_run_cards_board", "run_cards", ["dataset_sha256", "entry_ids_sha256", "composite"])
    op.create_table(
        "card_metrics",
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("metric", sa.String(100), primary_key=True),
        sa.Column("value", sa.Float, nullable=True),
        sa.Column("ci_lower", sa.Float, nullable=True),
        sa.Column("ci_upper", sa.Float, nullable=True),
        sa.Column("weight", sa.Float, nullable=True),
        sa.Column("higher_is_better", sa.Boolean, nullable=True),
    )
    op.create_index("ix_card_metrics_metric_value", "card_metrics", ["metric", "value"])
    op.create_table(
        "entry_results",
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("entry_id", sa.Integer, primary_key=True),
        sa.Column("predicted", sa.Text, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("values", sa.JSON, nullable=False),
    )
    op.create_table(
        "card_statistics",
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("data", sa.LargeBinary, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("card_statistics")
    op.drop_table("entry_results")
    op.drop_index("ix_card_metrics_metric_value", table_name="card_metrics")
    op.drop_table("card_metrics")
    op.drop_index("ix_run_cards_board", table_name="run_cards")
    for column in ("run_id", "dataset_pk", "dataset_sha256", "method_class", "composite", "cost_adjusted",
                   "quality_tier", "verification_tier", "cost_per_entry", "avg_latency"):
        op.drop_index(f"ix_run_cards_{column}", table_name="run_cards")
    op.drop_table("run_cards")
    op.drop_index("ix_datasets_sha256", table_name="datasets")
    op.drop_index("ix_datasets_dataset_id", table_name="datasets")
    op.drop_table("datasets")

"""0007: signed sovereign rankings (``mt-eval governance publish-ranking``) and each card's place in one.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "sovereign_rankings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("ranking_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("organisation", sa.String(200), nullable=False),
        sa.Column("key_id", sa.String(64), nullable=False),
        sa.Column("dataset_sha256", sa.String(64), nullable=False),
        sa.Column("entry_ids_sha256", sa.String(64), nullable=False),
        sa.Column("document", sa.JSON, nullable=False),
        sa.Column("signature", sa.JSON, nullable=False),
        sa.Column("published_at", TS, nullable=False),
    )
    op.create_index("ix_sovereign_rankings_dataset_sha256", "sovereign_rankings", ["dataset_sha256"])
    op.create_table(
        "sovereign_ranks",
        sa.Column("ranking_id", sa.Integer, sa.ForeignKey("sovereign_rankings.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("cluster", sa.Integer, nullable=False),
        sa.Column("rank", sa.String(20), nullable=False),
    )
    op.create_index("ix_sovereign_ranks_card_id", "sovereign_ranks", ["card_id"])


def downgrade() -> None:
    op.drop_index("ix_sovereign_ranks_card_id", table_name="sovereign_ranks")
    op.drop_table("sovereign_ranks")
    op.drop_index("ix_sovereign_rankings_dataset_sha256", table_name="sovereign_rankings")
    op.drop_table("sovereign_rankings")

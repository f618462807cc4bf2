"""0006: indexes in the leaderboard's order (composite best first, nulls last, then hash).

A top-50 query over 100,000 cards otherwise sorts every card of the dataset (PostgreSQL: 131 ms p95,
measured by benchmarks/bench_leaderboard.py); read in index order it stops after 50.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite sorts NULL first ascending, so DESC already puts it last (and takes no NULLS LAST in an index)
    order = "composite DESC" if op.get_bind().dialect.name == "sqlite" else "composite DESC NULLS LAST"
    op.execute(f"CREATE INDEX ix_run_cards_rank ON run_cards ({order}, run_card_hash)")
    # the same within one dataset, for a dataset that holds few of the cards (the index above would walk
    # past most of the others first)
    op.execute(f"CREATE INDEX ix_run_cards_dataset_rank ON run_cards (dataset_pk, {order}, run_card_hash)")


def downgrade() -> None:
    op.drop_index("ix_run_cards_dataset_rank", table_name="run_cards")
    op.drop_index("ix_run_cards_rank", table_name="run_cards")

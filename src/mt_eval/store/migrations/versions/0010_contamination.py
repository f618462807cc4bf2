"""0010: contamination facts on every stored card (issue 24.2): the method's declared training cut-off and
the month its test set became public, both ``YYYY-MM`` (null: not declared / not known), so the leaderboard
can keep the methods whose cut-off predates the test set (``leaderboard --clean-only``).

Existing rows are filled from their stored card JSON with the same rule ``insert_card`` applies
(``catalog.cutoffs``).

Revision ID: 0010
Revises: 0009
"""

from __future__ import annotations

import json

import sqlalchemy as sa
from alembic import op

from mt_eval.catalog.cutoffs import release_month, training_cutoff

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("run_cards", sa.Column("training_cutoff", sa.String(7), nullable=True))
    op.add_column("run_cards", sa.Column("test_released", sa.String(7), nullable=True))
    bind = op.get_bind()
    cards = sa.table("run_cards", sa.column("id", sa.Integer), sa.column("card", sa.JSON),
                     sa.column("training_cutoff", sa.String), sa.column("test_released", sa.String))
    for row_id, card in bind.execute(sa.select(cards.c.id, cards.c.card)).all():
        data = json.loads(card) if isinstance(card, str) else card
        if not isinstance(data, dict):
            continue
        cutoff, released = training_cutoff(data), release_month(data)
        if cutoff or released:
            bind.execute(cards.update().where(cards.c.id == row_id)
                         .values(training_cutoff=cutoff, test_released=released))


def downgrade() -> None:
    with op.batch_alter_table("run_cards") as batch:  # SQLite drops columns by copying the table
        batch.drop_column("test_released")
        batch.drop_column("training_cutoff")

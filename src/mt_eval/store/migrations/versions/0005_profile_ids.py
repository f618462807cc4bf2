"""0005: a card's profile column holds a calibrated profile's id (``cal-<sha12>``), not only A or B.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # SQLite does not enforce VARCHAR lengths (and cannot ALTER a column without copying the table)
    if op.get_bind().dialect.name != "sqlite":
        op.alter_column("run_cards", "profile", type_=sa.String(64), existing_type=sa.String(8),
                        existing_nullable=False)


def downgrade() -> None:
    if op.get_bind().dialect.name != "sqlite":
        op.execute("UPDATE run_cards SET profile = left(profile, 8)")
        op.alter_column("run_cards", "profile", type_=sa.String(8), existing_type=sa.String(64),
                        existing_nullable=False)

"""0009: who invited whom, and each reviewer's verified identity (issue 21: the review gate against sybils).

An invitation names the identity the admin sends it to (an e-mail address or an ORCID iD, normalised);
accepting it proves control of that identity, and the account records the identity (unique: one account
per person), who invited it and when the identity was verified. The review gate counts only such accounts.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.add_column("invitations", sa.Column("identity", sa.String(320), nullable=True))
    op.add_column("accounts", sa.Column("identity", sa.String(320), nullable=True))
    op.add_column("accounts", sa.Column("invited_by", sa.String(200), nullable=True))
    op.add_column("accounts", sa.Column("verified_at", TS, nullable=True))
    op.create_index("ix_accounts_identity", "accounts", ["identity"], unique=True)  # NULLs repeat freely


def downgrade() -> None:
    op.drop_index("ix_accounts_identity", table_name="accounts")
    with op.batch_alter_table("accounts") as batch:  # SQLite drops columns by copying the table
        batch.drop_column("verified_at")
        batch.drop_column("invited_by")
        batch.drop_column("identity")
    with op.batch_alter_table("invitations") as batch:
        batch.drop_column("identity")

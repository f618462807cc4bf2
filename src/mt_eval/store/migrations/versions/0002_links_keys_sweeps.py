"""0002: rescore links, submitter keys and card signatures, store settings, reproductions, sweeps.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TS = sa.DateTime(timezone=True)


def _card(name: str, *, nullable: bool = False, ondelete: str = "CASCADE") -> sa.Column:
    return sa.Column(name, sa.Integer, sa.ForeignKey("run_cards.id", ondelete=ondelete), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "card_links",
        sa.Column("id", sa.Integer, primary_key=True),
        _card("old_card_id"),
        _card("new_card_id"),
        sa.Column("reason", sa.String(50), nullable=False),
        sa.Column("change_log", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_card_links_old_card_id", "card_links", ["old_card_id"])
    op.create_index("ix_card_links_new_card_id", "card_links", ["new_card_id"])
    op.create_table(
        "submitter_keys",
        sa.Column("key_id", sa.String(64), primary_key=True),
        sa.Column("submitter", sa.String(200), nullable=False),
        sa.Column("public_key", sa.String(100), nullable=False),
        sa.Column("registered_at", TS, nullable=False),
        sa.Column("revoked_at", TS, nullable=True),
    )
    op.create_index("ix_submitter_keys_submitter", "submitter_keys", ["submitter"])
    op.create_table(
        "card_signatures",
        sa.Column("card_id", sa.Integer, sa.ForeignKey("run_cards.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("key_id", sa.String(64), primary_key=True),
        sa.Column("signer", sa.String(200), nullable=True),
        sa.Column("public_key", sa.String(100), nullable=False),
        sa.Column("signature", sa.String(200), nullable=False),
        sa.Column("signed_at", TS, nullable=True),
    )
    op.create_table(
        "store_settings",
        sa.Column("name", sa.String(100), primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    op.create_table(
        "reproductions",
        sa.Column("id", sa.Integer, primary_key=True),
        _card("card_id"),
        sa.Column("reproduced_hash", sa.String(64), nullable=False),
        sa.Column("verified", sa.Boolean, nullable=False),
        sa.Column("differences", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_reproductions_card_id", "reproductions", ["card_id"])
    op.create_table(
        "sweeps",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False, unique=True),
        sa.Column("spec", sa.JSON, nullable=False),
        sa.Column("created_at", TS, nullable=False),
    )
    op.create_index("ix_sweeps_name", "sweeps", ["name"])
    op.create_table(
        "sweep_cells",
        sa.Column("sweep_id", sa.Integer, sa.ForeignKey("sweeps.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("cell_key", sa.String(300), primary_key=True),
        sa.Column("params", sa.JSON, nullable=False),
        sa.Column("status", sa.String(30), nullable=False),
        _card("card_id", nullable=True, ondelete="SET NULL"),
    )


def downgrade() -> None:
    op.drop_table("sweep_cells")
    op.drop_index("ix_sweeps_name", table_name="sweeps")
    op.drop_table("sweeps")
    op.drop_index("ix_reproductions_card_id", table_name="reproductions")
    op.drop_table("reproductions")
    op.drop_table("store_settings")
    op.drop_table("card_signatures")
    op.drop_index("ix_submitter_keys_submitter", table_name="submitter_keys")
    op.drop_table("submitter_keys")
    op.drop_index("ix_card_links_new_card_id", table_name="card_links")
    op.drop_index("ix_card_links_old_card_id", table_name="card_links")
    op.drop_table("card_links")

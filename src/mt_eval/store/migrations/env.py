"""Alembic environment: always run programmatically with the engine in ``config.attributes``."""

from __future__ import annotations

from alembic import context

from mt_eval.store.models import Base

engine = context.config.attributes["engine"]
with engine.begin() as connection:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()

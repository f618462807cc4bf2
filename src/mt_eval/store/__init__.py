"""The leaderboard store: published run cards in SQLite (default) or PostgreSQL (by URL).

``db`` opens a store and brings its schema up to date (Alembic, migrations shipped in the package);
``publish`` verifies and inserts cards; ``board`` queries and ranks them with paired tests on the
stored statistics; ``export`` writes the rows for machines. Nothing here prints: the CLI
(``cli/store.py``) and ``render/leaderboard.py`` show the results.
"""

from mt_eval.store.db import DEFAULT_DB, StoreError, open_store, resolve_url

__all__ = ["DEFAULT_DB", "StoreError", "open_store", "resolve_url"]

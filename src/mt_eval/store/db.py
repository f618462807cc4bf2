"""Opening a store: where it is (``--db``, ``MT_EVAL_DB``, ``./mt-eval.db``), and its schema.

A plain path is a SQLite file; anything with ``://`` is a SQLAlchemy URL (``postgresql+psycopg://…``).
The schema is created and upgraded by the Alembic migrations shipped in ``store/migrations`` (run
programmatically, never by a separate tool), so a store written by an older harness is upgraded
when it is opened, and the same migrations build SQLite and PostgreSQL. Connection problems become
``StoreError`` (a ``UserError``: one line, exit 2) naming the database without its password.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy import Engine, create_engine, event, inspect
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, NoSuchModuleError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from mt_eval.errors import UserError

DEFAULT_DB = "mt-eval.db"
ENV_VAR = "MT_EVAL_DB"
MIGRATIONS = str(Path(__file__).with_name("migrations"))


class StoreError(UserError):
    """The store cannot be opened or used (unreachable server, bad URL, foreign file)."""


def resolve_url(db: str | None = None) -> str:
    """The SQLAlchemy URL for ``--db`` (else ``$MT_EVAL_DB``, else ``./mt-eval.db``)."""
    target = db or os.environ.get(ENV_VAR) or DEFAULT_DB
    if "://" in target:
        return target
    return f"sqlite:///{Path(target).expanduser()}"


def display(url: str) -> str:
    """The URL as it may be printed: never the password."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<invalid database URL>"


def _sqlite_pragmas(dbapi_connection: object, _record: object) -> None:
    """Foreign keys on (SQLite leaves them off), so deleting a card deletes its rows."""
    cursor = dbapi_connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; a SQLite file's folder must exist (it is not created behind one's back)."""
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise StoreError(f"not a database path or URL: {url!r}") from None
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        folder = Path(str(parsed.database)).expanduser().resolve().parent
        if not folder.is_dir():
            raise StoreError(f"database folder does not exist: {folder}")
    try:
        engine = create_engine(parsed, pool_pre_ping=True)
    except ImportError as exc:  # the driver: psycopg is the optional ``postgres`` extra (the demo never needs it)
        hint = "pip install 'mt-eval[postgres]'" if parsed.get_backend_name() == "postgresql" else None
        raise StoreError(f"cannot use database {display(url)}: its driver {exc.name or exc} is not installed",
                         hint=hint) from None
    except (NoSuchModuleError, ArgumentError) as exc:
        raise StoreError(f"cannot use database {display(url)}: {str(exc).splitlines()[0]}") from None
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def alembic_config(engine: Engine) -> Config:
    """Alembic's configuration, in memory: the package's migrations on ``engine``."""
    config = Config()
    config.set_main_option("script_location", MIGRATIONS)
    config.attributes["engine"] = engine
    return config


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to ``revision`` (idempotent: an up-to-date store is left as it is)."""
    with _reachable(engine):
        command.upgrade(alembic_config(engine), revision)


def downgrade(engine: Engine, revision: str = "base") -> None:
    """Take the schema back to ``revision`` (``base``: no tables at all)."""
    with _reachable(engine):
        command.downgrade(alembic_config(engine), revision)


def table_names(engine: Engine) -> set[str]:
    """The tables the database holds now (tests and diagnostics)."""
    with _reachable(engine):
        return set(inspect(engine).get_table_names())


@contextmanager
def _reachable(engine: Engine) -> Iterator[None]:
    """Turn a connection failure into one line naming the database."""
    try:
        yield
    except OperationalError as exc:
        reason = str(exc.orig or exc).strip().splitlines()[0] if (exc.orig or exc) else "unreachable"
        raise StoreError(f"cannot open database {display(engine.url.render_as_string(False))}: {reason}") from None


class Store:
    """An open, migrated store: an engine and its sessions."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sessions = sessionmaker(engine, expire_on_commit=False)

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session whose transaction commits on success and rolls back on any error."""
        with _reachable(self.engine), self._sessions.begin() as session:
            yield session

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(db: str | None = None, *, migrate: bool = True, must_exist: bool = False) -> Store:
    """The store at ``db`` (path or URL), its schema brought up to date. ``must_exist``: commands that
    only read (``leaderboard``, ``export``, ``serve``) refuse a SQLite path with no file rather than
    create an empty store there, which would hide a mistyped path behind "no published cards"."""
    url = resolve_url(db)
    if must_exist:
        parsed = make_url(url)
        name = parsed.database
        if parsed.get_backend_name() == "sqlite" and name not in (None, "", ":memory:") and not Path(name).exists():
            raise StoreError(f"no store at {name}: publish a card there first (mt-eval publish CARD --db {name}) "
                             f"or give --db / ${ENV_VAR}")
    engine = make_engine(url)
    try:
        if migrate:
            upgrade(engine)
    except StoreError:
        engine.dispose()
        raise
    except SQLAlchemyError as exc:
        engine.dispose()
        raise StoreError(f"cannot use database {display(str(engine.url))}: {str(exc).splitlines()[0]}") from None
    return Store(engine)

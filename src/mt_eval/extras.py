"""Optional dependencies: which extra a command needs when one of its modules is not installed.

The base install is what the demo uses (translate, score, verify, show, report, compare, the Python API);
the leaderboard store, the web app and signatures are extras, so a user who only scores does not install
SQLAlchemy, FastAPI and cryptography. A command that reaches a module of an extra that is not installed
fails with one line naming the extra and the command that installs it, never with a traceback.
``tests/install/test_extras_table.py`` checks this table against pyproject.toml's extras.
"""

from __future__ import annotations

from mt_eval.errors import UserError

# top-level import name → the extra that installs it (transitive ones too: a module may import starlette or
# mako directly). Each extra's purpose is in pyproject.toml; the README says which command needs which.
EXTRA_OF_MODULE: dict[str, str] = {
    "sqlalchemy": "store",
    "alembic": "store",
    "mako": "store",
    "fastapi": "web",
    "starlette": "web",
    "uvicorn": "web",
    "jinja2": "web",
    "multipart": "web",
    "python_multipart": "web",
    "argon2": "web",
    "cryptography": "sign",
    "pyrage": "sign",
    "installer": "sign",
    "psycopg": "postgres",
    "ray": "ray",
}

WHAT_NEEDS_IT: dict[str, str] = {
    "store": "the leaderboard store: publish, leaderboard, export, rescore, review, accounts",
    "web": "the web app: serve, serve-method",
    "sign": "signatures and encryption: keys, sign, signed cards, vaults, sovereign evaluation, contests",
    "postgres": "a PostgreSQL store",
    "ray": "sweeps on a Ray cluster",
}


class MissingExtra(UserError):
    """A module of an optional extra is not installed; the message says which extra and how to install it."""

    def __init__(self, module: str, extra: str) -> None:
        self.module = module
        self.extra = extra
        super().__init__(
            f"this needs the optional '{extra}' extra ({WHAT_NEEDS_IT[extra]}); {module} is not installed",
            hint=f"pip install 'mt-eval[{extra}]', or in a checkout .venv/bin/pip install -e '.[{extra}]'")


def missing_extra(exc: ModuleNotFoundError) -> MissingExtra | None:
    """The extra whose module ``exc`` could not import, or None when the module is not one of an extra's
    (a real bug, which keeps its traceback)."""
    module = (exc.name or "").partition(".")[0]
    extra = EXTRA_OF_MODULE.get(module)
    return MissingExtra(module, extra) if extra is not None else None

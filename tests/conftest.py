"""Shared fixtures: the real NTREX-128 data checked in under ``tests/data/ntrex128``."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

# pytest-xdist starts its workers with COLUMNS=80, and rich's consoles, made when mt_eval.cli is imported below,
# take an explicit COLUMNS as the page width: tables that a pipe or a serial run prints 240 wide came out folded
# at 80 on a worker (11 CLI tests failed under `make test` only). A test that wants a width still passes its own.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.pop("COLUMNS", None)

import pytest
import typer.main
import typer.testing

from data_paths import NTREX
from mt_eval.metrics.embeddings import CACHE_ENV
from store_fixtures import cards, db_url, postgres_url  # noqa: F401  (one PostgreSQL server and card set per session)

# run and score embed for semantic_score by default: every test's command reads and writes one vector cache (the
# default, .mt-eval-cache/ in each test's own directory, would be cold every time), so a text that any test
# embedded is never embedded again. tests/semantic measure what is computed with caches of their own.
os.environ.setdefault(CACHE_ENV, str(Path(__file__).resolve().parents[1] / ".mt-eval-cache" / "test-embeddings.sqlite"))


# typer's CliRunner builds the whole click tree again on every invoke (every command's annotations evaluated:
# 0.15 s, ~1,100 invokes in stage 1, a fifth of its CPU); the command line builds it once per process, and so do
# the tests now, per app (no test adds a command at run time; the key would change if one did).
_BUILT: dict[tuple[int, int, int], tuple[typer.Typer, typer.main._click.Command]] = {}
_build_command = typer.testing._get_command


def _command_once(typer_instance: typer.Typer) -> typer.main._click.Command:
    app = typer_instance
    key = (id(app), len(app.registered_commands), len(app.registered_groups))
    if key not in _BUILT:
        _BUILT[key] = (app, _build_command(app))  # the app is kept too, so its id is never reused
    return _BUILT[key][1]


typer.testing._get_command = _command_once


@pytest.fixture(scope="session")
def ntrex_dir() -> Path:
    """The NTREX-128 folder; the data ships with the repository, so it is never skipped."""
    return NTREX


# ``make test`` runs two pytest-xdist workers. The scheduler below hands out whole modules, so a module's
# fixtures are built once, on the worker that runs the module (xdist's ``--dist load`` splits a module and builds
# its module-scoped fixtures on both). A folder sharing something machine-wide is one unit, run on one worker:
# every sandbox runs as uid 65534 and RLIMIT_NPROC counts all of that uid's processes on the machine, so a
# hostile bundle at its process limit in one worker would make another worker's sandbox fail. (xdist's own
# ``--dist loadgroup`` marks do nothing under pytest 9.2: it renames ``item._nodeid``, which pytest no longer
# reads.)
ONE_WORKER_FOLDERS = {"sovereign"}


def work_unit(nodeid: str) -> str:
    """The unit a worker runs whole: ``tests/<folder>`` for a folder above, else the test's module."""
    module = nodeid.split("::", 1)[0]
    parts = module.split("/")
    if len(parts) > 2 and parts[0] == "tests" and parts[1] in ONE_WORKER_FOLDERS:
        return "/".join(parts[:2])
    return module


if importlib.util.find_spec("xdist") is not None:  # the hook exists only where pytest-xdist is installed
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """xdist's scope scheduling (largest unit first, then as workers free up) over :func:`work_unit`."""

        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ModuleScheduling:
        return ModuleScheduling(config, log)


def read_lines(path: Path, n: int | None = None) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines[:n] if n else lines

"""Session fixtures built once per test run, however many pytest-xdist workers ask for them.

xdist gives each worker its own session, so a session fixture is built once per worker: with ``make test``'s
two workers, every set of real cards (``mt-eval score`` on 200-300 NTREX lines, seconds each) was scored twice.
:func:`built_once` builds the files in a folder shared by the run's workers, under an exclusive ``flock``: the
first worker to ask builds them, the others wait for the lock and read what it recorded. Without xdist it
builds in the session's own temporary folder, as before. A build that fails records nothing, so the next
worker to ask builds (and fails) on its own.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest


def built_once(factory: pytest.TempPathFactory, name: str,
               build: Callable[[Path], dict[str, Path]]) -> dict[str, Path]:
    """``build(folder)``'s paths, ``folder`` a fresh folder named ``name`` that every worker of the run sees."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return build(factory.mktemp(name))
    # each worker's base temp is <run>/popen-gwN; their parent belongs to this run only
    shared = factory.getbasetemp().parent / f"shared-{name}"
    shared.mkdir(exist_ok=True)
    with (shared / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if build raises
        done = shared / "built.json"
        if done.is_file():
            return {key: Path(value) for key, value in json.loads(done.read_text(encoding="utf-8")).items()}
        folder = Path(tempfile.mkdtemp(prefix="build-", dir=shared))  # a failed try's files stay apart
        made = build(folder)
        done.write_text(json.dumps({key: str(value) for key, value in made.items()}), encoding="utf-8")
        return made

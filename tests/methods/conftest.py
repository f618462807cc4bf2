"""Shared fixtures for method tests: the real NTREX data and the real Apertium installation."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable

import pytest

from data_paths import NTREX
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry

PAIR = "eng-spa"


def apertium_skip_reason() -> str | None:
    """Why the real-Apertium tests cannot run here (None when they can). CI installs both."""
    binary = shutil.which("apertium")
    if binary is None:
        return "the 'apertium' command is not installed (apt-get install apertium apertium-eng-spa)"
    listed = subprocess.run([binary, "-l"], capture_output=True, text=True, check=False).stdout.split()
    if PAIR not in listed:
        return f"Apertium pair {PAIR} is not installed (apt-get install apertium-{PAIR})"
    return None


@pytest.fixture(scope="session")
def apertium_pair() -> str:
    """The Apertium direction the real tests use; skips the test with a reason when unavailable."""
    reason = apertium_skip_reason()
    if reason:
        pytest.skip(reason)
    return PAIR


@pytest.fixture(scope="session")
def ntrex_sources() -> list[str]:
    """The 1,997 English NTREX-128 segments (``tests/data/ntrex128``, in the repository)."""
    path = NTREX / "newstest2019-src.eng.txt"
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines[-1] == "" else lines


def _make_dataset(ids: list[int]) -> Dataset:
    entries = [Entry(id=i, source=f"source {i}", reference=f"SECRET REFERENCE {i}") for i in ids]
    info = DatasetInfo(id="test", source_language="en", target_language="es")
    return Dataset(info=info, entries=entries, sha256="0" * 64)


@pytest.fixture
def make_dataset() -> Callable[[list[int]], Dataset]:
    """Factory for a small corpus with the given entry ids (references marked SECRET)."""
    return _make_dataset

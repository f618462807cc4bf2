"""Fixtures of the sandbox tests: tiny limits (so every hostile attempt ends in seconds), bundles copied
into a temporary folder with their parameters, a small real corpus (NTREX-128 eng→spa).

Part A's vault fixtures (``vault_fixtures.py``) are bound here too, so every test module sees them.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import vault_fixtures

from support.sovereign import BUNDLES, EXAMPLES, write_policy

REPO = Path(__file__).resolve().parents[2]

sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed

# the modules that start a sandbox; where bubblewrap is missing they are skipped with the reason
SANDBOXED = {"test_broker", "test_dependencies", "test_identical_scores", "test_sandbox_hostile",
             "test_sandbox_policy", "test_sovereign_cli"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if shutil.which("bwrap") is not None:
        return
    skip = pytest.mark.skip(reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    for item in items:
        if item.path.stem in SANDBOXED:
            item.add_marker(skip)


@pytest.fixture
def governance(tmp_path: Path) -> Path:
    """A governance directory whose sandbox.toml sets the tiny limits."""
    return write_policy(tmp_path / "governance")


@pytest.fixture
def make_bundle(tmp_path: Path) -> Callable[..., Path]:
    """Copy a bundle (a name under tests/sovereign/bundles or examples/bundles) and add files to it."""

    def make(name: str, files: dict[str, Any] | None = None) -> Path:
        source = BUNDLES / name if (BUNDLES / name).is_dir() else EXAMPLES / name
        dest = tmp_path / "bundles" / name
        shutil.copytree(source, dest, ignore=shutil.ignore_patterns("__pycache__"))
        for rel, content in (files or {}).items():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_text(content if isinstance(content, str) else json.dumps(content))
        return dest

    return make

"""Fixtures of the sandbox tests: tiny limits (so every hostile attempt ends in seconds), bundles copied
into a temporary folder with their parameters, a small real corpus (NTREX-128 eng→spa).

Part A's vault fixtures (``vault_fixtures.py``) are bound here too, so every test module sees them.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import vault_fixtures

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Dataset
from mt_eval.sovereign.sandbox import POLICY_FILE, SandboxPolicy

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "providers"))  # the real local OpenAI-protocol server
BUNDLES = Path(__file__).resolve().parent / "bundles"
EXAMPLES = REPO / "examples" / "bundles"
CORPUS = REPO / "examples" / "ntrex128-eng-spa.json"

sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed

# tiny limits: 1.5 s per entry, 256 MB of address space, a 16 MB tmpfs and 8 MB files
TINY = SandboxPolicy(wall_seconds_per_entry=1.5, wall_seconds_per_run=60, cpu_seconds=10, memory_mb=256,
                     processes=32, file_size_mb=8, open_files=64, tmpfs_mb=16, max_restarts=40)


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


def write_policy(governance: Path, policy: SandboxPolicy = TINY) -> Path:
    governance.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} = {json.dumps(v)}" for k, v in vars(policy).items()]
    (governance / POLICY_FILE).write_text("[limits]\n" + "\n".join(lines) + "\n")
    return governance


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


def small_dataset(n: int, start: int = 0) -> Dataset:
    """``n`` real NTREX-128 entries (all development)."""
    full = load_corpus(CORPUS)
    return full.model_copy(update={"entries": full.entries[start:start + n]})


def write_small_corpus(path: Path, n: int) -> Path:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:n]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path

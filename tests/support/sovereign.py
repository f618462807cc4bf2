"""The sandbox tests' shared values: tiny limits, a policy file, small real corpora (NTREX-128 eng→spa)."""

from __future__ import annotations

import json
from pathlib import Path

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Dataset
from mt_eval.sovereign.sandbox import POLICY_FILE, SandboxPolicy

REPO = Path(__file__).resolve().parents[2]
BUNDLES = REPO / "tests" / "sovereign" / "bundles"
EXAMPLES = REPO / "examples" / "bundles"
CORPUS = REPO / "examples" / "ntrex128-eng-spa.json"

# tiny limits: 1.5 s per entry, 256 MB of address space, a 16 MB tmpfs and 8 MB files
TINY = SandboxPolicy(wall_seconds_per_entry=1.5, wall_seconds_per_run=60, cpu_seconds=10, memory_mb=256,
                     processes=32, file_size_mb=8, open_files=64, tmpfs_mb=16, max_restarts=40)


def write_policy(governance: Path, policy: SandboxPolicy = TINY) -> Path:
    governance.mkdir(parents=True, exist_ok=True)
    lines = [f"{k} = {json.dumps(v)}" for k, v in vars(policy).items()]
    (governance / POLICY_FILE).write_text("[limits]\n" + "\n".join(lines) + "\n")
    return governance


def small_dataset(n: int, start: int = 0) -> Dataset:
    """``n`` real NTREX-128 entries (all development)."""
    full = load_corpus(CORPUS)
    return full.model_copy(update={"entries": full.entries[start:start + n]})


def write_small_corpus(path: Path, n: int) -> Path:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:n]
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path

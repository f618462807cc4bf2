"""README's sovereign walk-through runs as written, on the shipped corpus and bundles: the ```bash block
of "## Sovereign evaluation" is taken from README.md itself and run by bash (``set -euo pipefail``) in a
fresh folder holding a copy of ``examples/``. Checked after it: the two gold runs were released, the
leaderboard ranks both sovereign cards from the signed clusters, and the audit chain is intact.

Also: the shipped sovereign corpus is what ``examples/build_sovereign_corpus.py`` builds."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def readme_block() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Sovereign evaluation"):]
    match = re.search(r"```bash\n(.*?)```", section, re.S)
    assert match, "the sovereign section has a ```bash walk-through"
    return match.group(1)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (make deps)")
def test_the_readme_walk_through_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    done = subprocess.run(["bash", "-c", "set -euo pipefail\n" + readme_block()], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=400, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name in ("apertium-command", "glossary-python"):
        for run in (1, 2):
            result = json.loads((tmp_path / f"{name}-RESULT-{run}.json").read_text())
            assert result["status"] == "ok" and result["failed"] == "none"
            assert set(result["scores"]) == {"composite", "chrf_plus_plus"}
    # Apertium (chrF++ ~45 on NTREX eng→spa) ranks above the glossary demo (a word list), each its own cluster
    assert re.search(r"1\s+apertium-eng-spa-bundle.*\n.*\n\s*2\s+glossary-demo", done.stdout), done.stdout[-3000:]
    assert "chain intact" in done.stdout


def test_the_shipped_sovereign_corpus_is_the_built_one() -> None:
    done = subprocess.run([sys.executable, str(REPO / "examples" / "build_sovereign_corpus.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout
    entries = json.loads((REPO / "examples" / "ntrex128-eng-spa-sovereign.json").read_text())["entries"]
    assert sum(e["segment"] == "gold_standard" for e in entries) == 50
    assert sum(e["segment"] == "held_out" for e in entries) == 20

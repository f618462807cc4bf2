"""docs/python.md's examples run as written, and examples/notebook.py runs inside an event loop.

The notebook script starts a loop (``asyncio.run(main())``) and calls ``mt_eval.score`` and
``mt_eval.evaluate`` inside it, asserting every chrF++/BLEU/TER figure equal to sacrebleu's own: it
exits non-zero otherwise, and it must leave nothing behind in the folder it runs in.
"""

from __future__ import annotations

import doctest
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_python_docs_examples_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name examples/ntrex128-eng-spa.json as a user in a clone would
    runs = ROOT / "runs"
    before = set(os.listdir(runs)) if runs.is_dir() else set()
    result = doctest.testfile(str(ROOT / "docs" / "python.md"), module_relative=False,
                              optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted >= 25 and result.failed == 0
    assert (set(os.listdir(runs)) if runs.is_dir() else set()) == before  # write=False: no runs/<run_id>/


def test_the_notebook_script_runs_inside_a_loop_and_matches_sacrebleu(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "notebook.py")], cwd=tmp_path,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    lines = run.stdout.splitlines()
    for metric in ("chrf_plus_plus", "bleu", "ter"):  # once for the lists, once for Apertium's outputs
        assert sum(1 for line in lines if line.split()[:1] == [metric] and "equal to sacrebleu" in line) == 2
    assert "EvalResult(system='apertium:eng-spa'" in run.stdout and "worse" in run.stdout
    assert lines[-1] == "notebook: every figure equal to sacrebleu"
    assert os.listdir(tmp_path) == []  # nothing written where it ran

"""``kill -9`` a real ``mt-eval sweep`` process mid-way; ``--resume`` completes the sweep, requesting
exactly the entries that had not finished (counted by the server), each once, and leaving every
card written before the kill as it was."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from sweep_helpers import CORPUS, FAST, FakeOpenAI, Oracle, cards_in, expected, oracle_key, write_sweep
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.engine.runner import read_journal

ARGS = ["--no-cache", "-j", "2", "--concurrency", "2", *FAST]


def _journalled(root: Path) -> dict[str, set[int]]:
    """Entries each cell's journal holds as finished (what a resume must not request again)."""
    done: dict[str, set[int]] = {}
    for journal in root.glob("*/*/journal.jsonl"):
        _, entries = read_journal(journal)
        done[journal.parent.parent.name] = {i for i, t in entries.items() if t.error is None}
    return done


def _digests(root: Path) -> dict[str, str]:
    return {p.parent.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in root.glob("*/run_card.json")}


def test_kill_9_mid_sweep_then_resume_requests_no_finished_entry_again(tmp_path: Path) -> None:
    sources = {int(e["id"]): str(e["source"]) for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]}
    oracle = Oracle()
    with FakeOpenAI(responder=oracle, base_delay=0.06) as server:
        file = write_sweep(tmp_path, server.base_url)
        root = tmp_path / "runs" / "demo"
        env = {**os.environ, "COLUMNS": "200"}
        runs = ["--runs-dir", str(tmp_path / "runs")]
        proc = subprocess.Popen([sys.executable, "-m", "mt_eval", "sweep", str(file), *ARGS, *runs], cwd=tmp_path,
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # a finished cell, and another one part-way
                done = _journalled(root)
                if _digests(root) and any(0 < len(ids) < 6 for ids in done.values()):
                    break
                time.sleep(0.02)
            proc.kill()  # SIGKILL: no handler runs, nothing is flushed that was not already
            proc.wait(10)
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == -9
        time.sleep(0.3)  # requests the killed process had in flight are still being answered (and counted)
        while server._in_flight:
            time.sleep(0.02)
        finished_cards, before = _digests(root), _journalled(root)
        asked = Counter(oracle.asked)
        assert finished_cards and 0 < sum(map(len, before.values())) < 72
        dry = CliRunner().invoke(app, ["sweep", str(file), "--resume", "--dry-run", *ARGS, *runs], terminal_width=300)
        planned = {m[1]: int(m[2]) for m in re.finditer(r"^\s*(model=\S+)\s+\S+\s+\d+\s+(\d+)\s", dry.stdout, re.M)}
        result = CliRunner().invoke(app, ["sweep", str(file), "--resume", *ARGS, *runs], env={"COLUMNS": "200"},
                                    catch_exceptions=False)
        assert result.exit_code == 0, result.output
    cards = cards_in(root)
    assert len(cards) == 13
    for folder, digest in finished_cards.items():  # a finished cell is skipped, its card untouched
        assert _digests(root)[folder] == digest
    wanted = Counter({oracle_key(folder, sources[i]): 1 for folder in cards if folder != "cell=apertium"
                      for i in range(1, 7) if i not in before.get(folder, set())})
    # exactly the unfinished entries were requested by the resume, each once; no finished one again
    assert oracle.asked - asked == wanted
    assert len(planned) == 12 and sum(planned.values()) == sum(wanted.values())  # the dry run planned just those
    for folder, card in cards.items():
        if folder != "cell=apertium":
            model, temperature, v2, _ = oracle_key(folder, "")
            assert all(r["predicted"] == expected(model, temperature, v2, r["source"], r["reference"])
                       for r in card["results"])
            assert card["scores"]["errors"] == 0

"""The real ``mt-eval run`` process: kill -9 and --resume (entries and elapsed time), Ctrl-C, dry-run, budget,
no key leaks."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.llm_fake import Translator
from support.llm_helpers import make_dataset, serve, write_text_pair

MT_EVAL = [sys.executable, "-c", "from mt_eval.cli import main; main()"]
SECRET = "sk-test-SECRET-4242"


def _cmd(src: Path, ref: Path, url: str, runs: Path, *extra: str) -> list[str]:
    return [*MT_EVAL, "run", "--source-file", str(src), "--reference-file", str(ref), "--source-lang", "en",
            "--target-lang", "es", "--method", "llm", "--model", "test/model", "--base-url", url,
            "--api-key-env", "FAKE_LLM_KEY", "--runs-dir", str(runs), "--bootstrap", "0", "--no-cache", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "FAKE_LLM_KEY": SECRET}


def _finished(journal: Path) -> set[int]:
    out = set()
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "entry_id" in rec and rec["error"] is None:
            out.add(rec["entry_id"])
    return out


def _wait_for(journal_glob: Path, pattern: str, count: int, proc: subprocess.Popen[bytes]) -> Path:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = list(journal_glob.glob(pattern))
        if found and len(_finished(found[0])) >= count:
            return found[0]
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError("the run made no progress")


def test_kill_9_then_resume_requests_nothing_twice(tmp_path: Path) -> None:
    n = 160
    src, ref = write_text_pair(tmp_path, n)
    ds = make_dataset(n)
    translator = Translator()
    with serve(translator, ds, api_key=SECRET, base_delay=0.03) as server:
        runs = tmp_path / "runs"
        proc = subprocess.Popen(_cmd(src, ref, server.base_url, runs, "--concurrency", "4"), env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = _wait_for(runs, "*/journal.jsonl", n // 2, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        before = _finished(journal)
        asked_before = translator.asked.copy()
        assert n // 2 <= len(before) < n
        resumed = subprocess.run([*_cmd(src, ref, server.base_url, runs, "--concurrency", "4"), "--resume",
                                  str(journal.parent)], env=_env(), capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        again = {i for i, c in (translator.asked - asked_before).items() if c}
        assert not again & before  # server side: no finished entry was requested again
        assert again | before == set(range(1, n + 1))
        full_runs = tmp_path / "full"
        whole = subprocess.run(_cmd(src, ref, server.base_url, full_runs, "--concurrency", "8"), env=_env(),
                               capture_output=True, text=True, timeout=120)
        assert whole.returncode == 0, whole.stderr
    card = json.loads((journal.parent / "run_card.json").read_text(encoding="utf-8"))
    uninterrupted = json.loads(next(full_runs.glob("*/run_card.json")).read_text(encoding="utf-8"))
    assert _same_scores(card, uninterrupted)  # latencies differ, every score is equal
    assert [r["predicted"] for r in card["results"]] == [r["predicted"] for r in uninterrupted["results"]]
    assert card["run_id"] == journal.parent.name and card["config"]["concurrency"] == 4
    for path in [*runs.rglob("*"), *full_runs.rglob("*")]:  # the key never reaches a file
        assert not path.is_file() or SECRET.encode() not in path.read_bytes()
    assert SECRET not in resumed.stdout + resumed.stderr + whole.stdout + whole.stderr


def _stamps(journal: Path) -> dict[str, float]:
    """Each session's last recorded elapsed seconds, read straight from the file."""
    out: dict[str, float] = {}
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:  # a torn tail
            continue
        if "_session" in rec:
            out[rec["_session"]["id"]] = rec["_session"]["elapsed_seconds"]
    return out


def test_elapsed_of_a_killed_and_resumed_run_covers_both_sessions(tmp_path: Path) -> None:
    n, slots, delay = 80, 4, 0.05
    src, ref = write_text_pair(tmp_path, n)
    with serve(Translator(), make_dataset(n), api_key=SECRET, base_delay=delay) as server:
        runs = tmp_path / "runs"
        started = time.monotonic()
        proc = subprocess.Popen(_cmd(src, ref, server.base_url, runs, "--concurrency", str(slots)), env=_env(),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        journal = _wait_for(runs, "*/journal.jsonl", n // 2, proc)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        first_wall = time.monotonic() - started
        (killed,) = _stamps(journal).values()  # stamped with its last finished entry, never after
        k = len(_finished(journal))
        time.sleep(0.5)  # time between sessions is no session's: not counted
        started = time.monotonic()
        resumed = subprocess.run([*_cmd(src, ref, server.base_url, runs, "--concurrency", str(slots)), "--resume",
                                  str(journal.parent)], env=_env(), capture_output=True, text=True, timeout=120)
        second_wall = time.monotonic() - started
    assert resumed.returncode == 0, resumed.stderr
    stamps = _stamps(journal)
    assert len(stamps) == 2 and killed in stamps.values()
    card = json.loads((journal.parent / "run_card.json").read_text(encoding="utf-8"))
    assert card["elapsed_seconds"] == pytest.approx(sum(stamps.values()), abs=1e-5)
    # each session spent at least its share of round trips; the last session alone cannot reach this
    least = (math.ceil(k / slots) + math.ceil((n - k) / slots)) * delay
    assert least <= card["elapsed_seconds"] <= first_wall + second_wall
    assert killed <= first_wall and not any("last session" in w for w in card.get("warnings", []))


def _same_scores(a: dict, b: dict) -> bool:  # type: ignore[type-arg]
    keys = [k for k in a["scores"] if "latency" not in k and k not in ("cost_adjusted",)]
    return all(a["scores"][k] == b["scores"][k] for k in keys)


def test_ctrl_c_stops_cleanly_and_says_how_to_resume(tmp_path: Path) -> None:
    n = 120
    src, ref = write_text_pair(tmp_path, n)
    with serve(Translator(), make_dataset(n), api_key=SECRET, base_delay=0.05) as server:
        runs = tmp_path / "runs"
        # a child inherits an *ignored* SIGINT, and some earlier test in the same pytest process (a library it
        # loads) leaves SIGINT ignored: the run then never sees the Ctrl-C. A user's shell gives the default.
        proc = subprocess.Popen(_cmd(src, ref, server.base_url, runs, "--concurrency", "2"), env=_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # type: ignore[call-overload]
        journal = _wait_for(runs, "*/journal.jsonl", 10, proc)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    said = stderr.replace("\n", "")  # the same command, with --resume: the journal is never followed
    assert "resume with: mt-eval run --source-file" in said and said.endswith(f"--resume {journal.parent}")
    assert "Traceback" not in stderr
    assert 10 <= len(_finished(journal)) < n


def test_dry_run_and_budget(tmp_path: Path) -> None:
    src, ref = write_text_pair(tmp_path, 20)
    prices = tmp_path / "prices.json"
    prices.write_text('{"models": {"test/model": {"prompt": 100, "completion": 400}}}', encoding="utf-8")
    with serve(Translator(), make_dataset(20), api_key=SECRET) as server:
        runs = tmp_path / "runs"
        common = _cmd(src, ref, server.base_url, runs, "--pricing", str(prices), "--batch-size", "5")
        dry = subprocess.run([*common, "--dry-run"], env=_env(), capture_output=True, text=True, timeout=60)
        over = subprocess.run([*common, "--budget-usd", "0.000001"], env=_env(), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=60)
        assert server.requests == []  # neither spent anything
        yes = subprocess.run([*common, "--budget-usd", "0.000001", "-y"], env=_env(), capture_output=True,
                             text=True, timeout=60)
        assert len(server.requests) == 4
    assert dry.returncode == 0 and "20 entries in 4 requests" in dry.stdout and "estimated cost $" in dry.stdout
    assert over.returncode == 2 and "exceeds --budget-usd" in over.stderr and "-y" in over.stderr
    assert yes.returncode == 0, yes.stderr
    card = json.loads(next(runs.glob("*/run_card.json")).read_text(encoding="utf-8"))
    assert card["cost"]["source"] == "provider" and card["batch_size"] == 5
    assert all(r["batched"] for r in card["results"]) and card["tokens"]["cached_tokens"] > 0


def test_missing_key_and_model_are_one_line_user_errors(tmp_path: Path) -> None:
    src, ref = write_text_pair(tmp_path, 2)
    base = [*MT_EVAL, "run", "--source-file", str(src), "--reference-file", str(ref), "--source-lang", "en",
            "--target-lang", "es", "--method", "llm"]
    env = {k: v for k, v in os.environ.items() if k != "OPENROUTER_API_KEY"}
    no_model = subprocess.run(base, env=env, capture_output=True, text=True, timeout=60)
    no_key = subprocess.run([*base, "--model", "m"], env=env, capture_output=True, text=True, timeout=60)
    assert no_model.returncode == 2 and "--model" in no_model.stderr and "Traceback" not in no_model.stderr
    assert no_key.returncode == 2 and "OPENROUTER_API_KEY is not set" in no_key.stderr

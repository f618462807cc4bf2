"""Failures said as they happen: a refusal no retry can fix stops the run, an empty completion is retried,
a run with failed entries exits 3 after its card, naming each new kind of error as it appears. A real local
server, real processes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mt_eval.engine.failures import Failures, describe, error_kind
from mt_eval.engine.runner import RunStopped, run_method
from support.llm_fake import Fault, Translator, translate_text
from support.llm_helpers import make_dataset, method, run, serve, write_text_pair

MT_EVAL = [sys.executable, "-c", "from mt_eval.cli import main; main()"]
SECRET = "sk-test-FAILURES-1187"
EMPTY = {"model": "test/model", "choices": [{"index": 0, "finish_reason": "length",
                                             "message": {"role": "assistant", "content": "  "}}]}


def _cmd(src: Path, ref: Path, url: str, runs: Path, *extra: str) -> list[str]:
    return [*MT_EVAL, "run", "--source-file", str(src), "--reference-file", str(ref), "--source-lang", "en",
            "--target-lang", "es",
            "--method", "llm", "--model", "test/model", "--base-url", url, "--api-key-env", "FAKE_LLM_KEY",
            "--runs-dir", str(runs), "--bootstrap", "0", "--no-cache", *extra]


@pytest.mark.parametrize("fault", [None, Fault(status=404, body={"error": {"message": "model not found"}}),
                                   Fault(status=403),
                                   Fault(status=200, body={"error": {"code": 401, "message": "no"}})])
def test_a_refusal_stops_the_run_after_the_first_requests(tmp_path: Path, fault: Fault | None) -> None:
    ds = make_dataset(200)
    key = "the-right-key" if fault is None else None  # None: a 401 for the wrong key, else the fault itself
    with serve(Translator(), ds, api_key=key, fault_for=lambda n: fault) as server:
        m = method(server, concurrency=4)
        with pytest.raises(RunStopped) as info:
            asyncio.run(run_method(m, ds, source_language="en", target_language="es", journal=tmp_path / "j.jsonl"))
        assert len(server.requests) <= 16  # the workers' first requests, not 200
    assert "run stopped after 0 of 200 entries" in str(info.value) and info.value.exit_code == 2
    assert "\n" not in str(info.value)


def test_finished_entries_stay_in_the_journal_and_the_cli_says_one_line(tmp_path: Path) -> None:
    n = 40
    src, ref = write_text_pair(tmp_path, n)
    gone = Fault(status=404, body={"error": {"message": "model test/model not found"}})
    with serve(Translator(), make_dataset(n), fault_for=lambda k: gone if k > 10 else None) as server:
        runs = tmp_path / "runs"
        done = subprocess.run(_cmd(src, ref, server.base_url, runs, "--concurrency", "1"),
                              env={**os.environ, "FAKE_LLM_KEY": SECRET}, capture_output=True, text=True, timeout=120)
        sent = len(server.requests)
    assert done.returncode == 2 and sent == 11
    line = " ".join(done.stderr.split())
    assert "run stopped after 10 of 40 entries" in line and "HTTP 404: model test/model not found" in line
    assert "Traceback" not in done.stderr and "--resume" in line
    journal = next(runs.glob("*/journal.jsonl"))
    finished = [json.loads(s) for s in journal.read_text(encoding="utf-8").splitlines()]
    assert sorted(r["entry_id"] for r in finished if "entry_id" in r and r["error"] is None) == list(range(1, 11))
    assert not list(runs.glob("*/run_card.json"))


def test_an_empty_completion_is_retried_before_it_becomes_an_error(tmp_path: Path) -> None:
    ds = make_dataset(2)
    with serve(Translator(), ds) as server:
        server.inject(Fault(body=EMPTY), Fault(body=EMPTY))
        out, _, stats = run(method(server, concurrency=1, max_retries=3), ds)
        assert [t.text for t in out] == [translate_text(e.source) for e in ds.entries]  # no error, no empty text
        assert sum(t.extra["attempts"] for t in out) == 4 and stats.retries == 2 and stats.errors == 0
    with serve(Translator(), ds, fault_for=lambda n: Fault(body=EMPTY)) as server:
        out, _, stats = run(method(server, concurrency=1, max_retries=2), ds)
        assert len(server.requests) == 6
    assert all(t.error and "giving up after 3 attempts: empty completion (finish_reason length)" in t.error
               for t in out)
    assert list(stats.failures.kinds) == ["empty completion"] and stats.failures.kinds["empty completion"].count == 2


def test_error_kinds_and_lines() -> None:
    timeout = "http://x/v1/chat/completions: giving up after 6 attempts: timeout (ReadTimeout)"
    assert error_kind(timeout) == "timeout" and describe(timeout) == "timeout after 5 retries"
    assert error_kind("http://x: giving up after 3 attempts: HTTP 503") == "HTTP 503"
    failures = Failures.of([(17, timeout), (18, timeout), (20, "giving up after 1 attempts: HTTP 503")])
    assert failures.new_lines() == ["entry 17: timeout after 5 retries (first of this kind)",
                                    "entry 20: HTTP 503 after 0 retries (first of this kind)"]
    assert failures.new_lines() == []  # each kind is said once
    assert failures.summary(50) == "3 of 50 entries failed: timeout ×2, HTTP 503 ×1"
    assert failures.summary(3).startswith("every entry failed (3 of 3)")


def test_a_run_with_failed_entries_exits_3_after_its_card_and_says_each_kind_once(tmp_path: Path) -> None:
    n = 12
    src, ref = write_text_pair(tmp_path, n)
    fails = {3, 7, 9}
    with serve(Translator(), make_dataset(n), fault_for=lambda k: Fault(status=503) if k in fails else None) as server:
        runs = tmp_path / "runs"
        some = subprocess.run(_cmd(src, ref, server.base_url, runs, "--concurrency", "1", "--max-retries", "0"),
                              env={**os.environ, "FAKE_LLM_KEY": SECRET}, capture_output=True, text=True, timeout=120)
    assert some.returncode == 3, some.stderr
    said = " ".join(some.stderr.split())
    assert said.count("(first of this kind)") == 1 and "entry 3: HTTP 503 after 0 retries (first of this kind)" in said
    assert "3 of 12 entries failed: HTTP 503 ×3" in said
    card = json.loads(next(runs.glob("*/run_card.json")).read_text(encoding="utf-8"))
    assert [r["entry_id"] for r in card["results"] if r["error"]] == [3, 7, 9]


def test_a_run_whose_every_entry_failed_says_so(tmp_path: Path) -> None:
    src, ref = write_text_pair(tmp_path, 4)
    with serve(Translator(), make_dataset(4), fault_for=lambda k: Fault(status=500)) as server:
        runs = tmp_path / "runs"
        done = subprocess.run(_cmd(src, ref, server.base_url, runs, "--max-retries", "1"),
                              env={**os.environ, "FAKE_LLM_KEY": SECRET}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 3 and "every entry failed (4 of 4): HTTP 500 ×4" in " ".join(done.stderr.split())
    assert list(runs.glob("*/run_card.json"))


def test_dry_run_needs_no_api_key(tmp_path: Path) -> None:
    src, ref = write_text_pair(tmp_path, 6)
    env = {k: v for k, v in os.environ.items() if k != "FAKE_LLM_KEY"}
    with serve(Translator(), make_dataset(6), api_key=SECRET) as server:
        runs = tmp_path / "runs"
        dry = subprocess.run([*_cmd(src, ref, server.base_url, runs), "--dry-run"], env=env, capture_output=True,
                             text=True, timeout=60)
        real = subprocess.run(_cmd(src, ref, server.base_url, runs), env=env, capture_output=True, text=True,
                              timeout=60)
        assert server.requests == []
    assert dry.returncode == 0 and "6 entries in 6 requests" in dry.stdout, dry.stderr
    assert real.returncode == 2 and "FAKE_LLM_KEY is not set" in real.stderr
    assert not runs.exists()

"""``run --resume DIR`` trusts nothing in DIR: a crafted journal header is compared with the command line,
never followed. Real processes, a real local server counting requests and the keys it sees, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from support.llm_fake import FakeOpenAI, Translator
from support.llm_helpers import make_dataset, serve, write_text_pair

MT_EVAL = [sys.executable, "-c", "from mt_eval.cli import main; main()"]
SECRET = "sk-test-RESUME-7731"
N = 8

Craft = Callable[[dict[str, Any], Path, FakeOpenAI], None]


def _cmd(src: Path, ref: Path, url: str, runs: Path, *extra: str) -> list[str]:
    return [*MT_EVAL, "run", "--source-file", str(src), "--reference-file", str(ref), "--source-lang", "en",
            "--target-lang", "es",
            "--method", "llm", "--model", "test/model", "--base-url", url, "--api-key-env", "FAKE_LLM_KEY",
            "--runs-dir", str(runs), "--bootstrap", "0", "--no-cache", *extra]


def _env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "FAKE_LLM_KEY": SECRET, "OTHER_KEY": SECRET + "-other",
            "PYTHONPATH": os.pathsep.join([str(tmp / "plugins"), os.environ.get("PYTHONPATH", "")])}


def _interrupted_run(tmp: Path, server: FakeOpenAI) -> tuple[list[str], Path]:
    """A finished run cut back to 3 entries: what a crash leaves (header, some entries)."""
    src, ref = write_text_pair(tmp, N)
    runs = tmp / "runs"
    cmd = _cmd(src, ref, server.base_url, runs)
    done = subprocess.run(cmd, env=_env(tmp), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    journal = next(runs.glob("*/journal.jsonl"))
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    kept = [lines[0], *[r for r in lines if "entry_id" in r][:3]]
    journal.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    (journal.parent / "run_card.json").unlink()
    return cmd, journal


def _rewrite_header(journal: Path, change: Callable[[dict[str, Any]], None]) -> None:
    lines = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    change(lines[0]["_run"]["invocation"])
    journal.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")


def _plugin(tmp: Path) -> Path:
    """A module that, if ever imported, leaves a marker file (and would validate nothing)."""
    marker = tmp / "IMPORTED"
    (tmp / "plugins").mkdir(exist_ok=True)
    (tmp / "plugins" / "evil_validator.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "class Factory:\n    name = 'evil'\n    def validate(self, text, request):\n        return True, ''\n",
        encoding="utf-8")
    return marker


CRAFTED: dict[str, tuple[Craft, str]] = {
    "plugin validator": (lambda inv, tmp, other: inv["llm"].update(validator="plugin:evil_validator:Factory"),
                         "--validator"),
    "base_url": (lambda inv, tmp, other: inv["llm"].update(base_url=other.base_url), "--base-url"),
    "api_key_env": (lambda inv, tmp, other: inv["llm"].update(api_key_env="OTHER_KEY"), "--api-key-env"),
    "corpus path": (lambda inv, tmp, other: inv.update(corpus=str(tmp / "elsewhere.json")), "--corpus"),
    "method": (lambda inv, tmp, other: inv.update(method="pipeline:validate-retry"), "--method"),
}


# each case is two `mt-eval run` processes (~4 s of CPU): the flags that run code or send the key elsewhere stay in
# stage 1; the rest are the same refusal (the header's invocation against the command line's) and run in stage 2
FAST_CRAFTED = {"plugin validator", "base_url"}


@pytest.mark.parametrize("name", [n if n in FAST_CRAFTED else pytest.param(n, marks=pytest.mark.slow) for n in CRAFTED])
def test_a_crafted_header_is_refused_and_nothing_is_imported_or_sent(tmp_path: Path, name: str) -> None:
    craft, flag = CRAFTED[name]
    marker = _plugin(tmp_path)
    (tmp_path / "elsewhere.json").write_text('{"entries": []}', encoding="utf-8")
    translator = Translator()
    with serve(translator, make_dataset(N), api_key=SECRET) as server, FakeOpenAI(responder=Translator()) as other:
        cmd, journal = _interrupted_run(tmp_path, server)
        _rewrite_header(journal, lambda inv: craft(inv, tmp_path, other))
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
        assert other.requests == []  # the journal's server never hears from us, with or without a key
        assert len(server.requests) == before  # refused before anything is sent
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    message = " ".join(resumed.stderr.split())
    assert "cannot resume" in message and flag in message and "Traceback" not in message
    assert not marker.exists()  # the plugin the journal names was never imported
    assert not (journal.parent / "run_card.json").exists()


def test_the_plugin_marker_works_when_imported(tmp_path: Path) -> None:
    """The fixture is live: importing the module does leave the marker (so its absence above means something)."""
    marker = _plugin(tmp_path)
    subprocess.run([sys.executable, "-c", "import evil_validator"], env=_env(tmp_path), check=True)
    assert marker.exists()


def test_the_card_goes_where_the_command_line_says_never_where_the_journal_does(tmp_path: Path) -> None:
    evil = tmp_path / "not-here" / "card.json"
    mine = tmp_path / "mine.json"
    translator = Translator()
    with serve(translator, make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        _rewrite_header(journal, lambda inv: inv.update(out=str(evil)))
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "-o", str(mine), "--resume", str(journal.parent)], env=_env(tmp_path),
                                 capture_output=True, text=True, timeout=120)
        sent = server.requests[before:]
    assert resumed.returncode == 0, resumed.stderr
    assert not evil.exists() and not evil.parent.exists()
    assert json.loads(mine.read_text(encoding="utf-8"))["run_id"] == journal.parent.name
    assert len(sent) == N - 3 and all(r.headers.get("Authorization") == f"Bearer {SECRET}" for r in sent)


def test_a_changed_flag_is_refused_by_name_and_a_bare_resume_asks_for_the_options(tmp_path: Path) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        before = len(server.requests)
        changed = subprocess.run([*cmd, "--batch-size", "4", "--resume", str(journal.parent)], env=_env(tmp_path),
                                 capture_output=True, text=True, timeout=120)
        bare = subprocess.run([*MT_EVAL, "run", "--resume", str(journal.parent)], env=_env(tmp_path),
                              capture_output=True, text=True, timeout=120)
        assert len(server.requests) == before
    assert changed.returncode == 2 and "--batch-size is 4 here but 1 in the interrupted run" in " ".join(
        changed.stderr.split())
    assert bare.returncode == 2 and "give --method" in bare.stderr and "--resume" in bare.stderr


def test_malformed_entry_lines_are_translated_again_not_trusted(tmp_path: Path) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        with journal.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"entry_id": 5, "text": "x", "error": None, "usage": {"evil": 1}}) + "\n")
            fh.write(json.dumps({"entry_id": "6", "text": "x", "error": None}) + "\n")
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
        assert len(server.requests) - before == N - 3
    assert resumed.returncode == 0, resumed.stderr


def _strict(text: str) -> Any:
    """Parse as standard JSON: NaN, Infinity and -Infinity are not JSON."""
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-standard JSON literal {name} on the card")
    return json.loads(text, parse_constant=refuse)


def _not_done(journal: Path) -> int:
    done = {json.loads(line).get("entry_id") for line in journal.read_text(encoding="utf-8").splitlines()}
    return min(set(range(1, N + 1)) - done)


HOSTILE_LINES: dict[str, Callable[[int], str]] = {
    "latency NaN": lambda i: f'{{"entry_id": {i}, "text": "x", "latency_seconds": NaN}}',
    "latency Infinity": lambda i: f'{{"entry_id": {i}, "text": "x", "latency_seconds": Infinity}}',
    "latency negative": lambda i: f'{{"entry_id": {i}, "text": "x", "latency_seconds": -5}}',
    "cost overflowing a sum": lambda i: json.dumps({"entry_id": i, "text": "x", "usage": {"cost_usd": 1e308}}),
    "cost negative": lambda i: json.dumps({"entry_id": i, "text": "x", "usage": {"cost_usd": -1.0}}),
    "fractional tokens": lambda i: json.dumps({"entry_id": i, "text": "x", "usage": {"prompt_tokens": 1.5}}),
    "negative tokens": lambda i: json.dumps({"entry_id": i, "text": "x", "usage": {"completion_tokens": -3}}),
    "unhashable cost_source": lambda i: json.dumps({"entry_id": i, "text": "x", "extra": {"cost_source": ["a"]}}),
}


# one of each kind of number in stage 1 (non-finite latency, an overflowing sum, a negative count); the other
# cases go through the same line check (engine/journal) and run in stage 2
FAST_LINES = {"latency NaN", "cost overflowing a sum", "negative tokens"}


@pytest.mark.parametrize("kind", [k if k in FAST_LINES else pytest.param(k, marks=pytest.mark.slow)
                                  for k in sorted(HOSTILE_LINES)])
def test_a_line_with_a_bad_number_is_skipped_and_its_entry_translated_again(tmp_path: Path, kind: str) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        with journal.open("a", encoding="utf-8") as fh:
            fh.write(HOSTILE_LINES[kind](_not_done(journal)) + "\n")
            fh.write(HOSTILE_LINES[kind](_not_done(journal) + 1) + "\n")  # two: a sum that overflows
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
        assert len(server.requests) - before == N - 3
    assert resumed.returncode == 0, resumed.stderr
    card = _strict((journal.parent / "run_card.json").read_text(encoding="utf-8"))
    assert all(r["error"] is None and r.get("predicted") != "x" for r in card["results"])


def test_a_negative_or_non_finite_session_stamp_is_ignored(tmp_path: Path) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        with journal.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"_session": {"id": "evil", "elapsed_seconds": -1e9}}) + "\n")
            fh.write('{"_session": {"id": "nan", "elapsed_seconds": NaN}}\n')
            fh.write('{"_session": {"id": "inf", "elapsed_seconds": Infinity}}\n')
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    card = _strict((journal.parent / "run_card.json").read_text(encoding="utf-8"))
    assert 0 <= card["elapsed_seconds"] < 1e6


def test_non_utf8_bytes_in_the_journal_spoil_their_line_only(tmp_path: Path) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        with journal.open("ab") as fh:
            fh.write(b'{"entry_id": ' + str(_not_done(journal)).encode() + b', "text": "x"}\xff\n\x80\x81\n')
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
        sent = len(server.requests) - before
    assert resumed.returncode == 0, resumed.stderr
    assert sent == N - 3


def test_a_journal_that_is_a_directory_is_one_line_and_exit_2(tmp_path: Path) -> None:
    with serve(Translator(), make_dataset(N), api_key=SECRET) as server:
        cmd, journal = _interrupted_run(tmp_path, server)
        journal.unlink()
        journal.mkdir()
        before = len(server.requests)
        resumed = subprocess.run([*cmd, "--resume", str(journal.parent)], env=_env(tmp_path), capture_output=True,
                                 text=True, timeout=120)
        assert len(server.requests) == before
    assert resumed.returncode == 2, resumed.stderr
    assert "Traceback" not in resumed.stderr and len(resumed.stderr.strip().splitlines()) == 1
    assert str(journal) in resumed.stderr

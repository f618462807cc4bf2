"""The sandbox policy (declared defaults, the governance's sandbox.toml, recorded on the card) and the
runner's own failure modes: no bubblewrap, a sandbox that cannot start, a method that never reads."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mt_eval.errors import UserError
from mt_eval.methods.base import Translation
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.runner import SandboxReport, execute, score
from mt_eval.sovereign.sandbox import POLICY_FILE, SandboxPolicy, load_policy, new_workdir
from support.sovereign import TINY, small_dataset, write_policy


def test_policy_defaults_file_and_refusal(tmp_path: Path) -> None:
    assert load_policy(tmp_path) == SandboxPolicy()
    assert load_policy(write_policy(tmp_path / "g")) == TINY
    (tmp_path / POLICY_FILE).write_text("[limits]\nmemory = 5\n")
    with pytest.raises(UserError, match="not a sandbox policy") as caught:
        load_policy(tmp_path)
    assert POLICY_FILE in caught.value.one_line() and "memory_mb" in caught.value.one_line()


def test_the_policy_is_recorded_on_the_card(make_bundle) -> None:
    bundle = load_bundle(make_bundle("glossary-python"))
    dataset = small_dataset(3)
    report = SandboxReport(outcomes={e.id: "ok" for e in dataset.entries})
    card = score(dataset, bundle, [Translation(e.id, e.source) for e in dataset.entries], report, TINY, "t")
    config = card["method"]["config"]
    assert config["sandbox"] == TINY.as_card() and config["bundle_sha256"] == bundle.sha256
    assert config["egress"] == "none" and config["terms_version"] == "sovereign-terms-1"
    assert config["sandbox"]["seccomp_blocked"][0] == "ptrace"


def test_no_bubblewrap_is_one_line(make_bundle, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bundle = load_bundle(make_bundle("glossary-python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserError, match="bubblewrap is not installed"):
        execute(bundle, small_dataset(1), TINY, new_workdir() / "s")


def test_a_sandbox_that_cannot_start_is_the_machines_fault_not_the_methods(make_bundle) -> None:
    bundle = load_bundle(make_bundle("glossary-python"))
    broken = SandboxPolicy(**{**vars(TINY), "tmpfs_mb": 0})  # bwrap refuses a zero-size tmpfs
    with pytest.raises(UserError, match="the sandbox could not start"):
        execute(bundle, small_dataset(2), broken, new_workdir() / "s")


def test_a_method_posing_as_bubblewrap_never_gets_its_stderr_quoted(make_bundle) -> None:
    bundle = load_bundle(make_bundle("hostile", {"attacks.json": {}}))
    (bundle.root / "hostile.py").write_text("import sys\nsys.stderr.write('bwrap: ' + sys.stdin.readline())\n"
                                            "sys.exit(1)\n")
    dataset = small_dataset(1)
    with pytest.raises(UserError) as caught:
        execute(load_bundle(bundle.root), dataset, TINY, new_workdir() / "s")
    assert dataset.entries[0].source not in caught.value.one_line()


def test_a_method_that_never_reads_cannot_block_the_harness(make_bundle) -> None:
    bundle = load_bundle(make_bundle("deaf"))
    entry = small_dataset(1).entries[0]
    huge = small_dataset(1).model_copy(update={"entries": [entry.model_copy(update={"source": "word " * 200_000})]})
    translations, report = execute(bundle, huge, TINY, new_workdir() / "s")
    assert report.outcomes == {entry.id: "timeout"} and translations[0].error == "timeout"


def test_the_sandbox_dies_with_the_harness(make_bundle, tmp_path: Path) -> None:
    """kill -9 of the harness leaves no sandboxed process behind (--die-with-parent)."""
    bundle = make_bundle("deaf")
    marker = "4242.5"  # a sleep length no other process uses, to find the sandboxed one
    (bundle / "method.toml").write_text((bundle / "method.toml").read_text().replace('"60"', f'"{marker}"'))
    script = (f"from support.sovereign import small_dataset, TINY\nfrom dataclasses import replace\n"
              f"from mt_eval.sovereign.bundle import load_bundle\nfrom mt_eval.sovereign.runner import execute\n"
              f"from mt_eval.sovereign.sandbox import new_workdir\n"
              f"execute(load_bundle({str(bundle)!r}), small_dataset(1), replace(TINY, wall_seconds_per_entry=60),"
              f" new_workdir() / 's')\n")
    harness = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[1])  # tests/: support

    def sandboxed() -> list[str]:
        ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
        return [line for line in ps.splitlines() if f"sleep {marker}" in line and "bwrap" not in line]

    deadline = time.monotonic() + 20
    while not sandboxed() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sandboxed(), "the sandboxed method started"
    os.kill(harness.pid, signal.SIGKILL)
    harness.wait()
    deadline = time.monotonic() + 5
    while sandboxed() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert sandboxed() == []

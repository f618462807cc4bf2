"""Ctrl-C during a sweep: no further cell starts and the sweep returns at once, without waiting for a running cell
(whose engine cannot be interrupted from outside its thread), so ``mt-eval sweep`` exits 130 normally instead of
``os._exit(130)`` (issue 23 item 3)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from mt_eval.stats.config import BootstrapConfig
from mt_eval.sweep import execute
from mt_eval.sweep.plan import Cell


def test_an_interrupt_returns_without_waiting_for_running_cells(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cells = [Cell(f"c{i}", {}, "apertium:eng-spa", {}, tmp_path / "corpus.json") for i in range(4)]
    settings = execute.Settings(tmp_path, "default", {}, 2, None, BootstrapConfig(n_resamples=0))
    release = threading.Event()
    started: list[str] = []
    ended: list[str] = []

    def fake_cell(cell: Cell, settings: execute.Settings, progress: object = None) -> execute.Outcome:
        started.append(cell.key)
        if cell.key != "c0":
            release.wait(5)  # a cell still translating when Ctrl-C comes
            ended.append(cell.key)
        return execute.Outcome(cell, "ran")

    def interrupt(outcome: execute.Outcome) -> None:
        raise KeyboardInterrupt  # Ctrl-C on the calling thread as the first cell ends

    monkeypatch.setattr(execute, "run_cell", fake_cell)
    try:
        with pytest.raises(KeyboardInterrupt):
            execute.run_local(cells, settings, jobs=2, done=interrupt)
        assert ended == []  # returned while the other cell was still running: nothing waited for it
    finally:
        release.set()
    assert "c3" not in started  # no cell starts after the interrupt


def test_the_sweep_command_never_calls_os_exit() -> None:
    source = (Path(execute.__file__).parents[1] / "cli" / "sweep.py").read_text(encoding="utf-8")
    assert "os._exit" not in source

"""The journal survives a torn last line (kill -9 mid-write), resumes keep only successes, the event
loop never waits on fsync, and each session's time is stamped with its entries."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from mt_eval.engine.journal import read_sessions
from mt_eval.engine.runner import Journal, read_journal, run_method
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, TranslationRequest
from support.llm_helpers import make_dataset


class Upper:
    identity = MethodIdentity("upper", MethodClass.CUSTOM_PLUGIN, "1", "upper")

    def __init__(self) -> None:
        self.seen: list[int] = []

    async def translate(self, requests: list[TranslationRequest]) -> list[Translation]:
        self.seen += [r.entry_id for r in requests]
        return [Translation(r.entry_id, r.source.upper()) for r in requests]


def test_torn_tail_is_cut_and_only_unfinished_entries_are_sent(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    log = Journal(path)
    log.header({"run_id": "r"})
    log.append([Translation(1, "ONE"), Translation(2, error="HTTP 500")])
    log.close()
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"entry_id": 3, "text": "TH')  # the process died here
    header, done = read_journal(path)
    assert header == {"run_id": "r"} and set(done) == {1, 2} and done[2].error == "HTTP 500"
    method, ds = Upper(), make_dataset(4)
    out, _ = asyncio.run(run_method(method, ds, source_language="en", target_language="es", journal=path,
                                    done=done))
    assert method.seen == [2, 3, 4]  # 1 succeeded before; 2 failed and is retried
    assert [t.text for t in out] == ["ONE", *(e.source.upper() for e in ds.entries[1:])]
    _, after = read_journal(path)
    assert all(t.error is None for t in after.values()) and set(after) == {1, 2, 3, 4}


def test_appends_are_flushed_at_once_and_fsynced_off_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced_on: list[str] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced_on.append(threading.current_thread().name), real(fd)))
    path = tmp_path / "journal.jsonl"
    log = Journal(path)
    caller = threading.current_thread().name
    for i in range(1, 6):
        log.append([Translation(i, f"t{i}")])
        assert len(path.read_text(encoding="utf-8").splitlines()) == i  # readable by another process now
    assert caller not in synced_on  # appending never waited on the disk
    deadline = time.monotonic() + 5
    while not synced_on and time.monotonic() < deadline:
        time.sleep(0.01)
    assert synced_on and set(synced_on) == {"journal-fsync"}
    log.close()
    assert synced_on[-1] == caller  # close syncs what is left, after the background thread stopped
    assert not any(t.name == "journal-fsync" and t.is_alive() for t in threading.enumerate())


def test_sessions_are_summed_and_stamps_do_not_read_as_entries(tmp_path: Path) -> None:
    path, ds = tmp_path / "journal.jsonl", make_dataset(6)
    asyncio.run(run_method(Upper(), make_dataset(3), source_language="en", target_language="es", journal=path))
    (first,) = read_sessions(path).values()
    _, done = read_journal(path)
    assert set(done) == {1, 2, 3} and first > 0
    _, total = asyncio.run(run_method(Upper(), ds, source_language="en", target_language="es", journal=path,
                                      done=done))
    sessions = read_sessions(path)
    assert len(sessions) == 2 and first in sessions.values()
    assert total > first and total == pytest.approx(sum(sessions.values()))

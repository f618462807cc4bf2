"""A reader never sees the audit log between a line's append and the head's update.

Found by the full suite under load: four concurrent contest submissions, budget 1; one of the refused ones was
refused with "the audit log fails verification (head.json says N lines …; the log has N+1 …)" instead of the
budget, because it read the log while another submission was being recorded. Here the writer is held exactly in
that window (the head's write waits on an event) while another thread reads.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mt_eval.sovereign import governance as governance_module
from mt_eval.sovereign.governance import Governance


def test_a_reader_waits_for_the_writer_instead_of_seeing_half_a_record(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    gov = Governance(tmp_path / "gov")
    gov.record({"kind": "run", "who": "first"})
    in_window, release = threading.Event(), threading.Event()
    real_write = governance_module.write_atomic

    def slow_head(path: Path, data: bytes) -> None:
        if path == gov.head_path:  # the line is appended, the head not yet updated
            in_window.set()
            assert release.wait(10)
        real_write(path, data)

    monkeypatch.setattr(governance_module, "write_atomic", slow_head)
    writer = threading.Thread(target=gov.record, args=({"kind": "run", "who": "second"},))
    writer.start()
    assert in_window.wait(10)
    seen: dict[str, Any] = {}

    def read() -> None:
        try:
            seen["events"] = gov.events()
            seen["problems"] = gov.verify_log()
        except Exception as exc:  # the failure this test is about: reported, not swallowed by the thread
            seen["error"] = exc

    reader = threading.Thread(target=read)
    reader.start()
    reader.join(0.5)
    assert reader.is_alive(), f"the reader did not wait for the writer: {seen}"
    release.set()
    writer.join(10)
    reader.join(10)
    assert "error" not in seen, seen["error"]
    assert [e["who"] for e in seen["events"]] == ["first", "second"] and seen["problems"] == []


def test_reading_a_governance_folder_that_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    gov = Governance(tmp_path / "nowhere")
    assert gov.events() == [] and gov.verify_log() == []
    assert not (tmp_path / "nowhere").exists()

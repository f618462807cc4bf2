"""The journal survives a torn last line (kill -9 mid-write) and resumes keep only successes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from llm_helpers import make_dataset

from mt_eval.engine.runner import Journal, read_journal, run_method
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, TranslationRequest


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

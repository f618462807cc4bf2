"""Run a method over a dataset: requests without references, a journal, progress, alignment.

Every finished chunk is appended to the run journal (JSONL, flushed and fsynced) before the
next starts, so a crash or Ctrl-C loses no finished entry.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

from mt_eval.corpus.models import Dataset, Entry
from mt_eval.methods.base import Method, Translation, TranslationRequest

Progress = Callable[[int, int], None]  # (entries done in this chunk, errors in this chunk)


def request_for(entry: Entry, source_language: str, target_language: str) -> TranslationRequest:
    """The only way entries reach a method: the reference is not copied."""
    return TranslationRequest(
        entry_id=entry.id,
        source=entry.source,
        source_language=source_language,
        target_language=target_language,
        register=entry.register.value if entry.register else None,
        context=entry.context.value if entry.context else None,
        difficulty=entry.difficulty,
    )


def _align(requests: Sequence[TranslationRequest], got: Sequence[Translation], name: str) -> list[Translation]:
    """One translation per request, in request order; missing or duplicated ids become errors."""
    by_id: dict[int, list[Translation]] = {}
    for t in got:
        by_id.setdefault(t.entry_id, []).append(t)
    out = []
    for req in requests:
        found = by_id.get(req.entry_id, [])
        if len(found) == 1:
            out.append(found[0])
        else:
            why = "no translation" if not found else f"{len(found)} translations"
            out.append(Translation(req.entry_id, error=f"method {name} returned {why} for this entry"))
    return out


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = path.open("a", encoding="utf-8")

    def append(self, translations: Sequence[Translation]) -> None:
        for t in translations:
            self._fh.write(json.dumps(asdict(t), ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


async def run_method(
    method: Method,
    dataset: Dataset,
    *,
    source_language: str,
    target_language: str,
    journal: Path | None = None,
    progress: Progress | None = None,
    chunk_size: int = 100,
) -> tuple[list[Translation], float]:
    """Translate every entry; returns translations in corpus order and the wall-clock seconds."""
    requests = [request_for(e, source_language, target_language) for e in dataset.entries]
    log = Journal(journal) if journal else None
    out: list[Translation] = []
    start = time.perf_counter()
    try:
        for i in range(0, len(requests), chunk_size):
            chunk = requests[i : i + chunk_size]
            got = _align(chunk, await method.translate(chunk), method.identity.name)
            out.extend(got)
            if log:
                log.append(got)
            if progress:
                progress(len(got), sum(1 for t in got if t.error))
    finally:
        if log:
            log.close()
    return out, time.perf_counter() - start

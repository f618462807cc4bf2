"""Run a method over a dataset: a work queue, many requests in flight, a crash-safe journal, resume.

Entries are cut into groups of the method's ``batch_size`` (100 for methods without one, which
translate a whole chunk themselves) and put on a queue. Methods that declare ``concurrency``
get four workers per slot: the HTTP client caps requests truly in flight at ``concurrency``, and
the spare workers keep the pipe full while some requests sleep before a retry (the client frees
its slot while waiting). Other methods get one worker, as before.

Every finished group is appended to the journal (JSONL) and flushed to the kernel at once, so
``kill -9`` loses nothing finished; ``fsync`` is coalesced to at most every 0.2 s (and on close),
so a power cut loses at most that much while the event loop never stalls on the disk. A resumed
run reads the journal, keeps every entry that succeeded and sends only the rest.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset, Entry
from mt_eval.methods.base import Method, Translation, TranslationRequest, Usage, as_method


@dataclass
class EngineStats:
    """What the progress bar shows; updated as groups finish."""

    total: int = 0
    done: int = 0
    errors: int = 0
    retries: int = 0
    resumed: int = 0
    tokens: int = 0
    cost_usd: float = 0.0


Progress = Callable[[EngineStats], None]


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
    """Append-only JSONL of finished entries; the first line may be a ``{"_run": …}`` header."""

    FSYNC_EVERY = 0.2

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        _drop_torn_tail(path)
        self._fh = path.open("a", encoding="utf-8")
        self._synced = time.monotonic()

    def header(self, meta: dict[str, Any]) -> None:
        self._write([json.dumps({"_run": meta}, ensure_ascii=False)], force_sync=True)

    def append(self, translations: Sequence[Translation]) -> None:
        self._write([json.dumps(asdict(t), ensure_ascii=False) for t in translations])

    def _write(self, lines: list[str], force_sync: bool = False) -> None:
        self._fh.write("".join(line + "\n" for line in lines))
        self._fh.flush()
        now = time.monotonic()
        if force_sync or now - self._synced >= self.FSYNC_EVERY:
            os.fsync(self._fh.fileno())
            self._synced = now

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


def _drop_torn_tail(path: Path) -> None:
    """A process killed mid-write leaves a partial last line; cut it so appends stay valid JSONL."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        with path.open("r+b") as fh:
            fh.truncate(data.rfind(b"\n") + 1)


def read_journal(path: Path) -> tuple[dict[str, Any], dict[int, Translation]]:
    """(header, last record per entry id); unreadable lines (a torn tail) are skipped."""
    header: dict[str, Any] = {}
    done: dict[int, Translation] = {}
    if not path.exists():
        return header, done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "_run" in rec:
            header = rec["_run"]
            continue
        usage = Usage(**rec.get("usage") or {})
        done[int(rec["entry_id"])] = Translation(
            int(rec["entry_id"]), rec.get("text", ""), rec.get("error"), float(rec.get("latency_seconds", 0.0)),
            usage, rec.get("model_id"), rec.get("extra") or {})
    return header, done


async def run_method(
    method: Method,
    dataset: Dataset,
    *,
    source_language: str,
    target_language: str,
    journal: Path | Journal | None = None,
    progress: Progress | None = None,
    done: Mapping[int, Translation] | None = None,
    chunk_size: int = 100,
) -> tuple[list[Translation], float]:
    """Translate every entry not already ``done`` (successfully); returns all, in corpus order."""
    method = as_method(method)
    kept = {i: t for i, t in (done or {}).items() if t.error is None}
    requests = [request_for(e, source_language, target_language) for e in dataset.entries if e.id not in kept]
    size = method.batch_size or chunk_size
    slots = method.concurrency
    workers = max(1, 4 * slots) if slots else 1
    queue: asyncio.Queue[list[TranslationRequest]] = asyncio.Queue()
    for i in range(0, len(requests), size):
        queue.put_nowait(requests[i : i + size])
    log = Journal(journal) if isinstance(journal, Path) else journal
    stats = EngineStats(total=len(dataset.entries), done=len(kept), resumed=len(kept))
    results: dict[int, Translation] = dict(kept)

    async def worker() -> None:
        while True:
            try:
                group = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            got = _align(group, await method.translate(group), method.identity.name)
            if log:
                log.append(got)
            for t in got:
                results[t.entry_id] = t
                stats.tokens += t.usage.prompt_tokens + t.usage.completion_tokens
                stats.cost_usd += t.usage.cost_usd
            stats.done += len(got)
            stats.errors += sum(1 for t in got if t.error)
            stats.retries = method.retries
            if progress:
                progress(stats)

    start = time.perf_counter()
    try:
        await method.open()
        tasks = [asyncio.create_task(worker()) for _ in range(min(workers, max(1, queue.qsize())))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
    finally:
        await method.close()
        if log and log is not journal:
            log.close()
    return [results[e.id] for e in dataset.entries], time.perf_counter() - start

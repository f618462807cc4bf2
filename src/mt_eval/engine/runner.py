"""Run a method over a dataset: a work queue, many requests in flight, a crash-safe journal, resume.

Entries are cut into groups of the method's ``batch_size`` (100 for methods without one, which
translate a whole chunk themselves) and put on a queue. Methods that declare ``concurrency``
get four workers per slot: the HTTP client caps requests truly in flight at ``concurrency``, and
the spare workers keep the pipe full while some requests sleep before a retry (the client frees
its slot while waiting). Other methods get one worker, as before.

Every finished group is appended to the journal (``engine/journal.py``: JSONL, flushed to the
kernel at once so ``kill -9`` loses nothing finished; ``fsync`` on a background thread, so the
event loop never waits on the disk) with the session's elapsed time. A resumed run reads the
journal, keeps every entry that succeeded and sends only the rest, and its elapsed time is the
sum over its sessions.

Entry errors are counted by kind as they finish (``EngineStats.failures``, see
``engine/failures.py``) so the command line can report each new kind at once. A method that raises
a :class:`~mt_eval.errors.UserError` instead of returning an entry error (a provider refusing the
key or the model: every other entry would get the same answer) stops the run: the workers are
cancelled, what finished stays in the journal, and :class:`RunStopped` says how far it got.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mt_eval.corpus.models import Dataset, Entry
from mt_eval.engine.failures import Failures
from mt_eval.engine.journal import Journal, JournalSession, read_journal
from mt_eval.errors import UserError
from mt_eval.methods.base import Method, Translation, TranslationRequest, as_method

__all__ = ["EngineStats", "Journal", "Progress", "RunStopped", "read_journal", "request_for", "run_method"]


class RunStopped(UserError):
    """The method refused to go on (bad key, unknown model): one line, exit 2, the journal kept."""

    def __init__(self, cause: UserError, done: int, total: int, journal: Path | None) -> None:
        self.cause, self.done, self.total, self.journal = cause, done, total, journal
        kept = f"the {done} finished entries are kept in {journal}; " if journal and done else ""
        super().__init__(f"run stopped after {done} of {total} entries: {cause.one_line()}",
                         hint=f"{kept}fix it and run again" + (" with --resume" if journal else ""))


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
    failures: Failures = field(default_factory=Failures)


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
    """Translate every entry not already ``done`` (successfully).

    Returns every translation, in corpus order, and the run's elapsed seconds: with a journal,
    summed over every session recorded in it (a resumed run counts its interrupted sessions).
    """
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
    session = JournalSession()  # this process's share of the run's elapsed time starts now

    async def worker() -> None:
        while True:
            try:
                group = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                answered = await method.translate(group)
            except UserError as exc:  # not one entry's failure: every entry would fail the same way
                raise RunStopped(exc, stats.done, stats.total, log.path if log else None) from exc
            got = _align(group, answered, method.identity.name)
            if log:
                log.append(got, session)
            for t in got:
                results[t.entry_id] = t
                stats.tokens += t.usage.prompt_tokens + t.usage.completion_tokens
                stats.cost_usd += t.usage.cost_usd
            stats.done += len(got)
            for t in got:
                if t.error:
                    stats.failures.add(t.entry_id, t.error)
            stats.errors = stats.failures.total()
            stats.retries = method.retries
            if progress:
                progress(stats)

    try:
        await method.open()
        tasks = [asyncio.create_task(worker()) for _ in range(min(workers, max(1, queue.qsize())))]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)  # let them unwind before close()
    finally:
        await method.close()
        if log:
            log.stamp(session)
            if log is not journal:
                log.close()
    return [results[e.id] for e in dataset.entries], log.elapsed_seconds() if log else session.elapsed()

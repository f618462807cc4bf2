"""The run journal: an append-only JSONL file that makes a run crash-safe and resumable.

Line kinds: a ``{"_run": {…}}`` header first (the run's identity and the options it ran with, which
a resume *compares* with its own command line and never follows: ``engine/session.py``),
one line per finished entry (a :class:`Translation`), and ``{"_session": {"id", "elapsed_seconds"}}``
time stamps. Every process that runs the engine over the journal is one *session*; each append
carries, in the same write, how long its session has been running, so a session killed with
``kill -9`` still counts its time up to its last finished entry, and a resumed run's elapsed
time is the sum over its sessions (the last stamp of each).

Durability without stalling the event loop: each append is written and flushed to the kernel
before it returns (``kill -9`` loses nothing finished), while ``fsync`` (which only matters for a
power cut, and takes milliseconds on a busy disk) runs on a background thread at most every
``FSYNC_EVERY`` seconds when something new was written, and once more on close.
"""

from __future__ import annotations

import json
import math
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.methods.base import Translation, Usage

DEFAULT_RUNS_DIR = "runs"
"""Where a run's directory, ``<run_id>/`` (journal, card), goes unless told otherwise (``api.orchestrate.run``
and the CLI's ``--runs-dir`` both read this)."""
MAX_NUMBER = 1e12
"""The largest seconds or US dollars one journal line may carry: sums over a run stay finite."""
MAX_TOKENS = 2**53
"""The largest token count one journal line may carry (exact as a float, so costs stay finite)."""


class JournalSession:
    """One engine run over a journal: an id and a clock started when the run starts."""

    def __init__(self) -> None:
        self.id = uuid.uuid4().hex[:12]
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started


class Journal:
    """Append-only JSONL of finished entries; see the module docstring for the line kinds."""

    FSYNC_EVERY = 0.2

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _drop_torn_tail(path)
            self._sessions = read_sessions(path)
            self._fh = path.open("a", encoding="utf-8")
        except OSError as exc:
            raise UserError(f"cannot write the run journal: {exc.strerror or exc}", file=str(path)) from None
        self._dirty = False
        self._closing = threading.Event()
        self._syncer = threading.Thread(target=self._sync_periodically, name="journal-fsync", daemon=True)
        self._syncer.start()

    def header(self, meta: dict[str, Any]) -> None:
        self._write([{"_run": meta}])
        os.fsync(self._fh.fileno())  # once per run: the run exists on disk before anything is sent

    def append(self, translations: Sequence[Translation], session: JournalSession | None = None) -> None:
        """Write finished entries (and the session's elapsed time) in one write, flushed at once."""
        records: list[dict[str, Any]] = [asdict(t) for t in translations]
        if session is not None:
            records.append(self._stamp_record(session))
        self._write(records)

    def stamp(self, session: JournalSession) -> None:
        """Record the session's elapsed time now (at its end: the time after the last entry too)."""
        self._write([self._stamp_record(session)])

    def elapsed_seconds(self) -> float:
        """The run's elapsed time: every session's last stamp, summed (this process's included)."""
        return sum(self._sessions.values())

    def _stamp_record(self, session: JournalSession) -> dict[str, Any]:
        elapsed = round(session.elapsed(), 6)  # what the file says is what this process sums
        self._sessions[session.id] = elapsed
        return {"_session": {"id": session.id, "elapsed_seconds": elapsed}}

    def _write(self, records: list[dict[str, Any]]) -> None:
        self._fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        self._fh.flush()  # in the kernel now: survives kill -9
        self._dirty = True

    def _sync_periodically(self) -> None:
        fd = self._fh.fileno()
        while not self._closing.wait(self.FSYNC_EVERY):
            if self._dirty:
                self._dirty = False
                os.fsync(fd)  # releases the GIL: the event loop keeps running meanwhile

    def close(self) -> None:
        if self._fh.closed:
            return
        self._closing.set()
        self._syncer.join()
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


def _records(path: Path) -> Iterator[dict[str, Any]]:
    if not path.exists():
        return
    try:
        text = path.read_bytes().decode("utf-8", errors="replace")  # a bad byte spoils its line only
    except OSError as exc:
        raise UserError(f"cannot read the run journal: {exc.strerror or exc}", file=str(path)) from None
    for line in text.splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue  # a torn tail
        if isinstance(rec, dict):
            yield rec


def read_sessions(path: Path) -> dict[str, float]:
    """Each session's last recorded elapsed seconds (journals written before stamps existed: none)."""
    out: dict[str, float] = {}
    for rec in _records(path):
        stamp = rec.get("_session")
        if isinstance(stamp, dict) and _number(stamp.get("elapsed_seconds")):
            out[str(stamp.get("id"))] = float(stamp["elapsed_seconds"])
    return out


def read_journal(path: Path) -> tuple[dict[str, Any], dict[int, Translation]]:
    """(header, last record per entry id); unreadable lines (a torn tail) are skipped.

    The file is data from disk, perhaps not ours: an entry line of the wrong shape is skipped (the
    entry is simply translated again), never turned into an exception or an object it describes.
    """
    header: dict[str, Any] = {}
    done: dict[int, Translation] = {}
    for rec in _records(path):
        if "_run" in rec:
            header = rec["_run"] if isinstance(rec["_run"], dict) else {}
            continue
        if "entry_id" not in rec:
            continue  # a session stamp
        if (t := _translation(rec)) is not None:
            done[t.entry_id] = t
    return header, done


def _translation(rec: dict[str, Any]) -> Translation | None:
    ident, text, error = rec.get("entry_id"), rec.get("text", ""), rec.get("error")
    latency, usage, extra = rec.get("latency_seconds", 0.0), rec.get("usage") or {}, rec.get("extra") or {}
    if (isinstance(ident, bool) or not isinstance(ident, int) or not isinstance(text, str)
            or not isinstance(error, str | None) or not _number(latency) or not isinstance(usage, dict)
            or not isinstance(extra, dict) or not isinstance(rec.get("model_id"), str | None)):
        return None
    fields = Usage.__dataclass_fields__
    if set(usage) - set(fields) or not all(
            _number(v) if k == "cost_usd" else _count(v) for k, v in usage.items()):
        return None
    if not isinstance(extra.get("cost_source", ""), str):
        return None
    return Translation(ident, text, error, float(latency), Usage(**usage), rec.get("model_id"), extra)


def _number(value: Any) -> bool:
    """Seconds or dollars: finite, not negative, and small enough that a run's sum stays finite."""
    return (isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= MAX_NUMBER
            and math.isfinite(value))


def _count(value: Any) -> bool:
    """A token count: an integer, not negative."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS

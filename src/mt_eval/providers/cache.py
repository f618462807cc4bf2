"""SQLite cache of LLM responses (docs/decisions.md §17).

The key is a SHA-256 over everything that can change the answer: provider and base URL, model,
the full message list (system prompt, coaching and the entry text), temperature, seed, max tokens
and the method version. Only successful, non-empty responses are stored: an error, a timeout or
an empty reply is never cached, so a flaky run cannot poison the next one. A hit costs nothing
and is reported with zero usage (the card records what this run spent).

The database runs in WAL mode with ``synchronous=NORMAL``: a commit is a write to the WAL, not an
``fsync``, so storing a response costs the event loop microseconds instead of a disk flush per
request. The file stays consistent after any crash; a power cut can lose the last few answers,
which only means they are asked again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

DEFAULT_CACHE = ".mt-eval-cache/llm-responses.sqlite"


@dataclass(frozen=True)
class CachedResponse:
    content: str
    model_id: str


def cache_key(**parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


def open_sqlite_cache(path: Path, schema: str, what: str) -> sqlite3.Connection:
    """A cache database at ``path`` (its folder made), in WAL mode so that readers never wait for the one
    writer, with ``schema`` (a ``CREATE TABLE IF NOT EXISTS``) applied; any failure is one line."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(path, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(schema)
        db.commit()
    except (OSError, sqlite3.Error) as exc:
        raise UserError(f"cannot open the {what}: {exc}", file=str(path)) from exc
    return db


class ResponseCache:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._db = open_sqlite_cache(self.path, "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, "
                                     "content TEXT NOT NULL, model_id TEXT NOT NULL, created_at TEXT NOT NULL)",
                                     "response cache")

    def get(self, key: str) -> CachedResponse | None:
        row = self._db.execute("SELECT content, model_id FROM responses WHERE key=?", (key,)).fetchone()
        return CachedResponse(str(row[0]), str(row[1])) if row else None

    def put(self, key: str, content: str, model_id: str) -> None:
        if not content.strip():
            return  # an empty reply is a failure, never a cached answer
        self._db.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?)",
                         (key, content, model_id, datetime.now(UTC).isoformat()))
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def contents(self) -> list[str]:
        return [str(r[0]) for r in self._db.execute("SELECT content FROM responses")]

    def close(self) -> None:
        self._db.close()

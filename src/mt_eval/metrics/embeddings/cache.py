"""SQLite cache of sentence embeddings, keyed by backend, model and the SHA-256 of the embedded text.

Embedding a reference set is the slow part of ``semantic_score`` (the bundled 4-bit e5 embeds about
15–20 TED sentences per second per core), and every system scored against the same references
re-embeds them; ``verify`` re-embeds every output. A vector depends only on (backend, model, text),
so it is stored once under that key and read back bit for bit (float32 blob). The text itself is
not stored, only its hash: the cache may sit beside secret segments' vectors without holding
their text.

WAL mode with ``synchronous=NORMAL`` as the LLM response cache (``providers/cache.py``): a crash can
lose the last vectors written, which only means they are computed again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

DEFAULT_EMBEDDING_CACHE = ".mt-eval-cache/embeddings.sqlite"
_BATCH = 500  # SQLite's default limit on bound parameters is 999 (older builds); stay well under it


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """``get_many``/``put_many`` over the vectors; ``get_verdicts``/``put_verdicts`` over answers of deterministic
    per-text checks (semantic_score's wrong-language check: lingua loads its models in every process, seconds,
    for answers that never change); opened per scoring, closed by ``close``."""

    def __init__(self, path: str | Path) -> None:
        # imported here: mt_eval.providers pulls in httpx and the OpenAI client (~3 s on a loaded machine), which a
        # command that only parses --semantic (run and score do, on every call) should not pay
        from mt_eval.providers.cache import open_sqlite_cache

        self.path = Path(path)
        self._db = open_sqlite_cache(self.path, "CREATE TABLE IF NOT EXISTS embeddings (backend TEXT NOT NULL, "
                                     "model TEXT NOT NULL, text_sha256 TEXT NOT NULL, dim INTEGER NOT NULL, "
                                     "vector BLOB NOT NULL, PRIMARY KEY (backend, model, text_sha256))",
                                     "embedding cache")
        self._db.execute("CREATE TABLE IF NOT EXISTS verdicts (rule TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
                         "verdict INTEGER NOT NULL, PRIMARY KEY (rule, text_sha256))")

    def get_many(self, backend: str, model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors of ``texts`` by text (a text not cached is absent)."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, np.ndarray] = {}
        hashes = list(keys)
        for start in range(0, len(hashes), _BATCH):
            chunk = hashes[start:start + _BATCH]
            marks = ",".join("?" * len(chunk))  # only "?" marks are formatted into the SQL
            rows = self._db.execute(
                f"SELECT text_sha256, dim, vector FROM embeddings WHERE backend=? AND model=? "
                f"AND text_sha256 IN ({marks})", (backend, model, *chunk)).fetchall()
            for digest, dim, blob in rows:
                vector = np.frombuffer(blob, dtype=np.float32)
                if vector.shape == (dim,):  # a truncated row is recomputed, never used
                    found[keys[digest]] = vector
        return found

    def put_many(self, backend: str, model: str, texts: Sequence[str], vectors: np.ndarray) -> None:
        rows = [(backend, model, text_key(t), int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes())
                for t, v in zip(texts, vectors, strict=True)]
        self._db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)
        self._db.commit()

    def get_verdicts(self, rule: str, texts: Sequence[str]) -> dict[str, bool]:
        """Cached yes/no answers of a deterministic check (``rule`` names it and its version) by text."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, bool] = {}
        hashes = list(keys)
        for start in range(0, len(hashes), _BATCH):
            chunk = hashes[start:start + _BATCH]
            marks = ",".join("?" * len(chunk))  # only "?" marks are formatted into the SQL
            rows = self._db.execute(f"SELECT text_sha256, verdict FROM verdicts WHERE rule=? AND text_sha256 IN "
                                    f"({marks})", (rule, *chunk)).fetchall()
            found.update((keys[digest], bool(verdict)) for digest, verdict in rows)
        return found

    def put_verdicts(self, rule: str, verdicts: dict[str, bool]) -> None:
        self._db.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?)",
                             [(rule, text_key(t), int(v)) for t, v in verdicts.items()])
        self._db.commit()

    def close(self) -> None:
        self._db.close()

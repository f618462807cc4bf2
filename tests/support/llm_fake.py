"""A deterministic "translator" for FakeOpenAI: answers single, batched and feedback prompts.

Speaks the prompt format of ``mt_eval.methods.prompts``: a single request ends with ``Text:\\n``
and the source; a batched one carries ``{"entries": [...]}`` and gets ``{"translations": [...]}``
back. ``misnumber_rate`` makes a deterministic share of batched answers carry the wrong id (an id
the batch does not have, or a neighbour's, which then appears twice). Every entry id the server
was asked about is counted in ``asked`` (server side), per request kind.
"""

from __future__ import annotations

import json
import sys
import threading
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

from support.fake_openai import FakeOpenAI, Fault

__all__ = ["FakeOpenAI", "Fault", "Translator", "translate_text"]


def translate_text(source: str) -> str:
    """Deterministic and lossy enough that scores are neither 0 nor 100."""
    words = source.split()
    return " ".join(w.lower() if i % 2 else w for i, w in enumerate(words))


class Translator:
    def __init__(self, misnumber_rate: float = 0.0) -> None:
        self.misnumber_rate = misnumber_rate
        self.asked: Counter[int] = Counter()
        self.single_ids: list[int] = []
        self.batches = 0
        self.misnumbered: set[int] = set()
        self._lock = threading.Lock()
        self._by_source: dict[str, int] = {}

    def register(self, entries: list[tuple[int, str]]) -> None:
        """Lets single requests (which carry only the text) be counted per entry id."""
        self._by_source = {src: i for i, src in entries}

    def _bad(self, entry_id: int) -> bool:
        return zlib.crc32(str(entry_id).encode()) % 10_000 < self.misnumber_rate * 10_000

    def __call__(self, body: dict[str, Any]) -> str:
        user = str(body["messages"][-1]["content"])
        if user.startswith("A validator rejected"):
            previous = str(body["messages"][-2]["content"])
            return previous.replace("zzz", "fixed")
        if '{"entries": ' in user:
            entries = json.loads(user[user.index('{"entries": '):])["entries"]
            out = []
            with self._lock:
                self.batches += 1
                for k, e in enumerate(entries):
                    self.asked[e["id"]] += 1
                    ident = e["id"]
                    if self._bad(ident):
                        self.misnumbered.add(ident)
                        ident = entries[k - 1]["id"] if k else ident + 1_000_000
                    start = " ".join(e["source"].split()[:3])  # echoes the source it translated
                    out.append({"id": ident, "start": start, "translation": translate_text(e["source"])})
            return json.dumps({"translations": out}, ensure_ascii=False)
        source = user.split("Text:\n", 1)[-1]
        with self._lock:
            ident = self._by_source.get(source)
            if ident is not None:
                self.asked[ident] += 1
                self.single_ids.append(ident)
        return translate_text(source)


def serve(port_file: str, latency: float) -> None:  # pragma: no cover - benchmark helper
    """Run a FakeOpenAI in this process until killed (benchmarks keep client and server apart)."""
    import time

    with FakeOpenAI(responder=Translator(), base_delay=latency) as server:
        Path(port_file).write_text(server.base_url)
        while True:
            time.sleep(3600)


if __name__ == "__main__":  # pragma: no cover
    serve(sys.argv[1], float(sys.argv[2]))

"""The analyser interface, memoisation, and the card → analyser factory.

A word is analysed once per process: analysers are long-lived subprocesses fed many words per
round trip, and every answer is memoised, so warm throughput is a dictionary lookup. A card that
names an analyser this machine lacks is a ``UserError`` that says how to install it or to pass
``--skip-analyser`` (docs/decisions.md §19) — never a silent switch to profile B.
"""

from __future__ import annotations

import os
import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

_BATCH_CHARS = 16_000  # input per round trip: well under a pipe buffer, so writes never block


class OwnedProcess:
    """A long-lived subprocess that belongs to the process that started it.

    Scoring forks a worker (``scoring.extraction``); a child that inherited the parent's pipes and
    wrote to them would interleave its requests with the parent's. ``get`` therefore starts a fresh
    subprocess in any process other than the one that started the current one (the parent's stays
    the parent's), as well as when none is running.
    """

    def __init__(self, argv: list[str], *, text: bool) -> None:
        self.argv = argv
        self.text = text
        self.proc: subprocess.Popen[Any] | None = None
        self.owner = 0  # pid of the process that started ``proc``

    def get(self) -> subprocess.Popen[Any]:
        if self.proc is None or self.owner != os.getpid() or self.proc.poll() is not None:
            if self.text:
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL, text=True, encoding="utf-8", bufsize=1)
            else:
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                             stderr=subprocess.DEVNULL)
            self.owner = os.getpid()
        return self.proc

    def close(self) -> None:
        if self.owner == os.getpid():
            stop_process(self.proc)
        self.proc = None


def stop_process(proc: subprocess.Popen[Any] | None) -> None:
    """End a long-lived analyser process by closing its input, as its own EOF handling expects."""
    if proc is not None and proc.poll() is None:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


class Analyser(ABC):
    """Maps words to their analyses; an empty tuple means the analyser rejects the word."""

    kind = ""

    def __init__(self, path: str) -> None:
        self.path = path
        self._memo: dict[str, tuple[str, ...]] = {}
        self._lock = threading.Lock()  # one subprocess per analyser: metrics may run in threads

    @property
    @abstractmethod
    def version(self) -> str:
        """Tool, file name and size: enough to tell two analyser builds apart on a run card."""

    @abstractmethod
    def _analyse_batch(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        """Analyses for each word, computed by the underlying tool (no memo)."""

    def analyse_many(self, words: Iterable[str]) -> dict[str, tuple[str, ...]]:
        """Analyses for every distinct word; unseen words go to the tool in large batches."""
        wanted = list(dict.fromkeys(words))
        with self._lock:
            return self._analyse_locked(wanted)

    def _analyse_locked(self, wanted: list[str]) -> dict[str, tuple[str, ...]]:
        todo = [w for w in wanted if w not in self._memo]
        batch: list[str] = []
        size = 0
        for word in todo:
            batch.append(word)
            size += len(word.encode("utf-8")) + 2
            if size >= _BATCH_CHARS:
                self._memo.update(zip(batch, self._analyse_batch(batch), strict=True))
                batch, size = [], 0
        if batch:
            self._memo.update(zip(batch, self._analyse_batch(batch), strict=True))
        return {w: self._memo[w] for w in wanted}

    def analyse(self, word: str) -> tuple[str, ...]:
        found = self._memo.get(word)  # a memo hit needs no lock: dict reads are atomic
        return found if found is not None else self.analyse_many([word])[word]

    def accepts(self, word: str, sentence_initial: bool = False) -> bool:
        """Accepted as written, or (sentence-initial capital) in lower case (docs/decisions.md §16)."""
        if self.analyse(word):
            return True
        return sentence_initial and word[:1].isupper() and bool(self.analyse(word[:1].lower() + word[1:]))

    def close(self) -> None:  # noqa: B027 - optional hook
        """Stop any subprocess."""


def file_version(tool: str, path: str) -> str:
    """What a card records as an analyser's version: the program and the file it loads."""
    p = Path(path)
    return f"{tool} {p.name} ({p.stat().st_size} bytes)"

"""Apertium/lttoolbox analysis through one long-lived ``lt-proc -z`` process (null-flush mode).

Each round trip writes many words, one per line, then a NUL; lt-proc answers the block and a NUL.
Newlines pass through lt-proc as blanks, so output line *i* is word *i*'s analysis. A word lt-proc
splits into several units (``l’agua``) is accepted only when every unit is known.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence

from mt_eval.analyzers.base import Analyser, OwnedProcess, file_version

# the stream format's special characters, each escaped with a backslash (one table lookup per character:
# 5x faster than a substitution with a group template, and a run escapes every word and dictionary query)
_ESCAPES = str.maketrans({c: "\\" + c for c in "^$/<>@[]{}\\*"})
_UNIT = re.compile(r"\^((?:[^$\\]|\\.)*)\$")
_UNESCAPED_SLASH = re.compile(r"(?<!\\)/")


def escape(word: str) -> str:
    return word.translate(_ESCAPES)


class NullFlushProcess:
    """A subprocess spoken to in NUL-terminated blocks (lt-proc -z, lt-proc -b -z)."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.owned = OwnedProcess(argv, text=False)
        self.lock = threading.Lock()

    def request(self, text: str) -> str:
        with self.lock:
            return self._request(text)

    def _request(self, text: str) -> str:
        proc = self.owned.get()
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(text.encode("utf-8") + b"\0")
        proc.stdin.flush()
        chunks: list[bytes] = []
        fd = proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"{self.argv[0]} exited while answering ({' '.join(self.argv)})")
            if chunk.endswith(b"\0"):
                chunks.append(chunk[:-1])
                break
            chunks.append(chunk)
        return b"".join(chunks).decode("utf-8")

    def close(self) -> None:
        self.owned.close()


def parse_units(line: str) -> list[tuple[str, tuple[str, ...]]]:
    """``^surface/an1/an2$`` units → (surface, analyses); unknown (``*word``) gives no analyses."""
    units = []
    for body in _UNIT.findall(line):
        # without a backslash no slash is escaped: a plain split is the same split, and much cheaper
        parts = body.split("/") if "\\" not in body else _UNESCAPED_SLASH.split(body)
        analyses = tuple(p for p in parts[1:] if p and not p.startswith(("*", "@", "#")))
        units.append((parts[0], analyses))
    return units


class LtProcAnalyser(Analyser):
    kind = "apertium"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.process = NullFlushProcess(["lt-proc", "-z", path])

    @property
    def version(self) -> str:
        return file_version("lt-proc", self.path)

    def _analyse_batch(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        out = self.process.request("\n".join(escape(w) for w in words) + "\n")
        lines = out.split("\n")
        result: list[tuple[str, ...]] = []
        for i in range(len(words)):
            units = parse_units(lines[i]) if i < len(lines) else []
            if units and all(analyses for _, analyses in units):
                if len(units) == 1:
                    result.append(units[0][1])
                else:  # a split word: its analysis is the sequence of its units' first analyses
                    result.append(("+".join(a[0] for _, a in units),))
            else:
                result.append(())
        return result

    def close(self) -> None:
        self.process.close()

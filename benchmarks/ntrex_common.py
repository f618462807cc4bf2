"""Shared by the NTREX benchmarks: where the data is, how it is read, how hypotheses are made."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NTREX = REPO.parent / "shared" / "data" / "ntrex128"


def read_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def degrade(index: int, line: str) -> str:
    """Four kinds of damage in rotation, so scores are realistic rather than 0 or 100."""
    words = line.split()
    kind = index % 4
    if kind == 0:
        words = [w for i, w in enumerate(words) if i % 3 != 2]
    elif kind == 1 and len(words) > 1:
        words[0], words[1] = words[1], words[0]
    elif kind == 2:
        words = words[:-1]
    return " ".join(words)

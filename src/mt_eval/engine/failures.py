"""Entry errors grouped by kind, so a run says what is failing while it runs, not only in ``show``.

A run of thousands of requests that fails on some of them should not be silent until the card is
read: the engine counts each finished entry's error under a *kind* (``timeout``, ``HTTP 503``,
``empty completion``…, see :func:`error_kind`), and the first entry of every new kind is reported
once as it happens (``entry 17: timeout after 5 retries (first of this kind)``). At the end the
kinds and their counts make one summary line. Plain strings only: the CLI decides how to print.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# (pattern in the error message, kind); the first that matches names the kind
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), k) for p, k in (
    (r"\btimeout\b", "timeout"),
    (r"connection error", "connection error"),
    (r"empty (completion|response)", "empty completion"),
    (r"\bHTTP (\d{3})\b", "HTTP {0}"),
    (r"provider error (\d+)", "provider error {0}"),
    (r"no prediction for entry", "no prediction"),
    (r"returned (no translation|\d+ translations)", "method returned no single translation"),
))
_ATTEMPTS = re.compile(r"giving up after (\d+) attempts")


def error_kind(message: str) -> str:
    """The kind of an entry's error: a short name shared by every entry that failed the same way."""
    for pattern, kind in _KINDS:
        if m := pattern.search(message):
            return kind.format(*m.groups())
    words = re.sub(r"\d+", "N", message).split(":")[-1].strip()  # e.g. a plugin's own message
    return words[:60] or "error"


def describe(message: str) -> str:
    """``timeout after 5 retries``: the kind, and how hard the client tried when it says so."""
    kind = error_kind(message)
    if m := _ATTEMPTS.search(message):
        return f"{kind} after {int(m.group(1)) - 1} retries"
    return kind


@dataclass
class FailureKind:
    count: int
    first_entry: int
    first_message: str


@dataclass
class Failures:
    """Errors so far, by kind, in the order the kinds first appeared."""

    kinds: dict[str, FailureKind] = field(default_factory=dict)
    _reported: set[str] = field(default_factory=set)

    def add(self, entry_id: int, message: str) -> None:
        kind = error_kind(message)
        if kind in self.kinds:
            self.kinds[kind].count += 1
        else:
            self.kinds[kind] = FailureKind(1, entry_id, message)

    def total(self) -> int:
        return sum(k.count for k in self.kinds.values())

    def new_lines(self) -> list[str]:
        """One line per kind not reported before (call after each finished group)."""
        lines = []
        for kind, info in self.kinds.items():
            if kind not in self._reported:
                self._reported.add(kind)
                lines.append(f"entry {info.first_entry}: {describe(info.first_message)} (first of this kind)")
        return lines

    def summary(self, total_entries: int) -> str:
        """``3 of 160 entries failed: timeout ×2, HTTP 503 ×1`` (empty string when none failed)."""
        failed = self.total()
        if not failed:
            return ""
        kinds = ", ".join(f"{kind} ×{info.count}" for kind, info in self.kinds.items())
        if failed >= total_entries:
            return f"every entry failed ({failed} of {total_entries}): {kinds}"
        return f"{failed} of {total_entries} entries failed: {kinds}"

    @classmethod
    def of(cls, errors: Iterable[tuple[int, str]]) -> Failures:
        out = cls()
        for entry_id, message in errors:
            out.add(entry_id, message)
        return out

"""Collecting located corpus problems instead of stopping at the first.

A corpus author fixing a 2,000-entry file wants the whole list in one pass, so every loader
records problems here and raises a single ``CorpusError`` at the end. Each problem names the
file (with ``:line`` for line-oriented formats), the entry and the field, because "invalid
corpus" without a location costs the user a bisection.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import NoReturn

from mt_eval.errors import CorpusError, UserError

# A wrong file (say, a 1M-line log passed as a corpus) would otherwise print a million lines.
MAX_PROBLEMS = 500


class Problems:
    """Problems found in one file, in the order found."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.items: list[UserError] = []
        self.dropped = 0

    def add(
        self,
        message: str,
        *,
        line: int | None = None,
        entry: str | int | None = None,
        field: str | None = None,
        hint: str | None = None,
        file: str | None = None,
    ) -> None:
        if len(self.items) >= MAX_PROBLEMS:
            self.dropped += 1
            return
        where = file if file is not None else self.file
        if line is not None:
            where = f"{where}:{line}"
        self.items.append(UserError(message, file=where, entry=entry, field=field, hint=hint))

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if not self.items:
            return
        items = list(self.items)
        if self.dropped:
            items.append(UserError(f"... and {self.dropped} more problems not shown", file=self.file))
        raise CorpusError(items)

    def fail(self, message: str, *, line: int | None = None, hint: str | None = None) -> NoReturn:
        """Record one problem and raise everything collected so far (for unrecoverable states)."""
        self.add(message, line=line, hint=hint)
        self.raise_if_any()
        raise AssertionError("unreachable")  # pragma: no cover


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path, problems: Problems) -> bytes:
    """Read a corpus file, turning OS errors into one located line rather than a traceback."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        problems.fail("file not found")
    except IsADirectoryError:
        problems.fail("is a directory, expected a corpus file")
    except PermissionError:
        problems.fail("permission denied")
    except OSError as exc:
        problems.fail(f"cannot read file: {exc.strerror or exc}")


def decode_utf8(data: bytes, problems: Problems) -> str:
    """Decode UTF-8 (a leading BOM is tolerated); the error gives the line a text editor shows."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        problems.fail(
            f"not valid UTF-8 at line {line} (byte offset {exc.start})",
            hint="save the file as UTF-8",
        )
    return text


def find_surrogate(value: object, path: str = "") -> str | None:
    """Path of the first string (or key) holding a lone UTF-16 surrogate, else None.

    JSON escapes like ``"\\ud800"`` decode to strings that cannot be written back as UTF-8, so an
    entry carrying one would crash the run card writer long after loading succeeded.
    """
    if isinstance(value, str):
        return shorten(path, 80) if any("\ud800" <= ch <= "\udfff" for ch in value) else None
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = find_surrogate(item, f"{path}[{i}]")
            if found is not None:
                return found
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{path}.{key}" if path else str(key)
            if find_surrogate(key) is not None:
                return shorten(child, 80)
            found = find_surrogate(item, child)
            if found is not None:
                return found
    return None


def shorten(text: str, limit: int = 40) -> str:
    """Keep messages one readable line: cut long values and escape what a terminal cannot print
    (lone surrogates would make ``print`` itself raise)."""
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def describe(value: object) -> str:
    """Name a value by its JSON type, so messages read the same for JSON, JSONL and TSV input."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        digits = str(value)
        return f"number {digits if len(digits) <= 20 else digits[:17] + '...'}"
    if isinstance(value, float):
        return f"number {value!r}"
    if isinstance(value, str):
        return f"string {shorten(json.dumps(value, ensure_ascii=False), 42)}"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__

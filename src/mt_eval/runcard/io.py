"""Reading and writing run cards: atomic writes, and loads that refuse hostile files with one line.

A card is read as bytes, decoded strictly as UTF-8 and parsed as JSON; anything else (a directory,
binary junk, a JSON array) is a ``UserError`` naming the file. ``migrate`` is the one place where
a card of an older ``schema_version`` is brought up to the current one before anything reads it.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.runcard.model import SCHEMA_VERSION

# schema_version -> function returning the card at the next version (none yet: 2.0 is the first
# version this harness writes). A migrated card keeps its original bytes' hash semantics: the seal
# is checked on the card as written, so migrations only ever *read* old cards.
MIGRATIONS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
MAX_CARD_BYTES = 2 * 1024**3  # a card larger than this is not something we wrote


def migrate(card: dict[str, Any], *, file: str | None = None) -> dict[str, Any]:
    """Bring ``card`` to :data:`SCHEMA_VERSION`; an unknown version is refused, not guessed."""
    version = str(card.get("schema_version", ""))
    seen: set[str] = set()
    while version != SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None or version in seen:
            raise UserError(f"unknown run card schema_version {version!r} (this harness reads {SCHEMA_VERSION})",
                            file=file, field="schema_version")
        seen.add(version)
        card = step(card)
        version = str(card.get("schema_version", ""))
    return card


def load_card(path: str | Path) -> dict[str, Any]:
    """The card at ``path`` as a dict at the current schema version."""
    return migrate(read_card_json(path), file=str(path))


def read_card_json(path: str | Path) -> dict[str, Any]:
    """The JSON object at ``path``, read with the hostile-file checks but not migrated: a card of
    another kind (a QA card, ``"kind": "qa"``) has a schema of its own."""
    p = Path(path)
    if p.is_dir():
        raise UserError("is a directory, not a run card", file=str(p), hint="give the run_card.json inside it")
    try:
        if p.stat().st_size > MAX_CARD_BYTES:
            raise UserError("too large to be a run card", file=str(p))
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise UserError("run card not found", file=str(p)) from None
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start}); a run card is JSON", file=str(p)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(p)) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON (line {exc.lineno}, column {exc.colno})", file=str(p)) from None
    except RecursionError:
        raise UserError("JSON nested too deeply to be a run card", file=str(p)) from None
    if not isinstance(data, dict):
        raise UserError("a run card is a JSON object", file=str(p))
    return data


def write_card(card: dict[str, Any], path: Path, statistics: bytes | None = None) -> Path:
    """Write atomically: a reader (or a crash) never sees half a card.

    A run card is laid out as ``runcard/layout.py`` says (keys sorted, tab-indented: the seal's own
    text), so its seal can be checked without re-encoding it; a card of another schema (a QA card)
    keeps its keys in the order it was built. ``statistics`` are the sidecar's bytes
    (``runcard/statistics.py``), written first, so a card never references a file not yet there.
    """
    from mt_eval.runcard import layout
    from mt_eval.runcard.statistics import sha256_bytes, sidecar_path

    if path.is_dir():
        raise UserError("is a directory; give a file name for the run card", file=str(path))
    if statistics is not None:
        ref = card.get("statistics") or {}
        if ref.get("sha256") != sha256_bytes(statistics):
            raise ValueError("the statistics bytes are not the ones the card references")
    try:  # JSON proper: NaN or Infinity on a card is refused, never written as a non-standard literal
        data = (layout.dumps(card) if card.get("schema_version") == SCHEMA_VERSION else
                (json.dumps(card, ensure_ascii=False, indent=2, allow_nan=False) + "\n").encode("utf-8"))
    except ValueError as exc:
        raise UserError(f"not written: the card holds a number JSON cannot carry ({exc})", file=str(path)) from None
    if statistics is not None:  # the sidecar first: a card on disk always has the statistics it names
        write_atomic(sidecar_path(card.get("statistics") or {}, path), statistics, what="the run card")
    write_atomic(path, data, what="the run card")
    return path


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` where it is a JSON object, else ``{}``: readers of cards (renderers, the web pages)
    meet cards that may be malformed and must not crash on a missing block."""
    return value if isinstance(value, dict) else {}


def write_atomic(path: Path, data: bytes, *, what: str = "the file") -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, so a reader never sees half of it.
    The temporary's name is unique, so two writers of one path never clobber each other's temporary; it
    is removed when the write fails. The folder is made when missing."""
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        tmp = Path(name)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        # mkstemp makes it owner-only: keep the replaced file's mode, else a plain file's (the process umask
        # is not read: changing it to read it would race with other threads creating files)
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o644)
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            tmp.unlink(missing_ok=True)
        raise UserError(f"cannot write {what}: {exc.strerror or exc}", file=str(path)) from None

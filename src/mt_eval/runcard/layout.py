"""The bytes of a run-card file, laid out so that its seal can be checked without re-encoding it.

``run_card_hash`` is SHA-256 of ``json.dumps(card, sort_keys=True, ensure_ascii=False)`` with the
hash field empty (docs/decisions.md §5). Re-encoding a 10,000-entry card to check that costs as
much as parsing it, twice per comparison. So a card is written as that very text with line breaks
and tabs added, and nothing else (``·`` marks the space that ends most lines)::

    {
    <TAB>"analyser_skipped": null,·
    <TAB>"config": {
    <TAB><TAB>"api_provider": "file",·
    ...
    <TAB>"results": [
    {"entry_id": 1, ...},·
    {"entry_id": 2, ...}
    ],·
    <TAB>"run_card_hash": "…",·
    ...
    }

Everything but ``results`` is ``json.dumps(..., indent="\\t", separators=(", ", ": "))`` (the
hashed text's own separators, so a line may end in a space); ``results`` holds one entry per line,
unindented. JSON escapes every control character inside strings, so the raw newlines and tabs are
layout only: the hashed text is the file without them (docs/decisions.md §23).

The layout also makes the card without its rows cheap to read: the rows sit between the line
``<TAB>"results": [`` and the only line of the file that starts with ``]``, so ``compare`` cuts them
out by position and parses the rest (the entry ids come from the stored statistics).

A card in any other layout (an older card, a re-indented copy) is still a valid card: these fast
paths say ``None``/``False`` and the caller parses and hashes it the ordinary way.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any

_OPEN = b'\n\t"results": [\n'
_CLOSE = b"\n]"
_SEP = (", ", ": ")


def dumps(card: Mapping[str, Any]) -> bytes:
    """The file's bytes: the hashed text with layout-only newlines and tabs, one final newline."""
    rows = card.get("results")
    if not isinstance(rows, list):
        text = json.dumps(card, sort_keys=True, ensure_ascii=False, indent="\t", separators=_SEP, allow_nan=False)
        return (text + "\n").encode()
    marker = f"mt-eval-results-{uuid.uuid4().hex}"
    head = json.dumps({**card, "results": marker}, sort_keys=True, ensure_ascii=False, indent="\t", separators=_SEP,
                      allow_nan=False)
    body = ", \n".join(json.dumps(row, sort_keys=True, ensure_ascii=False, allow_nan=False) for row in rows)
    text = head.replace(json.dumps(marker), "[\n" + body + "\n]", 1)
    return (text + "\n").encode("utf-8")


def _split(raw: bytes) -> tuple[int, int] | None:
    """Where the rows are: ``raw[:a]`` ends with ``"results": [`` and its newline, ``raw[b:]`` starts
    with the newline before ``]``; ``None`` when ``raw`` is not in this layout."""
    start = raw.find(_OPEN)
    end = raw.rfind(_CLOSE)
    # a second "results" key could only sit after the rows (a row line never starts with a tab)
    if start < 0 or end < start + len(_OPEN) - 1 or raw.find(_OPEN, end) >= 0:
        return None
    return start + len(_OPEN), end


def sealed_header(raw: bytes) -> dict[str, Any] | None:
    """:func:`header`, provided the seal verifies too (one pass over the layout for both); ``None``
    means "not shown here": parse and check the whole file instead."""
    where = _split(raw)
    head = _header(raw, where) if where is not None else None
    if where is None or head is None or not _seal_verifies(raw, where, head.get("run_card_hash")):
        return None
    return head


def _seal_verifies(raw: bytes, where: tuple[int, int], run_card_hash: object) -> bool:
    if not isinstance(run_card_hash, str) or len(run_card_hash) != 64:
        return False
    a, b = where
    field = b'"run_card_hash": "' + run_card_hash.encode("ascii", "replace") + b'"'
    tail = raw[b:].translate(None, b"\n\t")  # the top-level run_card_hash sorts after results
    if tail.count(field) != 1:
        return False
    digest = hashlib.sha256(raw[:a].translate(None, b"\n\t"))
    digest.update(raw[a:b].replace(b"\n", b""))  # rows: one per line, never a tab
    digest.update(tail.replace(field, b'"run_card_hash": ""'))
    return digest.hexdigest() == run_card_hash


def header(raw: bytes) -> dict[str, Any] | None:
    """The card with ``results`` emptied, parsed from ``raw`` without reading the rows; ``None``
    when ``raw`` is not in this layout (then parse the whole file)."""
    where = _split(raw)
    return _header(raw, where) if where is not None else None


def _header(raw: bytes, where: tuple[int, int]) -> dict[str, Any] | None:
    a, b = where
    try:
        data = json.loads((raw[:a] + raw[b + 1 :]).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("results") != []:
        return None
    return data

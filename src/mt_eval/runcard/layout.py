"""The bytes of a card file, laid out so that its seal can be checked without re-encoding it.

``run_card_hash`` is SHA-256 of ``json.dumps(card, sort_keys=True, ensure_ascii=False)`` with the
hash field empty (docs/decisions.md §5). Re-encoding a 10,000-entry card to check that costs as
much as parsing it, twice per comparison. So cards are written as that very text, laid out with
newlines and tabs: ``json.dumps(card, sort_keys=True, ensure_ascii=False, indent="\\t",
separators=(", ", ": "))``, whose separators are the hashed text's own (so a line may end in a
space). JSON escapes every control character inside strings, so raw newlines and tabs in the file
are layout only, and the hashed text is the file with every newline and tab dropped: one
byte-level pass (docs/decisions.md §23).

The layout also puts every top-level key at the start of a line after exactly one tab, so the
card without ``results[]`` (all that ``compare`` needs beside the stored statistics) is cut out by
position rather than parsed from 20 MB of per-entry rows.

A card in any other layout (an older card, a re-indented copy) is still a valid card: these fast
paths say ``None`` and the caller parses and hashes it the ordinary way.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

_RESULTS = b'\n\t"results": ['
_TOP_CLOSE = b"\n\t]"


def dumps(card: Mapping[str, Any]) -> bytes:
    """The file's bytes: the hashed text, tab-indented, keys sorted, one final newline."""
    text = json.dumps(card, sort_keys=True, ensure_ascii=False, indent="\t", separators=(", ", ": "))
    return (text + "\n").encode("utf-8")


def hashed_text(raw: bytes) -> bytes:
    """What the seal hashes, read off a file in this layout (the hash field still filled in)."""
    return raw.translate(None, b"\n\t")


def seal_verifies(raw: bytes, run_card_hash: str) -> bool:
    """True when ``raw`` is in this layout and its ``run_card_hash`` is the hash of its content.

    ``False`` means "not shown here" (another layout, or an edit): the caller checks the parsed card.
    """
    if not isinstance(run_card_hash, str) or len(run_card_hash) != 64:
        return False
    field = b'"run_card_hash": "' + run_card_hash.encode("ascii", "replace") + b'"'
    text = hashed_text(raw)
    if text.count(field) != 1:
        return False
    blank = text.replace(field, b'"run_card_hash": ""')
    return hashlib.sha256(blank).hexdigest() == run_card_hash


def header(raw: bytes) -> dict[str, Any] | None:
    """The card with ``results`` emptied, parsed from ``raw`` without reading the rows; ``None``
    when ``raw`` is not in this layout (then parse the whole file)."""
    start = raw.find(_RESULTS)
    if start < 0:
        return None
    body = start + len(_RESULTS)
    end = body if raw[body : body + 1] == b"]" else raw.find(_TOP_CLOSE, body) + len(_TOP_CLOSE) - 1
    if end < body or raw.find(_RESULTS, end) >= 0:  # unclosed, or a second top-level "results"
        return None
    cut = raw[:body] + raw[end:]
    try:
        data = json.loads(cut.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None
    if not isinstance(data, dict) or data.get("results") != []:
        return None
    return data

"""Verify a batched answer entry by entry (docs/decisions.md §18).

The model was asked for ``{"translations": [{"id", "translation"}]}``. Whatever it returned, each
requested id ends up either *accepted* (exactly one string answer under that id, whose ``start``
echoes the first three words of *that* entry's source) or *rejected* with a reason (missing,
duplicated, not a string, echo of another entry's source, or the whole answer unparsable); ids the
model invented are ignored. The echo costs a few tokens per entry and catches what ids alone
cannot: answers shifted by one (entry 5 answered under 4 and 4 under 3 leaves id 4 looking fine).
Rejected entries are re-requested alone by the caller, so a parse failure or
a mis-numbered answer never reaches the card as somebody else's translation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class BatchCheck:
    accepted: dict[int, str] = field(default_factory=dict)
    rejected: dict[int, str] = field(default_factory=dict)  # entry id -> why


def _json_object(content: str) -> Any:
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`").split("\n", 1)[-1]
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object in the answer")
    return json.loads(text[start : end + 1])


def _items(data: Any) -> list[Any]:
    if isinstance(data, dict) and isinstance(data.get("translations"), list):
        return list(data["translations"])
    if isinstance(data, dict) and all(k.strip().isdigit() for k in data):  # {"12": "..."} also accepted
        return [{"id": k, "translation": v} for k, v in data.items()]
    raise ValueError('answer has no "translations" list')


def _as_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def head(text: str) -> list[str]:
    """First three words, case-folded, punctuation ignored: what ``start`` must echo."""
    return re.sub(r"[\W_]+", " ", text).casefold().split()[:3]


def check_batch(content: str, sources: Mapping[int, str]) -> BatchCheck:
    """``sources`` maps each requested entry id to its source text."""
    wanted = list(sources)
    out = BatchCheck()
    try:
        items = _items(_json_object(content))
    except (ValueError, json.JSONDecodeError) as exc:
        out.rejected = {i: f"unparsable batched answer ({exc})" for i in wanted}
        return out
    seen: dict[int, list[tuple[Any, Any]]] = {}
    for item in items:
        ident = _as_id(item.get("id")) if isinstance(item, dict) else None
        if ident is not None:
            seen.setdefault(ident, []).append((item.get("translation"), item.get("start")))
    for i in wanted:
        got = seen.get(i, [])
        echoed = [t for t, start in got if isinstance(start, str) and head(start) == head(sources[i])]
        if not got:
            out.rejected[i] = "missing from the batched answer"
        elif len(echoed) > 1:
            out.rejected[i] = f"{len(got)} answers under this id in the batched answer"
        elif not echoed:
            why = "source echo does not match this entry (mis-numbered)"
            out.rejected[i] = f"{len(got)} answers under this id, none whose {why}" if len(got) > 1 else why
        elif not isinstance(echoed[0], str) or not echoed[0].strip():
            out.rejected[i] = "batched answer is not a non-empty string"
        else:
            # a duplicate id whose other answer echoes another entry's source is that entry's problem
            out.accepted[i] = echoed[0].strip()
    return out

"""Community review offline: the batch a reviewer receives and the result file they send back.

A batch is rendered (``render/html/review_offline.py``) into one self-contained HTML file: the texts,
the reviewer's token and the script are inside it, it makes no network request, and it saves the ratings
as a JSON file (``RESULT_FORMAT``). This module holds the batch's data and the strict reader of result
files: everything in a result is untrusted, so each field is checked and the first problem is reported
as one line naming the item.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

BATCH_FORMAT = "mt-eval-review-batch/1"
RESULT_FORMAT = "mt-eval-review-result/1"
MAX_COMMENT = 4000
MAX_RESULT_BYTES = 20 * 2**20
RTL_LANGUAGES = frozenset({"ar", "arb", "arz", "fa", "he", "ur", "ps", "yi", "ckb", "dv", "sd", "ug", "syr"})
SCALE_LABELS = ("reject", "gist", "acceptable", "excellent")


@dataclass(frozen=True)
class BatchItem:
    hash: str
    text: str


@dataclass(frozen=True)
class BatchGroup:
    """One entry as the reviewer sees it: the source, its outputs in blind order, and the reference the web
    shows once the entry is rated ("" in an offline batch, which never carries it)."""

    number: int
    source: str
    reference: str
    items: list[BatchItem]


@dataclass(frozen=True)
class Batch:
    campaign: str
    uid: str
    reviewer: str
    token: str
    reference_policy: str
    source_language: str
    target_language: str
    groups: list[BatchGroup]

    @property
    def item_count(self) -> int:
        return sum(len(g.items) for g in self.groups)


def direction(language: str) -> str:
    """``rtl`` for languages written right to left (by primary subtag), else ``ltr``."""
    return "rtl" if language.split("-")[0].lower() in RTL_LANGUAGES else "ltr"


def payload(batch: Batch) -> dict[str, Any]:
    """The batch as the page's embedded JSON: sources, outputs and hashes only (no method, card, item kind
    or reference: a reference in the file lets a script rate outputs by their distance to it)."""
    return {
        "format": BATCH_FORMAT, "campaign": batch.campaign, "uid": batch.uid, "reviewer": batch.reviewer,
        "token": batch.token, "scale": list(SCALE_LABELS),
        "source_dir": direction(batch.source_language), "target_dir": direction(batch.target_language),
        "source_lang": batch.source_language, "target_lang": batch.target_language,
        "groups": [{"n": g.number, "source": g.source, "items": [{"hash": i.hash, "text": i.text} for i in g.items]}
                   for g in batch.groups],
    }


@dataclass(frozen=True)
class Rating:
    item: str
    value: int
    comment: str | None
    seconds: float | None
    rated_at: datetime | None


@dataclass(frozen=True)
class ParsedResult:
    campaign: str
    reviewer: str
    token: str
    ratings: list[Rating]


def _text(data: dict[str, Any], key: str, file: str) -> str:
    value = data.get(key)
    if not isinstance(value, str) or not value:
        raise UserError(f"not a review result: '{key}' is missing or not text", file=file)
    return value


def _rating(raw: Any, index: int, file: str) -> Rating:
    if not isinstance(raw, dict) or not isinstance(raw.get("item"), str):
        raise UserError(f"rating {index + 1}: not an object with an item hash", file=file)
    item = raw["item"]
    value = raw.get("value")
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 3:
        raise UserError(f"item {item[:16]}…: rating {value!r} is not on the 0–3 scale", file=file)
    comment = raw.get("comment")
    if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT):
        raise UserError(f"item {item[:16]}…: comment must be text of at most {MAX_COMMENT} characters", file=file)
    seconds = raw.get("seconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int | float)
                                or not math.isfinite(seconds) or seconds < 0):
        raise UserError(f"item {item[:16]}…: seconds must be a non-negative number", file=file)
    rated_at = None
    if raw.get("rated_at") is not None:
        try:
            rated_at = datetime.fromisoformat(str(raw["rated_at"]).replace("Z", "+00:00"))
        except ValueError:
            raise UserError(f"item {item[:16]}…: rated_at is not an ISO 8601 time", file=file) from None
    return Rating(item, value, comment or None, None if seconds is None else float(seconds), rated_at)


def parse_result(text: str, *, file: str = "<result>") -> ParsedResult:
    """A result file's content, checked field by field (``UserError`` naming the first problem)."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"not a review result: invalid JSON (line {exc.lineno})", file=file) from None
    if not isinstance(data, dict) or data.get("format") != RESULT_FORMAT:
        raise UserError(f"not a review result (expected format {RESULT_FORMAT!r})", file=file)
    ratings = data.get("ratings")
    if not isinstance(ratings, list):
        raise UserError("not a review result: 'ratings' is not a list", file=file)
    parsed = [_rating(r, i, file) for i, r in enumerate(ratings)]
    seen: set[str] = set()
    for r in parsed:
        if r.item in seen:
            raise UserError(f"item {r.item[:16]}…: rated twice in one file", file=file)
        seen.add(r.item)
    return ParsedResult(_text(data, "campaign", file), _text(data, "reviewer", file), _text(data, "token", file),
                        parsed)


def read_result(path: str | Path) -> ParsedResult:
    """The result file at ``path`` (size-capped, UTF-8), parsed and checked."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_RESULT_BYTES:
            raise UserError(f"not a review result: larger than {MAX_RESULT_BYTES // 2**20} MiB", file=str(p))
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the result: {exc.__class__.__name__}", file=str(p)) from None
    return parse_result(text, file=str(p))

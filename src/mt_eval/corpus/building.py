"""From raw mappings to a validated ``Dataset``, shared by every file format.

Validation runs pydantic in *strict JSON mode*: lax mode would turn ``"id": "5"`` into 5 and
``"difficulty": true`` into 1, silently accepting corpora whose authors made a mistake. Every
pydantic error is rewritten into one located line (file, entry, field) so no library message or
traceback ever reaches the user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from mt_eval.corpus.legacy import map_legacy_fields
from mt_eval.corpus.models import Context, Dataset, DatasetInfo, Entry, Provenance, Register, Segment
from mt_eval.corpus.problems import Problems, describe, find_surrogate, shorten

M = TypeVar("M", bound=BaseModel)
Reporter = Callable[[str | None, str], None]

# Ids end up in SQLite INTEGER columns and JSON consumers that read 64-bit integers.
MAX_ID = 2**63 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE_MESSAGE = "contains an unpaired surrogate escape (like \\ud800), which is not valid Unicode text"

_ENUMS: dict[str, tuple[str, ...]] = {
    "segment": tuple(s.value for s in Segment),
    "provenance": tuple(p.value for p in Provenance),
    "register": tuple(r.value for r in Register),
    "context": tuple(c.value for c in Context),
}

_TYPE_NAMES: dict[str, str] = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "float_type": "a number",
    "bool_type": "a boolean",
}


@dataclass(frozen=True)
class RawEntry:
    """An undecoded entry and where it sits: ``position`` counts entries from 1, ``line`` is the
    file line for line-oriented formats (JSONL, TSV), which is what an editor can jump to."""

    data: Any
    position: int
    line: int | None = None


@dataclass(frozen=True)
class LanguageArgs:
    """Envelope values given by the caller (CLI options) for files that have no envelope."""

    source_lang: str | None = None
    target_lang: str | None = None
    dataset_id: str | None = None


def _message(error: Any, field: str) -> str:
    kind = error["type"]
    value = error.get("input")
    leaf = field.rsplit(".", 1)[-1]
    if kind == "missing":
        return "missing required field"
    if kind == "enum" and leaf in _ENUMS:
        allowed = ", ".join(_ENUMS[leaf])
        if isinstance(value, str):
            return f"unknown {leaf} {describe(value).removeprefix('string ')} (allowed: {allowed})"
        return f"expected one of {allowed}, got {describe(value)}"
    if kind in ("less_than_equal", "greater_than_equal", "less_than", "greater_than"):
        return (
            f"{leaf} {describe(value).removeprefix('number ')} out of range 1-5"
            if leaf == "difficulty"
            else str(error["msg"])
        )
    if kind in _TYPE_NAMES:
        return f"expected {_TYPE_NAMES[kind]}, got {describe(value)}"
    return f"invalid value {describe(value)}: {error['msg']}"


def _field_name(loc: Iterable[Any], prefix: str) -> str:
    parts = [str(p) for p in loc]
    name = parts[0] if parts else ""
    for part in parts[1:]:
        name += f"[{part}]" if part.isdigit() else f".{part}"
    return prefix + name


def _dump(data: dict[str, Any], report: Reporter, prefix: str = "") -> str | None:
    """Serialise for strict validation, rejecting lone surrogates (one C-speed regex scan; the
    slow tree walk only runs to locate a surrogate that is known to be there)."""
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=True, default=str)
    except (ValueError, TypeError, RecursionError) as exc:
        report(prefix.rstrip(".") or None, f"cannot be validated: {shorten(str(exc), 80)}")
        return None
    if _SURROGATE.search(text):
        report(prefix + (find_surrogate(data) or "?"), SURROGATE_MESSAGE)
        return None
    return text


def _validate(model: type[M], text: str, report: Reporter, prefix: str = "") -> M | None:
    """Validate strictly; on failure call ``report(field, message)`` once per pydantic error."""
    try:
        return model.model_validate_json(text, strict=True)
    except ValidationError as exc:
        for error in exc.errors():
            field = _field_name(error["loc"], prefix)
            report(field or None, _message(error, field))
        return None


def _usable_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_ID:
        return value
    return None


def build_entries(raw: list[RawEntry], problems: Problems) -> list[Entry]:
    """Validate every entry and check id uniqueness, recording problems instead of raising."""
    entries: list[Entry] = []
    first_seen: dict[int, RawEntry] = {}
    for item in raw:
        where = f"on line {item.line}" if item.line is not None else f"at position {item.position}"
        if not isinstance(item.data, dict):
            problems.add(
                f"expected an entry object, got {describe(item.data)}",
                line=item.line,
                entry=None if item.line is not None else f"at position {item.position}",
            )
            continue
        data, legacy_problems = map_legacy_fields(item.data)
        entry_id = _usable_id(data.get("id"))
        ref: str | int | None = entry_id
        if ref is None and item.line is None:
            ref = f"at position {item.position}"

        def report(field: str | None, message: str, item: RawEntry = item, ref: Any = ref) -> None:
            problems.add(message, line=item.line, entry=ref, field=field)

        for field, message in legacy_problems:
            report(field, message)
        raw_id = data.get("id")
        if isinstance(raw_id, int) and not isinstance(raw_id, bool) and entry_id is None:
            report("id", f"id must be an integer from 0 to 2^63-1, got {describe(raw_id)}")
        text = _dump(data, report)
        if text is None:
            continue
        for key in ("source", "reference"):
            value = data.get(key)
            if isinstance(value, str) and not value.strip():
                report(key, "must not be empty")
        entry = _validate(Entry, text, report)
        if entry_id is not None:
            if entry_id in first_seen:
                prev = first_seen[entry_id]
                prev_where = f"line {prev.line}" if prev.line is not None else f"position {prev.position}"
                report("id", f"duplicate id {entry_id} {where} (first used at {prev_where})")
                continue
            first_seen[entry_id] = item
        if entry is not None and not legacy_problems:
            entries.append(entry)
    return entries


def build_info(
    envelope: dict[str, Any] | None,
    args: LanguageArgs,
    default_id: str,
    problems: Problems,
    *,
    envelope_line: int | None = None,
) -> DatasetInfo | None:
    """Merge the file's envelope with caller-given values.

    Caller values fill gaps (JSONL, TSV and bare lists have no envelope); a caller value that
    contradicts the file is an error, because evaluating with the wrong target language would
    apply the wrong tokeniser and metrics without any visible sign.
    """
    data: dict[str, Any] = dict(envelope or {})
    given = {"source_language": args.source_lang, "target_language": args.target_lang, "id": args.dataset_id}
    option = {"source_language": "--source-lang", "target_language": "--target-lang", "id": "--dataset-id"}
    for key, value in given.items():
        if value is None:
            continue
        current = data.get(key)
        if current is not None and current != value:
            problems.add(
                f"file says {shorten(repr(current))} but {option[key]} {shorten(repr(value))} was given",
                line=envelope_line,
                field=f"dataset.{key}",
            )
        else:
            data[key] = value
    data.setdefault("id", default_id)
    if isinstance(data["id"], str) and not data["id"].strip():
        problems.add("dataset id must not be empty", line=envelope_line, field="dataset.id")
    for key in ("source_language", "target_language"):
        value = data.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            where = "in the dataset envelope" if envelope is not None else "and the file has no envelope"
            problems.add(
                f"missing {key} {where}",
                line=envelope_line,
                field=f"dataset.{key}",
                hint=f"pass {option[key]}",
            )
            data.pop(key, None)
    src, tgt = data.get("source_language"), data.get("target_language")
    if not data.get("language_pair") and isinstance(src, str) and isinstance(tgt, str):
        data["language_pair"] = f"{src.upper()}→{tgt.upper()}"

    def report(field: str | None, message: str) -> None:
        if field in ("dataset.source_language", "dataset.target_language") and message.startswith("missing"):
            return  # already reported above with a hint
        problems.add(message, line=envelope_line, field=field)

    text = _dump(data, report, prefix="dataset.")
    return None if text is None else _validate(DatasetInfo, text, report, prefix="dataset.")


def finish(info: DatasetInfo | None, entries: list[Entry], sha256: str, path: str, problems: Problems) -> Dataset:
    """Raise every collected problem, or assemble the dataset."""
    if not entries and not problems:
        problems.add("corpus is empty (no entries)")
    if info is None:  # not reachable: a failed envelope always records a problem
        problems.add("invalid dataset envelope")
    problems.raise_if_any()
    assert info is not None
    return Dataset(info=info, entries=entries, sha256=sha256, path=path)

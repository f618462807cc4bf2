"""``predictions:PATH``: score outputs produced elsewhere (another tool, a human, an old run).

Two file shapes are accepted:

* **JSONL**, one object per line: ``{"entry_id": 3, "predicted": "..."}``; ``id`` and
  ``prediction`` are accepted as aliases, and optional ``error`` (string) is carried over so a
  failed output stays a failure. Optional ``latency_seconds`` and ``cost_usd`` (numbers ≥ 0) are the
  submitter's own figures: the card shows them as *declared* when every output carries one, and
  as unknown (null, never 0) otherwise (``scoring/economics.py``).
* **Plain text**, one line per corpus entry, in corpus order. The line count must equal the
  number of entries: a file that is one line short would otherwise shift every later output onto
  the wrong entry and be scored as nonsense. Empty lines after the last entry's line (an editor's
  extra newline) are ignored, never counted as entries.

Alignment is never silent: an id the corpus does not have (a 0-based file is named as such), an
entry with no output, or more lines than entries stops the run before it starts, naming the file
and the first offending line or id. ``allow_missing`` (``score --allow-missing``) is the one way to
score a JSONL file that lacks some entries: each missing entry is an error on the card and the
card's warnings list them all. The dataset is used only for its entry ids (plain-text lines map to
them by position); references are never read. The identity records the file's SHA-256, so a
different predictions file is a different method version (and fingerprint). A predictions run
keeps no journal (``resumable`` is False): there is nothing to resume in replaying a file.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mt_eval.corpus.models import Dataset
from mt_eval.errors import MethodError
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest, Usage

Format = Literal["auto", "jsonl", "text"]
_ID_KEYS = ("entry_id", "id")
_TEXT_KEYS = ("predicted", "prediction")
_JSONL_SUFFIXES = {".jsonl", ".ndjson", ".json"}
_TEXT_SUFFIXES = {".txt", ".text", ".hyp", ".out"}


@dataclass(frozen=True)
class Prediction:
    """One stored output; ``error`` marks an output that failed when it was produced."""

    text: str
    error: str | None = None
    latency_seconds: float | None = None  # the submitter's figure; None: the file gives none
    line: int = 0  # where it is in the file, for messages
    cost_usd: float | None = None  # the submitter's figure; None: the file gives none


class PredictionsMethod(MethodBase):
    """Replays a predictions file as a Method.

    ``dataset`` is the whole corpus (plain-text lines are aligned with it, ids are checked against
    it); ``entries`` are the ids being scored (a selection; default all), each of which needs an
    output unless ``allow_missing``.
    """

    resumable = False

    def __init__(
        self,
        path: str | Path,
        dataset: Dataset,
        *,
        fmt: Format = "auto",
        method_class: MethodClass = MethodClass.CUSTOM_PLUGIN,
        name: str = "predictions",
        entries: Sequence[int] | None = None,
        allow_missing: bool = False,
    ) -> None:
        self.path = Path(path)
        data = _read_bytes(self.path)
        text = _decode(data, self.path)
        self.format: Literal["jsonl", "text"] = _detect(self.path, text) if fmt == "auto" else fmt
        entry_ids = [entry.id for entry in dataset.entries]  # ids only: never the references
        if self.format == "jsonl":
            self.predictions = parse_jsonl(text, self.path)
        else:
            self.predictions = parse_text(text, self.path, entry_ids)
        _check_ids(self.predictions, entry_ids, self.path)
        wanted = list(entries) if entries is not None else entry_ids
        self.missing = [i for i in wanted if i not in self.predictions]
        if self.missing and not allow_missing:
            raise MethodError(
                f"no prediction for entry {self.missing[0]} ({len(self.missing)} of {len(wanted)} entries have none)",
                file=str(self.path), hint="give every entry an output, or score --allow-missing to score what "
                "exists and record the rest as errors")
        digest = hashlib.sha256(data).hexdigest()
        self.identity = MethodIdentity(
            name=name,
            method_class=method_class,
            version=f"sha256:{digest[:12]}",
            model_slug=self.path.stem,
            config={
                "predictions_file": str(path),
                "predictions_sha256": digest,
                "predictions_format": self.format,
            },
            provider="file",
        )

    @property
    def warnings(self) -> list[str]:
        if not self.missing:
            return []
        return [f"{len(self.missing)} entries have no prediction in {self.path} and are scored as errors "
                f"(--allow-missing): entries {id_ranges(self.missing)}"]

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        """Look each request up; an entry the file has no output for is an error, not a blank."""
        out = []
        for req in requests:
            found = self.predictions.get(req.entry_id)
            if found is None:
                out.append(Translation(req.entry_id, error=f"no prediction for entry {req.entry_id} in {self.path} "
                                                          "(--allow-missing)"))
            else:
                declared: dict[str, Any] = {}  # the submitter's figures, so the card labels them declared
                if found.latency_seconds is not None:
                    declared["declared_latency"] = True
                if found.cost_usd is not None:
                    declared["cost_source"] = "declared"
                out.append(
                    Translation(
                        req.entry_id,
                        text=found.text,
                        error=found.error,
                        latency_seconds=found.latency_seconds or 0.0,
                        usage=Usage(cost_usd=found.cost_usd or 0.0),
                        model_id=self.identity.model_slug,
                        extra=declared,
                    )
                )
        return out


# Words a user reaches for that are not class names; the message names the class meant.
_CLASS_SYNONYMS = {"rule-based": "rbmt", "rbmt-engine": "rbmt", "apertium": "rbmt", "llm": "raw-llm or coached-llm",
                   "local-nmt": "nmt", "neural": "nmt", "nllb": "nmt", "opus-mt": "nmt",
                   "deepl": "api", "google": "api", "translator": "human"}


def method_class_named(value: str) -> MethodClass:
    """The :class:`MethodClass` a user wrote (``--method-class``); anything else is refused naming the classes
    (a near word, e.g. ``rule-based``, names the class it means), never recorded as a new class."""
    text = value.strip().lower()
    try:
        return MethodClass(text)
    except ValueError:
        pass
    meant = _CLASS_SYNONYMS.get(text)
    classes = ", ".join(c.value for c in MethodClass)
    guess = f" (did you mean {meant}?)" if meant else ""
    raise MethodError(f"--method-class {value!r} is not a method class{guess}", field="method_class",
                      hint=f"one of: {classes}")


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise MethodError("predictions file not found", file=str(path)) from None
    except OSError as exc:
        raise MethodError(f"cannot read predictions file: {exc.strerror or exc}", file=str(path)) from exc


def _decode(data: bytes, path: Path) -> str:
    """UTF-8 (a BOM is tolerated); a bad byte is reported with its line number."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MethodError(f"not valid UTF-8 (byte {exc.start})", file=f"{path}:{line}") from None


def _detect(path: Path, text: str) -> Literal["jsonl", "text"]:
    """By suffix; otherwise JSONL when the first non-blank line is a JSON object with an id."""
    suffix = path.suffix.lower()
    if suffix in _JSONL_SUFFIXES:
        return "jsonl"
    if suffix in _TEXT_SUFFIXES:
        return "text"
    first = next((line for line in text.split("\n") if line.strip()), "")
    try:
        obj = json.loads(first)
    except ValueError:
        return "text"
    return "jsonl" if isinstance(obj, dict) and any(k in obj for k in _ID_KEYS) else "text"


def _pick(obj: dict[str, Any], keys: tuple[str, ...], where: str, what: str) -> Any:
    present = [k for k in keys if k in obj]
    if not present:
        raise MethodError(f"missing {what} (one of {', '.join(repr(k) for k in keys)})", file=where)
    if len(present) > 1:
        raise MethodError(f"both {present[0]!r} and {present[1]!r} given; use one", file=where)
    return obj[present[0]]


def parse_jsonl(text: str, path: Path) -> dict[int, Prediction]:
    """Entry id -> prediction; any malformed line is a MethodError naming ``FILE:LINE``."""
    out: dict[int, Prediction] = {}
    first_line: dict[int, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise MethodError(f"invalid JSON: {exc}", file=where, hint="JSON Lines: one object per line") from None
        if not isinstance(obj, dict):
            raise MethodError(f"expected a JSON object, got {type(obj).__name__}", file=where)
        entry_id = _pick(obj, _ID_KEYS, where, "entry id")
        if isinstance(entry_id, bool) or not isinstance(entry_id, int):
            raise MethodError(f"entry id must be an integer, got {entry_id!r}", file=where)
        predicted = _pick(obj, _TEXT_KEYS, where, "prediction text")
        if not isinstance(predicted, str):
            raise MethodError(f"prediction must be a string, got {type(predicted).__name__}", file=where)
        error = obj.get("error")
        if error is not None and not isinstance(error, str):
            raise MethodError("'error' must be a string or null", file=where)
        latency, cost = obj.get("latency_seconds"), obj.get("cost_usd")
        for name, value in (("latency_seconds", latency), ("cost_usd", cost)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                      or not math.isfinite(value) or value < 0):
                raise MethodError(f"'{name}' must be a non-negative number", file=where)
        if entry_id in out:
            raise MethodError(
                f"duplicate prediction for entry {entry_id} (first on line {first_line[entry_id]})", file=where
            )
        out[entry_id] = Prediction(predicted, error or None, None if latency is None else float(latency), number,
                                   None if cost is None else float(cost))
        first_line[entry_id] = number
    return out


def parse_text(text: str, path: Path, entry_ids: list[int]) -> dict[int, Prediction]:
    """Line i is the output for the i-th corpus entry; the counts must match exactly.

    Lines are split on ``\\n`` only (a trailing ``\\r`` is dropped for CRLF files), never on the
    other characters ``str.splitlines`` treats as breaks, which can occur inside a translation.
    An empty line is an empty output, not a missing one, except after the last entry's line:
    blank lines there are an editor's trailing newlines and are dropped.
    """
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    while len(lines) > len(entry_ids) and lines[-1] == "":
        lines.pop()  # trailing blank lines beyond the corpus are no entries
    if len(lines) != len(entry_ids):
        first = (f"line {len(entry_ids) + 1} is past the last entry" if len(lines) > len(entry_ids)
                 else f"entry {entry_ids[len(lines)]} has no line")
        raise MethodError(
            f"{len(lines)} lines but the corpus has {len(entry_ids)} entries ({first}); a plain-text predictions "
            "file needs exactly one line per entry, in corpus order",
            file=str(path),
        )
    pairs = zip(entry_ids, lines, strict=True)
    return {entry_id: Prediction(line, line=n) for n, (entry_id, line) in enumerate(pairs, start=1)}


def _check_ids(predictions: dict[int, Prediction], entry_ids: list[int], path: Path) -> None:
    """Every id must be one of the corpus's; the first that is not is named with its line."""
    known = set(entry_ids)
    unknown = sorted((p.line, i) for i, p in predictions.items() if i not in known)
    if not unknown:
        return
    line, ident = unknown[0]
    hint = "a file made for another corpus or selection? ids must be the corpus's entry ids"
    if 0 in predictions and 0 not in known and entry_ids and min(entry_ids) == 1:
        hint = "the ids look 0-based; the corpus numbers its entries from 1"
    raise MethodError(f"entry id {ident} is not in the corpus ({len(unknown)} such ids)", file=f"{path}:{line}",
                      hint=hint)


def id_ranges(ids: Sequence[int]) -> str:
    """``1-3, 7, 9-10``: every id, compactly (a card lists them all)."""
    parts: list[str] = []
    run: list[int] = []
    for i in sorted(ids):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ", ".join(parts)

"""Gold QA data and system predictions: loading and validation with located errors.

Two gold formats: SQuAD v1.1 JSON (XQuAD and friends; several gold answers per question) and a
simple JSONL (``{"id", "question", "answers": [...], "lang"}``). Predictions are JSONL
(``{"id", "prediction", "token_count"?, "evidence"?}``): translation cost comes either from a
top-level ``token_count`` or, as the spec computes it, from the sum of
``evidence[].metadata.token_count``. Every problem is a ``UserError`` naming the file and the
line or id, so the CLI can print one line instead of a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError


@dataclass(frozen=True)
class GoldItem:
    """One question with all acceptable answers (deduplicated, order kept)."""

    id: str
    question: str
    answers: tuple[str, ...]
    lang: str | None = None


@dataclass(frozen=True)
class Prediction:
    """One system answer. ``prediction`` None means the system failed on this question."""

    id: str
    prediction: str | None
    cost: float = 0.0


@dataclass(frozen=True)
class GoldSet:
    path: str
    items: tuple[GoldItem, ...]

    def by_id(self) -> dict[str, GoldItem]:
        return {item.id: item for item in self.items}


def load_gold(path: str | Path) -> GoldSet:
    """Load gold QA data, choosing the format from the content (a SQuAD file is one JSON object)."""
    p = Path(path)
    text = _read(p)
    stripped = text.lstrip()
    if p.suffix.lower() != ".jsonl" and stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            if p.suffix.lower() == ".json":
                raise UserError(f"invalid JSON at line {exc.lineno}: {exc.msg}", file=str(p)) from exc
            doc = None  # several JSON objects: JSONL without the extension
        if isinstance(doc, dict):
            items = _squad_items(doc, str(p))
            return GoldSet(str(p), _check_unique(items, str(p)))
    items = [_gold_from_record(rec, str(p), line) for line, rec in _jsonl_records(text, str(p))]
    if not items:
        raise UserError("no questions found", file=str(p))
    return GoldSet(str(p), _check_unique(items, str(p)))


def _squad_items(doc: dict[str, Any], path: str) -> list[GoldItem]:
    data = doc.get("data")
    if not isinstance(data, list):
        raise UserError("not a SQuAD file: missing list 'data'", file=path, field="data")
    items: list[GoldItem] = []
    for a, article in enumerate(data):
        paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
        if not isinstance(paragraphs, list):
            raise UserError("article without a 'paragraphs' list", file=path, entry=f"data[{a}]")
        for paragraph in paragraphs:
            for qa in (paragraph.get("qas") or []) if isinstance(paragraph, dict) else []:
                items.append(_squad_question(qa, path))
    if not items:
        raise UserError("no questions found", file=path)
    return items


def _squad_question(qa: Any, path: str) -> GoldItem:
    if not isinstance(qa, dict) or not isinstance(qa.get("id"), str):
        raise UserError("question without a string 'id'", file=path, field="id")
    qid = qa["id"]
    answers = qa.get("answers")
    if not isinstance(answers, list):
        raise UserError("'answers' must be a list", file=path, entry=qid, field="answers")
    texts = [a.get("text") if isinstance(a, dict) else None for a in answers]
    if not all(isinstance(t, str) for t in texts):
        raise UserError("every answer needs a string 'text'", file=path, entry=qid, field="answers")
    return GoldItem(
        id=qid,
        question=str(qa.get("question", "")),
        answers=_dedupe(qid, [t for t in texts if isinstance(t, str)], path),
    )


def _gold_from_record(rec: dict[str, Any], path: str, line: int) -> GoldItem:
    where = f"line {line}"
    qid = rec.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid:
        raise UserError("missing string 'id'", file=path, entry=where, field="id")
    answers = rec.get("answers")
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise UserError("'answers' must be a list of strings", file=path, entry=qid, field="answers")
    question = rec.get("question", "")
    if not isinstance(question, str):
        raise UserError("'question' must be a string", file=path, entry=qid, field="question")
    lang = rec.get("lang")
    if lang is not None and (not isinstance(lang, str) or not lang.strip()):
        raise UserError("'lang' must be a language tag", file=path, entry=qid, field="lang")
    return GoldItem(id=qid, question=question, answers=_dedupe(qid, answers, path), lang=lang)


def _dedupe(qid: str, answers: list[str], path: str) -> tuple[str, ...]:
    unique = tuple(dict.fromkeys(answers))
    if not unique:
        raise UserError(
            "no gold answers", file=path, entry=qid, field="answers",
            hint="unanswerable (SQuAD v2) questions are not supported",
        )  # fmt: skip
    return unique


def _check_unique(items: list[GoldItem], path: str) -> tuple[GoldItem, ...]:
    seen: set[str] = set()
    for item in items:
        if item.id in seen:
            raise UserError("duplicate question id", file=path, entry=item.id, field="id")
        seen.add(item.id)
    return tuple(items)


def load_predictions(path: str | Path, gold: GoldSet | None = None) -> dict[str, Prediction]:
    """Load a predictions JSONL keyed by id; with ``gold``, every id must be a gold question."""
    p = Path(path)
    known = {item.id for item in gold.items} if gold is not None else None
    out: dict[str, Prediction] = {}
    for line, rec in _jsonl_records(_read(p), str(p)):
        pred = _prediction_from_record(rec, str(p), line)
        if pred.id in out:
            raise UserError(f"duplicate prediction id '{pred.id}'", file=str(p), entry=f"line {line}")
        if known is not None and pred.id not in known:
            raise UserError(
                f"prediction id '{pred.id}' is not in the gold data ({gold.path if gold else ''})",
                file=str(p), entry=f"line {line}", field="id",
            )  # fmt: skip
        out[pred.id] = pred
    if not out:
        raise UserError("no predictions found", file=str(p))
    return out


def _prediction_from_record(rec: dict[str, Any], path: str, line: int) -> Prediction:
    where = f"line {line}"
    qid = rec.get("id")
    if isinstance(qid, int) and not isinstance(qid, bool):
        qid = str(qid)
    if not isinstance(qid, str) or not qid:
        raise UserError("missing string 'id'", file=path, entry=where, field="id")
    if "prediction" not in rec:
        raise UserError(f"id '{qid}': missing 'prediction'", file=path, entry=where, field="prediction")
    text = rec["prediction"]
    if text is not None and not isinstance(text, str):
        raise UserError(
            f"id '{qid}': 'prediction' must be a string or null", file=path, entry=where, field="prediction"
        )
    return Prediction(id=qid, prediction=text, cost=_cost(rec, qid, path, where))


def _cost(rec: dict[str, Any], qid: str, path: str, where: str) -> float:
    """Translation tokens for one query: ``token_count`` or the spec's sum over evidence metadata."""
    top = rec.get("token_count")
    if top is not None:
        top = _non_negative(top, qid, path, where, "token_count")
    evidence = rec.get("evidence")
    summed: float | None = None
    if evidence is not None:
        if not isinstance(evidence, list):
            raise UserError(f"id '{qid}': 'evidence' must be a list", file=path, entry=where, field="evidence")
        summed = 0.0
        for i, block in enumerate(evidence):
            meta = block.get("metadata") if isinstance(block, dict) else None
            if isinstance(meta, dict) and meta.get("token_count") is not None:
                summed += _non_negative(
                    meta["token_count"], qid, path, where, f"evidence[{i}].metadata.token_count"
                )
    if top is not None and summed is not None and summed > 0 and not math.isclose(top, summed):
        raise UserError(
            f"id '{qid}': token_count {top:g} disagrees with the evidence metadata sum {summed:g}",
            file=path, entry=where, field="token_count",
        )  # fmt: skip
    return top if top is not None else (summed or 0.0)


def _non_negative(value: Any, qid: str, path: str, where: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise UserError(f"id '{qid}': must be a non-negative number", file=path, entry=where, field=field)
    return float(value)


def _jsonl_records(text: str, path: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise UserError(f"invalid JSON: {exc.msg}", file=path, entry=f"line {line_no}") from exc
        if not isinstance(rec, dict):
            raise UserError("each line must be a JSON object", file=path, entry=f"line {line_no}")
        yield line_no, rec


def _read(p: Path) -> str:
    try:
        return p.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise UserError("file not found", file=str(p)) from exc
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", file=str(p)) from exc
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror}", file=str(p)) from exc

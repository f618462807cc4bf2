"""Semantic score (spec §7): an LLM judges whether a prediction means the same as the gold answer.

The prompt is the spec's, verbatim, plus one closing line asking for the JSON the spec says the
judge returns (``{"score": …, "explanation": …}``) — without it a model answers in prose. Several
acceptable gold answers are shown together, separated by `` | ``.

Judgments are cached in SQLite keyed on (model, SHA-256 of the full prompt, temperature), so
re-running an evaluation — or judging an identical answer from another system — costs nothing.
Errors are never cached: a failed or unparsable judgment is retried on the next run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from mt_eval.errors import UserError
from mt_eval.providers.openai_compat import ChatRequest, ChatUsage, OpenAICompatClient

PROMPT_TEMPLATE = """
Question: {question}
Gold Answer: {gold}
Predicted Answer: {pred}

Rate semantic equivalence from 0.0 to 1.0.
Consider:
- Same meaning in different wording → high score
- Different units but same value → high score
- Missing key info → lower score
- Contradicts gold answer → near 0
"""

JSON_INSTRUCTION = 'Respond with JSON only: {"score": <number from 0.0 to 1.0>, "explanation": "<one sentence>"}'

GOLD_SEPARATOR = " | "


def build_prompt(question: str, golds: Sequence[str], pred: str) -> str:
    """The spec's judge prompt for one sample (the spec passes ``lang`` but does not use it)."""
    body = PROMPT_TEMPLATE.format(question=question, gold=GOLD_SEPARATOR.join(golds), pred=pred)
    return body.strip() + "\n\n" + JSON_INSTRUCTION


@dataclass(frozen=True)
class Judgment:
    score: float
    explanation: str
    cached: bool = False
    usage: ChatUsage | None = None


class JudgeParseError(ValueError):
    """The judge answered, but not with a usable {"score", "explanation"} object."""


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def parse_judgment(content: str) -> tuple[float, str]:
    """Extract (score, explanation) from the judge's reply, tolerating code fences and prose around
    the JSON object; the score must be a number in [0, 1]."""
    candidates = [m.group(1) for m in _FENCE.finditer(content)]
    start, end = content.find("{"), content.rfind("}")
    if start != -1 and end > start:
        candidates.append(content[start : end + 1])
    candidates.append(content)
    for candidate in candidates:
        try:
            obj = json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "score" in obj:
            score = obj["score"]
            if isinstance(score, str):
                try:
                    score = float(score)
                except ValueError as exc:
                    raise JudgeParseError(f"score is not a number: {obj['score']!r}") from exc
            if isinstance(score, bool) or not isinstance(score, int | float) or not 0.0 <= score <= 1.0:
                raise JudgeParseError(f"score must be a number in [0, 1], got {obj['score']!r}")
            return float(score), str(obj.get("explanation", ""))
    raise JudgeParseError(f"no JSON object with a 'score' in the judge's reply: {content[:120]!r}")


class JudgeCache:
    """SQLite cache of successful judgments; one table, one row per (model, prompt, temperature)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS judgments ("
                " model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, temperature REAL NOT NULL,"
                " score REAL NOT NULL, explanation TEXT NOT NULL, content TEXT NOT NULL,"
                " created_at TEXT NOT NULL, PRIMARY KEY (model, prompt_sha256, temperature))"
            )
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"cannot open judge cache: {exc}", file=str(path)) from exc

    @staticmethod
    def key(model: str, prompt: str, temperature: float) -> tuple[str, str, float]:
        return model, hashlib.sha256(prompt.encode("utf-8")).hexdigest(), float(temperature)

    def get(self, model: str, prompt: str, temperature: float) -> tuple[float, str] | None:
        row = self._db.execute(
            "SELECT score, explanation FROM judgments WHERE model=? AND prompt_sha256=? AND temperature=?",
            self.key(model, prompt, temperature),
        ).fetchone()
        return (float(row[0]), str(row[1])) if row else None

    def put(self, model: str, prompt: str, temperature: float, score: float, explanation: str, content: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*self.key(model, prompt, temperature), score, explanation, content, datetime.now(UTC).isoformat()),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True)
class JudgeItem:
    question: str
    golds: tuple[str, ...]
    prediction: str


class SemanticJudge:
    """Scores samples through an OpenAI-compatible client, with an optional cache."""

    def __init__(
        self,
        client: OpenAICompatClient,
        model: str,
        *,
        temperature: float = 0.0,
        max_tokens: int | None = 300,
        cache: JudgeCache | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.cache = cache

    async def judge(self, item: JudgeItem) -> Judgment:
        """One judgment. An empty prediction scores 0.0 without a call: it cannot mean anything."""
        if not item.prediction.strip():
            return Judgment(0.0, "empty prediction", cached=False)
        prompt = build_prompt(item.question, item.golds, item.prediction)
        if self.cache is not None:
            hit = self.cache.get(self.model, prompt, self.temperature)
            if hit is not None:
                return Judgment(hit[0], hit[1], cached=True)
        response = await self.client.chat(
            ChatRequest(
                model=self.model,
                messages=({"role": "user", "content": prompt},),
                temperature=self.temperature,
                max_tokens=self.max_tokens,
            )
        )
        score, explanation = parse_judgment(response.content)  # raises: nothing is cached
        if self.cache is not None:
            self.cache.put(self.model, prompt, self.temperature, score, explanation, response.content)
        return Judgment(score, explanation, cached=False, usage=response.usage)

    async def judge_many(self, items: Sequence[JudgeItem]) -> list[Judgment | JudgeParseError]:
        """Judge all items concurrently (the client's semaphore bounds requests in flight).

        An unparsable reply is returned in place of its judgment so the caller can count it;
        a provider failure (retries exhausted, bad key) propagates and stops the run, because it
        would fail every other sample too.
        """

        async def one(item: JudgeItem) -> Judgment | JudgeParseError:
            try:
                return await self.judge(item)
            except JudgeParseError as exc:
                return exc

        unique = list(dict.fromkeys(items))  # identical samples (e.g. across systems) asked once
        results = dict(zip(unique, await asyncio.gather(*(one(item) for item in unique)), strict=True))
        return [results[item] for item in items]

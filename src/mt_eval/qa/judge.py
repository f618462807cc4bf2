"""Semantic score (spec §7): an LLM judges whether a prediction means the same as the gold answer.

The prompt is the spec's, verbatim, plus one closing line asking for the JSON the spec says the
judge returns (``{"score": …, "explanation": …}``) — without it a model answers in prose. Several
acceptable gold answers are shown together, separated by `` | ``.

Replies are kept in the harness's one LLM response cache (``providers/cache.py``, the same SQLite
store the LLM methods use), keyed on the whole request — provider, base URL, model, prompt,
temperature, max tokens — so re-running an evaluation, or judging an identical answer from another
system, costs nothing. Only a reply that parsed into a judgment is stored: a failed or unparsable
judgment is asked again on the next run, and a hit is parsed again from the stored reply.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from mt_eval.providers.cache import ResponseCache, cache_key
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
        cache: ResponseCache | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.cache = cache

    def request(self, item: JudgeItem) -> ChatRequest:
        """The chat request for one sample: one user message with the spec's prompt."""
        prompt = build_prompt(item.question, item.golds, item.prediction)
        return ChatRequest(
            model=self.model,
            messages=({"role": "user", "content": prompt},),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
        )

    def cache_key(self, request: ChatRequest) -> str:
        """Everything that can change the reply, as the LLM methods key theirs (plus a kind)."""
        endpoint = self.client.endpoint
        return cache_key(
            kind="qa-judge", provider=endpoint.provider, base_url=endpoint.base_url, model=request.model,
            messages=list(request.messages), temperature=request.temperature, max_tokens=request.max_tokens,
        )  # fmt: skip

    async def judge(self, item: JudgeItem) -> Judgment:
        """One judgment. An empty prediction scores 0.0 without a call: it cannot mean anything."""
        if not item.prediction.strip():
            return Judgment(0.0, "empty prediction", cached=False)
        request = self.request(item)
        key = self.cache_key(request)
        if self.cache is not None and (hit := self.cache.get(key)) is not None:
            score, explanation = parse_judgment(hit.content)
            return Judgment(score, explanation, cached=True)
        response = await self.client.chat(request)
        score, explanation = parse_judgment(response.content)  # raises: nothing is cached
        if self.cache is not None:
            self.cache.put(key, response.content, response.model)
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

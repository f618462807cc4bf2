"""A generated LLM-judge metric under the metric protocol (AutoMetrics §3.1, App. E.2).

One criterion (a *single-criterion* judge) or one criterion with five level descriptions (a *rubric*
judge) is put to an LLM for each entry: the source, the output and the reference, and "rate this
translation 1–5 on <criterion>". The integer answer is rescaled to 0–1 ((s − 1) / 4) so that judges sit
on the same scale as the other rates and can be z-scored beside them by ``calibrate``.

Statistics per entry are (score, judged, malformed): the corpus value is Σscore / Σjudged, so an entry
whose answer could not be read counts in ``malformed`` and in no mean (it is not guessed as 0 or 1).
Replies go through the harness's one response cache (``providers/cache.py``), keyed on the whole request,
at temperature 0: re-scoring the same outputs sends nothing. A failed provider call (retries exhausted,
a refused key) stops the run with one line (``ProviderError``); an unreadable answer never does.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import json
import re
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from mt_eval.metrics.base import MetricContext, Status
from mt_eval.metrics.rates import RatioMetric
from mt_eval.providers.cache import DEFAULT_CACHE, ResponseCache, cache_key
from mt_eval.providers.openai_compat import ChatRequest, OpenAICompatClient, RetryPolicy, resolve_endpoint

SINGLE, RUBRIC = "single", "rubric"
KINDS = (SINGLE, RUBRIC)
LOW, HIGH = 1, 5
JUDGE_VERSION = "judge-1"  # bump when the prompt below changes: it is in every signature and cache key

JUDGE_PROMPT = """You are evaluating a translation for this task: {task}

Measure: {criterion}
{description}
{rubric}
Source ({source_lang}):
{source}

Reference translation ({target_lang}):
{reference}

Translation to rate ({target_lang}):
{output}

Rate the translation on the measure only, with an integer from {low} (worst) to {high} (best).
Respond with JSON only: {{"score": <integer {low}-{high}>, "explanation": "<one sentence>"}}"""


class JudgeAnswerError(ValueError):
    """The judge answered, but not with a score it was asked for (an integer from 1 to 5 in a JSON
    object). Counted per metric in ``malformed``; the entry is left out of the metric's mean."""


@dataclass(frozen=True)
class JudgeSpec:
    """One generated judge, as its metric card's ``[judge]`` table stores it."""

    id: str
    kind: str
    criterion: str
    description: str
    task: str
    model: str
    base_url: str
    rubric: tuple[str, ...] = ()  # the five level descriptions, score 1 first (rubric judges)
    api_key_env: str | None = None
    max_tokens: int = 300
    card_sha256: str = ""  # the judge card's identity (``cards.card_sha256``): what a run card and a profile name

    def rubric_text(self) -> str:
        if not self.rubric:
            return ""
        return "Scoring rubric:\n" + "".join(f"{i}: {text}\n" for i, text in enumerate(self.rubric, LOW))

    @property
    def prompt_sha256(self) -> str:
        """Pins what the judge is asked (template, criterion, rubric, task), for the signature."""
        body = json.dumps([JUDGE_PROMPT, self.kind, self.criterion, self.description, list(self.rubric), self.task])
        return hashlib.sha256(body.encode("utf-8")).hexdigest()


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


def json_candidates(content: str) -> list[str]:
    """Where a JSON value may sit in a reply: fenced blocks, the outermost {...} or [...], the whole text."""
    out = [m.group(1) for m in _FENCE.finditer(content)]
    for open_, close in (("{", "}"), ("[", "]")):
        start, end = content.find(open_), content.rfind(close)
        if start != -1 and end > start:
            out.append(content[start : end + 1])
    return [*out, content]


def parse_score(content: str) -> tuple[int, str]:
    """(score, explanation) from a judge's reply; ``JudgeAnswerError`` unless the score is an integer 1–5."""
    for candidate in json_candidates(content):
        try:
            obj = json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and "score" in obj:
            score = obj["score"]
            if isinstance(score, str) and score.strip().isdigit():
                score = int(score.strip())
            if isinstance(score, float) and score.is_integer():
                score = int(score)
            if isinstance(score, bool) or not isinstance(score, int) or not LOW <= score <= HIGH:
                raise JudgeAnswerError(f"score must be an integer from {LOW} to {HIGH}, got {obj['score']!r}")
            return score, str(obj.get("explanation", ""))
    raise JudgeAnswerError(f"no JSON object with a 'score' in the judge's reply: {content[:120]!r}")


T = TypeVar("T")


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, also when an event loop is already running in
    this thread (a caller inside async code): then in a worker thread with its own loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@dataclass
class JudgeCounts:
    """What one scoring pass cost: requests sent, answers from the cache, unreadable answers."""

    sent: int = 0
    cached: int = 0
    malformed: int = 0
    errors: list[str] = field(default_factory=list)  # the first few unreadable answers, for the report


class JudgeMetric(RatioMetric):
    """A generated judge: statistics (score 0–1, judged, malformed) per entry; value Σscore / Σjudged."""

    higher_is_better = True
    status = Status.IMPLEMENTED
    cost = 10_000.0  # an LLM call per entry: always its own extraction bin
    reads_source = True
    egress = "remote"  # outputs, sources and references go to the judge's endpoint (scoring.egress)
    card_section = "judges"  # an opt-in metric (``metrics.opt_in``): one block per judge under ``judges``

    def __init__(self, spec: JudgeSpec, *, cache_path: str | None = DEFAULT_CACHE, concurrency: int = 8,
                 retry: RetryPolicy | None = None, base_url: str | None = None) -> None:
        self.spec = spec
        self.id = spec.id
        self.cache_path = cache_path
        self.concurrency = concurrency
        self.retry = retry
        self.base_url = base_url or spec.base_url
        self.counts = JudgeCounts()
        # the judge's one-sentence reason per (source, output, reference): its reasoning trace, for a person to
        # check that the scores measure what the criterion says (AutoMetrics §3.2, content validity)
        self.explanations: dict[tuple[str, str, str], str] = {}

    def signature(self, target: Any) -> str | None:
        return (f"{JUDGE_VERSION}|kind:{self.spec.kind}|model:{self.spec.model}|temperature:0"
                f"|prompt:{self.spec.prompt_sha256[:16]}|scale:{LOW}-{HIGH}")

    def card_block(self) -> dict[str, Any]:
        """What a run card records of this judge (``judges.<id>``): the judge card's sha256 and whom it asks;
        never a key, only the endpoint this run used and the model."""
        return {"sha256": self.spec.card_sha256, "kind": self.spec.kind, "model": self.spec.model,
                "base_url": self.base_url}

    def preflight(self, entries: Sequence[Any]) -> None:
        """Nothing of its own: its ``egress`` (remote) is refused on secret entries for every metric at once,
        before anything is translated (``scoring.egress.refuse_remote_on_secret``)."""

    def request(self, source: str, output: str, reference: str, ctx: MetricContext) -> ChatRequest:
        prompt = JUDGE_PROMPT.format(
            task=self.spec.task, criterion=self.spec.criterion, description=self.spec.description,
            rubric=self.spec.rubric_text(), source_lang=ctx.source.name, target_lang=ctx.target.name,
            source=source, reference=reference or "(none)", output=output, low=LOW, high=HIGH)
        return ChatRequest(model=self.spec.model, messages=({"role": "user", "content": prompt},),
                           temperature=0.0, max_tokens=self.spec.max_tokens)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        stats = np.zeros((len(hypotheses), 3))
        if not ctx.has_source:  # scored from references and outputs alone: the judge reads the source, so null
            return stats
        items: dict[tuple[str, str, str], list[int]] = {}
        for i, (hyp, entry) in enumerate(zip(hypotheses, ctx.entries, strict=True)):
            if not hyp.strip():
                stats[i, 1] = 1.0  # an empty output is the worst translation, without asking anyone
                continue
            items.setdefault((entry.source, hyp, entry.reference), []).append(i)  # identical triples asked once
        scores = run_sync(self._judge_all(list(items), ctx))
        for rows, score in zip(items.values(), scores, strict=True):
            if score is None:
                stats[rows, 2] = 1.0
            else:
                stats[rows, 0], stats[rows, 1] = (score - LOW) / (HIGH - LOW), 1.0
        return stats

    async def _judge_all(self, items: Sequence[tuple[str, str, str]], ctx: MetricContext) -> list[int | None]:
        cache = ResponseCache(self.cache_path) if self.cache_path else None
        endpoint = resolve_endpoint(base_url=self.base_url, api_key_env=self.spec.api_key_env)
        try:
            async with OpenAICompatClient(endpoint, concurrency=self.concurrency, retry=self.retry) as client:
                return list(await asyncio.gather(*(self._one(client, cache, item, ctx) for item in items)))
        finally:
            if cache is not None:
                cache.close()

    async def _one(self, client: OpenAICompatClient, cache: ResponseCache | None, item: tuple[str, str, str],
                   ctx: MetricContext) -> int | None:
        """One judgment: from the cache, else asked; None when the answer is unreadable (counted)."""
        request = self.request(*item, ctx)
        key = cache_key(kind=JUDGE_VERSION, base_url=client.endpoint.base_url, model=request.model,
                        messages=list(request.messages), temperature=request.temperature,
                        max_tokens=request.max_tokens)
        hit = cache.get(key) if cache is not None else None
        if hit is not None:
            self.counts.cached += 1
            content = hit.content
        else:
            response = await client.chat(request)  # ProviderError (retries exhausted, refused) stops the run
            self.counts.sent += 1
            content = response.content
        try:
            score, self.explanations[item] = parse_score(content)
        except JudgeAnswerError as exc:
            self.counts.malformed += 1
            if len(self.counts.errors) < 5:
                self.counts.errors.append(str(exc))
            return None  # never cached: asked again next time
        if hit is None and cache is not None:
            cache.put(key, content, self.spec.model)
        return score

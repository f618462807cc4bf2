"""LLM translation methods (raw and coached) over any OpenAI-compatible chat-completions server.

The engine hands :meth:`LLMMethod.translate` one group of at most ``batch_size`` entries at a time
and runs many groups at once; this class turns a group into requests: one batched request whose
answer is verified entry by entry (mis-numbered, missing or unparsable entries are re-requested
alone), or one request per entry. The shared client caps requests truly in flight at
``concurrency`` and frees a slot while a request waits to retry. Responses go through the SQLite
cache (temperature 0 or a fixed seed only: a sampled answer is not reproducible, so caching it would
hide the variance a rerun is meant to show). Cost is the provider's ``usage.cost`` when reported,
else the pricing table's; each translation says which in ``extra["cost_source"]``.

A failure that is the entry's own (retries exhausted, an empty answer after retries) becomes that
entry's error; a refusal every request would get (:attr:`ProviderError.fatal`: bad key, unknown
model) is raised instead, so the engine stops the run rather than record the same refusal for every
entry. Single and batched answers are cleaned by the same rule (:func:`prompts.clean_answer`), so a
text never depends on ``--batch-size``.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.methods import prompts
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest, Usage
from mt_eval.methods.batching import check_batch
from mt_eval.methods.pricing import PricingTable
from mt_eval.providers.cache import DEFAULT_CACHE, ResponseCache, cache_key
from mt_eval.providers.openai_compat import (
    ChatRequest,
    Endpoint,
    OpenAICompatClient,
    ProviderError,
    RetryPolicy,
    resolve_endpoint,
)

METHOD_VERSION = "1"
CHARS_PER_TOKEN = 4.0  # dry-run estimate only; real runs use the provider's counts


@dataclass(frozen=True)
class LLMSettings:
    """Everything the ``llm``/``coached``/``pipeline`` CLI options set (never the API key itself)."""

    model: str
    provider: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    system_prompt_file: str | None = None
    coaching_file: str | None = None
    batch_size: int = 1
    concurrency: int = 8
    max_retries: int = 5
    timeout_s: float = 60.0
    cache_path: str | None = DEFAULT_CACHE
    pricing_file: str | None = None
    retry_base_delay: float = 0.5
    require_key: bool = True  # False for --dry-run: the plan sends nothing, so an unset key is no error


@dataclass
class Reply:
    """One answered call, cached or not."""

    content: str
    model_id: str
    usage: Usage
    latency: float
    attempts: int
    cached: bool
    cost_source: str | None  # "provider", "pricing-table", None (unknown) or "cache"
    price: dict[str, Any] | None = None  # the pricing-table row that priced it (cost_source "pricing-table")


@dataclass
class CallStats:
    retries: int = 0
    requests: int = 0
    cache_hits: int = 0
    cost_sources: set[str] = field(default_factory=set)


def _read(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {what}: {exc.strerror}", file=path) from None


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class LLMMethod(MethodBase):
    """``llm`` (raw-llm) and ``coached`` (coached-llm); also the translator inside a pipeline."""

    batch_size: int  # always set (≥ 1): the engine's groups are this method's requests
    concurrency: int

    def __init__(self, settings: LLMSettings, *, source_language: str, target_language: str,
                 source_name: str = "", target_name: str = "", coached: bool = False,
                 endpoint: Endpoint | None = None) -> None:
        s = settings
        if s.batch_size < 1 or s.concurrency < 1 or s.max_retries < 0:
            raise UserError("--batch-size and --concurrency must be ≥ 1, --max-retries ≥ 0")
        if coached and not s.coaching_file:
            raise UserError("the coached method needs --coaching FILE")
        self.settings = s
        self.endpoint = endpoint or resolve_endpoint(s.provider, s.base_url, s.api_key_env,
                                                     require_key=s.require_key)
        self.pricing = PricingTable.load(s.pricing_file)
        template = _read(s.system_prompt_file, "system prompt") if s.system_prompt_file else prompts.BUILTIN_TEMPLATE
        coaching = _read(s.coaching_file, "coaching file") if s.coaching_file else None
        self.system_prompt = prompts.system_prompt(template, source_language, target_language,
                                                   source_name or source_language, target_name or target_language,
                                                   coaching)
        self.batch_size = s.batch_size
        self.concurrency = s.concurrency
        self.stats = CallStats()
        self.cacheable = s.cache_path is not None and (s.temperature == 0 or s.seed is not None)
        config: dict[str, Any] = {
            "model": s.model, "temperature": s.temperature, "max_tokens": s.max_tokens, "seed": s.seed,
            "batch_size": s.batch_size, "concurrency": s.concurrency, "http_max_retries": s.max_retries,
            "base_url": self.endpoint.base_url, "system_prompt_file": s.system_prompt_file,
            "coaching_file": s.coaching_file,
            "coaching_data_sha256": _sha256(coaching) if coaching is not None else None,
            "pricing": self.pricing.source,
        }
        kind = "coached" if coached else "llm"
        self.identity = MethodIdentity(
            name=f"{kind}:{s.model}", method_class=MethodClass.COACHED_LLM if coached else MethodClass.RAW_LLM,
            version=METHOD_VERSION, model_slug=s.model, config=config, provider=self.endpoint.provider,
            system_prompt=self.system_prompt, coaching=coaching)
        self._client: OpenAICompatClient | None = None
        self._cache: ResponseCache | None = None

    # --- lifecycle (called by the engine inside its event loop) --------------------------------
    async def open(self) -> None:
        s = self.settings
        retry = RetryPolicy(max_attempts=s.max_retries + 1, base_delay=s.retry_base_delay)
        self._client = OpenAICompatClient(self.endpoint, concurrency=s.concurrency, timeout_s=s.timeout_s,
                                          retry=retry, on_retry=self._count_retry)
        await self._client.__aenter__()
        if self.cacheable and s.cache_path:
            self._cache = ResponseCache(s.cache_path)

    async def close(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    @property
    def retries(self) -> int:
        return self.stats.retries

    def _count_retry(self, _reason: str) -> None:
        self.stats.retries += 1

    # --- one call ------------------------------------------------------------------------------
    def messages(self, user: str, history: Sequence[dict[str, str]] = ()) -> tuple[dict[str, str], ...]:
        return ({"role": "system", "content": self.system_prompt}, *history, {"role": "user", "content": user})

    async def call(self, messages: tuple[dict[str, str], ...]) -> Reply:
        """Send (or look up) one request; raises ProviderError when it fails for good."""
        s = self.settings
        key = None
        if self._cache is not None:  # hashing every prompt costs the event loop time: only with a cache
            key = cache_key(provider=self.endpoint.provider, base_url=self.endpoint.base_url, model=s.model,
                            messages=list(messages), temperature=s.temperature, seed=s.seed,
                            max_tokens=s.max_tokens, method_version=METHOD_VERSION)
            if (hit := self._cache.get(key)) is not None:
                self.stats.cache_hits += 1
                return Reply(hit.content, hit.model_id, Usage(), 0.0, 0, True, "cache")
        if self._client is None:
            raise RuntimeError("LLMMethod used outside the engine (call open() first)")
        self.stats.requests += 1
        resp = await self._client.chat(ChatRequest(s.model, messages, s.temperature, s.max_tokens, s.seed))
        u = resp.usage
        usage = Usage(u.prompt_tokens, u.completion_tokens, u.reasoning_tokens, u.cached_tokens)
        source: str | None
        priced: dict[str, Any] | None = None
        if u.cost is not None:
            usage.cost_usd, source = u.cost, "provider"
        elif (found := self.pricing.lookup(resp.model) or self.pricing.lookup(s.model)) is not None:
            name, price = found
            usage.cost_usd, source = price.cost(u.prompt_tokens, u.completion_tokens, u.cached_tokens), "pricing-table"
            # the row that priced it goes on the card (cost.pricing), so verify recomputes tokens × prices
            priced = {"model": name, "prompt": price.prompt, "completion": price.completion,
                      "cached_prompt": price.cached_prompt}
        else:
            source = None
        self.stats.cost_sources.add(source or "unknown")
        if not resp.content.strip():
            raise ProviderError(f"empty response (finish_reason {resp.finish_reason})")
        if self._cache is not None and key is not None:
            self._cache.put(key, resp.content, resp.model)
        return Reply(resp.content, resp.model, usage, resp.latency_s, resp.attempts, False, source, priced)

    # --- the Method protocol ---------------------------------------------------------------------
    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        if len(requests) > 1 and self.batch_size > 1:
            return await self._batched(requests)
        if len(requests) == 1:  # the engine's usual group at --batch-size 1: no task to spawn
            return [await self.translate_one(requests[0])]
        return list(await asyncio.gather(*(self.translate_one(r) for r in requests)))

    async def translate_one(self, request: TranslationRequest, extra: dict[str, Any] | None = None) -> Translation:
        try:
            reply = await self.call(self.messages(prompts.single_message(request)))
        except ProviderError as exc:
            if exc.fatal:
                raise
            return Translation(request.entry_id, error=exc.message, extra={**(extra or {}), "batched": False})
        return self.to_translation(request.entry_id, prompts.clean_single(reply.content, request.source), reply,
                                   {**(extra or {}), "batched": False})

    @staticmethod
    def to_translation(entry_id: int, text: str, reply: Reply, extra: dict[str, Any]) -> Translation:
        return Translation(entry_id, text, latency_seconds=reply.latency, usage=reply.usage, model_id=reply.model_id,
                           extra={"attempts": reply.attempts, "cached": reply.cached,
                                  "cost_source": reply.cost_source,
                                  **({"price": reply.price} if reply.price is not None else {}), **extra})

    async def _batched(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        try:
            reply = await self.call(self.messages(prompts.batch_message(requests)))
        except ProviderError as exc:
            if exc.fatal:
                raise
            return [Translation(r.entry_id, error=exc.message, extra={"batched": True}) for r in requests]
        check = check_batch(reply.content, {r.entry_id: r.source for r in requests})
        shares = _split(reply.usage, len(requests))
        out: dict[int, Translation] = {}
        for r, share in zip(requests, shares, strict=True):
            if r.entry_id in check.accepted:
                part = Reply(reply.content, reply.model_id, share, reply.latency, reply.attempts, reply.cached,
                             reply.cost_source, reply.price)
                text = prompts.clean_answer(check.accepted[r.entry_id], r.source)
                out[r.entry_id] = self.to_translation(r.entry_id, text, part,
                                                      {"batched": True, "batch_size": len(requests)})
        retried = [r for r in requests if r.entry_id in check.rejected]
        alone = await asyncio.gather(*(self.translate_one(r, {"batch_rejected": check.rejected[r.entry_id]})
                                       for r in retried))
        for r, got in zip(retried, alone, strict=True):
            got.usage.add(shares[requests.index(r)])  # its share of the batch was spent too
            out[r.entry_id] = got
        return [out[r.entry_id] for r in requests]

    # --- before spending -----------------------------------------------------------------------------
    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any]:
        """Requests and estimated tokens/cost for ``--dry-run`` and ``--budget-usd`` (no network)."""
        k = self.batch_size
        groups = [requests[i : i + k] for i in range(0, len(requests), k)]
        prompt_chars = completion_chars = 0
        for g in groups:
            user = prompts.batch_message(g) if len(g) > 1 else prompts.single_message(g[0])
            prompt_chars += len(self.system_prompt) + len(user)
            completion_chars += sum(int(len(r.source) * 1.2) + (40 if len(g) > 1 else 0) for r in g)
        prompt_tokens = math.ceil(prompt_chars / CHARS_PER_TOKEN)
        completion_tokens = math.ceil(completion_chars / CHARS_PER_TOKEN)
        price = self.pricing.get(self.settings.model)
        return {
            "entries": len(requests), "requests": len(groups), "batch_size": k,
            "concurrency": self.concurrency, "est_prompt_tokens": prompt_tokens,
            "est_completion_tokens": completion_tokens,
            "est_cost_usd": price.cost(prompt_tokens, completion_tokens) if price else None,
            "pricing": self.pricing.source,
        }


def _split(usage: Usage, n: int) -> list[Usage]:
    """A batch's usage shared out so the per-entry values add up exactly to the request's."""
    def part(total: int, i: int) -> int:
        return total // n + (1 if i < total % n else 0)

    return [Usage(part(usage.prompt_tokens, i), part(usage.completion_tokens, i), part(usage.reasoning_tokens, i),
                  part(usage.cached_tokens, i), usage.cost_usd / n) for i in range(n)]

"""What the commercial MT APIs (``deepl``, ``google``) share: the key, retries, batching, declared cost.

Each API is one :class:`ApiProtocol` (where to post, the body for a batch of texts, the texts out of an
answer); :class:`MTApiMethod` does the rest the way the LLM provider does it (providers/openai_compat.py):
429 and 5xx retried with exponential backoff and full jitter, ``Retry-After`` honoured, requests in
flight capped by a semaphore held only around the exchange, a refusal every request would get (bad key
401/403, DeepL's 456 quota exceeded) raised so the engine stops the run rather than record it per entry.
A malformed answer (not JSON, the wrong number of texts) is retried: it is the call's failure, not a
translation.

Cost: both bill per source character and report no price, so the card's measured cost stays unknown;
each translation carries the characters billed and the cost at the declared list price
(``extra["declared_cost_usd"]``, price and date in the method config), and :meth:`plan` estimates it
for ``--dry-run`` and ``--budget-usd``.
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from mt_eval.errors import MethodError
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.providers.openai_compat import RETRY_STATUSES, ProviderError, RetryPolicy, parse_retry_after

METHOD_VERSION = "1"
FATAL_API_STATUSES = frozenset({400, 401, 403, 404, 456})  # 456: DeepL's "quota exceeded"


@dataclass(frozen=True)
class ApiCall:
    """One HTTP request of a batch: where, headers, query parameters and JSON body."""

    url: str
    headers: dict[str, str]
    params: dict[str, str]
    body: dict[str, Any]


class ApiProtocol(Protocol):
    """One commercial API's wire format."""

    @property
    def name(self) -> str: ...

    @property
    def max_texts(self) -> int:
        """Texts per request the API accepts."""
        ...

    @property
    def price_usd_per_million_chars(self) -> float: ...

    @property
    def price_source(self) -> str: ...

    def call(self, texts: Sequence[str]) -> ApiCall: ...

    def texts(self, data: Any) -> list[str]:
        """The translations in an answer, in request order; ValueError when the answer is malformed."""
        ...


@dataclass(frozen=True)
class ApiSettings:
    concurrency: int = 4
    max_retries: int = 5
    timeout_s: float = 60.0
    retry_base_delay: float = 0.5
    batch_size: int | None = None  # None: the API's own maximum texts per request


def read_key(variable: str, *, require: bool) -> str:
    """The API key from ``variable``; unset is a user error before any request (not for a dry run)."""
    key = os.environ.get(variable, "")
    if not key and require:
        raise MethodError(f"environment variable {variable} is not set", field=variable,
                          hint="export it with the API key (see mt-eval run --help)")
    return key


class _Retry(Exception):
    def __init__(self, message: str, status: int | None, retry_after: float | None) -> None:
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


class MTApiMethod(MethodBase):
    """A commercial MT API as a method of class ``api``; requests of ``batch_size`` texts."""

    batch_size: int
    concurrency: int

    def __init__(self, api: ApiProtocol, settings: ApiSettings, config: Mapping[str, Any], *,
                 rng: random.Random | None = None) -> None:
        if settings.concurrency < 1 or settings.max_retries < 0 or (settings.batch_size or 1) < 1:
            raise MethodError("--concurrency and --batch-size must be ≥ 1, --max-retries ≥ 0")
        self.api, self.settings = api, settings
        self.batch_size = min(settings.batch_size or api.max_texts, api.max_texts)
        self.concurrency = settings.concurrency
        self.policy = RetryPolicy(max_attempts=settings.max_retries + 1, base_delay=settings.retry_base_delay)
        self._rng = rng or random.Random()
        self._retries = 0
        self._http: httpx.AsyncClient | None = None
        self._gate: asyncio.Semaphore | None = None
        self.identity = MethodIdentity(
            name=api.name, method_class=MethodClass.API, version=METHOD_VERSION, model_slug=api.name,
            provider=api.name, config={**config, "batch_size": self.batch_size,
                                       "price_usd_per_million_chars": api.price_usd_per_million_chars,
                                       "price_source": api.price_source})

    @property
    def retries(self) -> int:
        return self._retries

    async def open(self) -> None:
        limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
        self._http = httpx.AsyncClient(timeout=httpx.Timeout(self.settings.timeout_s), limits=limits)
        self._gate = asyncio.Semaphore(self.concurrency)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    def declared_cost(self, characters: int) -> float:
        return characters * self.api.price_usd_per_million_chars / 1e6

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any]:
        characters = sum(len(r.source) for r in requests)
        return {"entries": len(requests), "requests": -(-len(requests) // self.batch_size),
                "batch_size": self.batch_size, "concurrency": self.concurrency, "billed_characters": characters,
                "est_cost_usd": self.declared_cost(characters), "pricing": self.api.price_source}

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        groups = [requests[i:i + self.batch_size] for i in range(0, len(requests), self.batch_size)]
        done = await asyncio.gather(*(self._group(g) for g in groups))
        return [t for group in done for t in group]

    async def _group(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        started = time.monotonic()
        try:
            texts, attempts = await self._send([r.source for r in requests])
        except ProviderError as exc:
            if exc.fatal:
                raise
            return [Translation(r.entry_id, error=exc.message, model_id=self.api.name) for r in requests]
        share = (time.monotonic() - started) / len(requests)  # one request's time, shared by its entries
        return [Translation(r.entry_id, text, latency_seconds=share, model_id=self.api.name,
                            extra={"attempts": attempts, "billed_characters": len(r.source),
                                   "declared_cost_usd": self.declared_cost(len(r.source))})
                for r, text in zip(requests, texts, strict=True)]

    async def _send(self, texts: Sequence[str]) -> tuple[list[str], int]:
        if self._http is None or self._gate is None:
            raise RuntimeError(f"{self.api.name} used outside the engine (call open() first)")
        call = self.api.call(texts)
        last: _Retry | None = None
        for attempt in range(1, self.policy.max_attempts + 1):
            try:
                async with self._gate:  # held for the exchange only, never while waiting to retry
                    return self._answer(await self._post(call), len(texts)), attempt
            except _Retry as exc:
                last = exc
                if attempt == self.policy.max_attempts:
                    break
                self._retries += 1
                await asyncio.sleep(self.policy.delay(attempt - 1, exc.retry_after, self._rng))
        assert last is not None
        raise ProviderError(f"{self.api.name}: giving up after {self.policy.max_attempts} attempts: {last}",
                            status=last.status, retryable=True)

    async def _post(self, call: ApiCall) -> httpx.Response:
        assert self._http is not None
        try:
            return await self._http.post(call.url, headers=call.headers, params=call.params, json=call.body)
        except httpx.TimeoutException as exc:
            raise _Retry(f"timeout ({type(exc).__name__})", None, None) from exc
        except httpx.TransportError as exc:
            raise _Retry(f"connection error ({type(exc).__name__})", None, None) from exc

    def _answer(self, resp: httpx.Response, count: int) -> list[str]:
        retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        if resp.status_code in RETRY_STATUSES:
            raise _Retry(f"HTTP {resp.status_code}", resp.status_code, retry_after)
        if resp.status_code >= 400:
            # every later request would get the same answer (key, quota, language): the run stops here
            error = ProviderError(f"{self.api.name}: HTTP {resp.status_code}: {resp.text[:200]}",
                                  status=resp.status_code)
            if resp.status_code in FATAL_API_STATUSES:
                raise MethodError(error.message, hint=_HINTS.get(resp.status_code))
            raise error
        try:
            texts = self.api.texts(resp.json())
        except ValueError as exc:
            raise _Retry(f"malformed answer: {exc}", resp.status_code, retry_after) from None
        if len(texts) != count:
            raise _Retry(f"malformed answer: {len(texts)} translations for {count} texts", resp.status_code, None)
        return texts


_HINTS = {401: "check the API key", 403: "check the API key (and, for DeepL, the free/pro host)",
          456: "the DeepL character quota is used up: wait for the next billing period or upgrade",
          400: "the API refused the request (language pair not supported?)",
          404: "check --base-url"}

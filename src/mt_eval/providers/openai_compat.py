"""An async client for OpenAI-compatible chat-completions endpoints (OpenRouter, OpenAI, vLLM, …).

One small client serves the QA judge now and the LLM translation methods later, so it knows
nothing about either: it sends a :class:`ChatRequest`, returns a :class:`ChatResponse` with the
text, the model that actually answered and the usage the provider reported (tokens, reasoning
and cached tokens, cost), and handles what every caller would otherwise re-implement badly:

* retries with exponential backoff and full jitter on 429, 5xx, timeouts and connection errors,
  honouring ``Retry-After`` (seconds or an HTTP date);
* a bounded :class:`asyncio.Semaphore` limiting requests in flight. The semaphore is held only
  around the HTTP exchange, never while sleeping before a retry, so one rate-limited request
  does not stall the others. The connection pool is sized to the same number and keeps every
  connection alive: httpx's defaults (100 connections, 20 kept alive) would cap a higher
  ``concurrency`` at 100, and above 20 close and reopen a connection for most requests;
* an empty completion (no text, whatever the finish reason) is retried like a 5xx: it is a failure
  of the call, not an answer, and a second attempt usually has text;
* errors no retry can fix (401, 402, 403, 404: a bad key, no credit, no access, no such model) are
  :attr:`ProviderError.fatal`, so a caller running many requests can stop at the first instead of
  spending the whole run on the same refusal;
* the API key is read from an environment variable named by the caller and never logged or
  included in ``repr``; it may be left unresolved (``require_key=False``) for a dry run that
  sends nothing.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from mt_eval.errors import UserError
from mt_eval.providers.pool import SharedPool, active_pool

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529})
# the same answer for every request of a run: unauthorised, payment required, forbidden, no such model
FATAL_STATUSES = frozenset({401, 402, 403, 404})


@dataclass(frozen=True)
class Preset:
    """A named provider: where it lives and which environment variable holds its key."""

    base_url: str
    api_key_env: str


PRESETS: dict[str, Preset] = {
    "openrouter": Preset("https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "openai": Preset("https://api.openai.com/v1", "OPENAI_API_KEY"),
}
DEFAULT_PROVIDER = "openrouter"


@dataclass(frozen=True)
class Endpoint:
    """A resolved endpoint. The key is excluded from repr so it cannot leak into logs or errors."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    provider: str = "custom"


def resolve_endpoint(
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    *,
    environ: dict[str, str] | None = None,
    require_key: bool = True,
) -> Endpoint:
    """Turn CLI-level choices into an :class:`Endpoint`.

    A preset supplies a base URL and key variable; ``base_url`` overrides the URL (any
    OpenAI-compatible server) and ``api_key_env`` the variable. A custom base URL with no key
    variable sends no Authorization header (local servers rarely want one); a preset or an
    explicitly named variable that is unset is a user error, reported before any request, unless
    ``require_key`` is False (``--dry-run``: nothing is sent, so no key is needed).
    """
    env = os.environ if environ is None else environ
    provider, preset = _preset(provider, base_url)
    url = (base_url or (preset.base_url if preset else "")).rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise UserError(f"base URL must start with http:// or https://: '{url}'", field="base_url")
    key_env = key_variable(provider, base_url, api_key_env)
    key: str | None = None
    if key_env:
        key = env.get(key_env) or None
        if not key and require_key:
            raise UserError(
                f"environment variable {key_env} is not set", hint="export it with the provider's API key"
            )
    return Endpoint(base_url=url, api_key=key, provider=(provider or "custom").lower())


def _preset(provider: str | None, base_url: str | None) -> tuple[str | None, Preset | None]:
    """The named provider's preset; none named and no URL means the default provider."""
    if provider is not None:
        preset = PRESETS.get(provider.lower())
        if preset is None:
            raise UserError(
                f"unknown provider '{provider}'", field="provider", hint=f"choose from {', '.join(PRESETS)}"
            )
        return provider, preset
    if base_url is None:
        return DEFAULT_PROVIDER, PRESETS[DEFAULT_PROVIDER]
    return None, None


def key_variable(provider: str | None, base_url: str | None, api_key_env: str | None) -> str | None:
    """The environment variable an endpoint's key is read from (None: a local server without one).
    A sweep on Ray hands exactly these variables to its tasks."""
    _, preset = _preset(provider, base_url)
    return api_key_env or (preset.api_key_env if preset else None)


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions call. ``extra`` carries provider-specific body fields verbatim."""

    model: str
    messages: tuple[dict[str, str], ...]
    temperature: float | None = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def body(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": [dict(m) for m in self.messages]}
        if self.temperature is not None:
            payload["temperature"] = self.temperature
        if self.max_tokens is not None:
            payload["max_tokens"] = self.max_tokens
        if self.seed is not None:
            payload["seed"] = self.seed
        if self.response_format is not None:
            payload["response_format"] = self.response_format
        payload.update(self.extra)
        return payload


@dataclass(frozen=True)
class ChatUsage:
    """Usage as reported by the provider. ``cost`` is None when the provider reports none."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost: float | None = None

    @classmethod
    def from_json(cls, usage: Any) -> ChatUsage:
        if not isinstance(usage, dict):
            return cls()
        completion_details = usage.get("completion_tokens_details") or {}
        prompt_details = usage.get("prompt_tokens_details") or {}
        cost = usage.get("cost")
        prompt = _as_int(usage.get("prompt_tokens"))
        completion = _as_int(usage.get("completion_tokens"))
        return cls(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=_as_int(usage.get("total_tokens")) or prompt + completion,
            reasoning_tokens=_as_int(completion_details.get("reasoning_tokens")),
            cached_tokens=_as_int(prompt_details.get("cached_tokens")),
            cost=float(cost) if isinstance(cost, int | float) else None,
        )


@dataclass(frozen=True)
class ChatResponse:
    """The first choice's text plus what the caller needs to account for the call."""

    content: str
    model: str
    usage: ChatUsage
    finish_reason: str | None
    attempts: int
    latency_s: float
    raw: dict[str, Any] = field(repr=False, default_factory=dict)


class ProviderError(UserError):
    """A request that failed for good: retries exhausted, or a non-retryable status (401, 400…)."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        self.status = status
        self.retryable = retryable
        super().__init__(message)

    @property
    def fatal(self) -> bool:
        """The provider refuses every request of this kind (key, credit, access, model): stop, do not go on."""
        return not self.retryable and self.status in FATAL_STATUSES


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with full jitter: sleep ~ U(0, min(max_delay, base · 2^attempt)).

    A ``Retry-After`` header overrides the computed delay (capped at ``max_retry_after``), since
    the server knows better than our formula when it will accept the next request.
    """

    max_attempts: int = 6
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = 120.0

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        return rng.uniform(0.0, min(self.max_delay, self.base_delay * (2**attempt)))


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds (fractions tolerated) or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


class _Retryable(Exception):
    def __init__(self, message: str, status: int | None, retry_after: float | None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class OpenAICompatClient:
    """Async chat-completions client; use as ``async with OpenAICompatClient(endpoint) as c``."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        concurrency: int = 8,
        timeout_s: float = 60.0,
        retry: RetryPolicy | None = None,
        rng: random.Random | None = None,
        headers: dict[str, str] | None = None,
        on_retry: Callable[[str], None] | None = None,
        retry_empty: bool = True,
        pool: SharedPool | None = None,
    ) -> None:
        if concurrency < 1:
            raise UserError("concurrency must be at least 1", field="concurrency")
        self.endpoint = endpoint
        self.retry = retry or RetryPolicy()
        self._rng = rng or random.Random()
        self._concurrency = concurrency
        self._semaphore = asyncio.Semaphore(concurrency)
        self._timeout = httpx.Timeout(timeout_s)
        self._headers = {"Content-Type": "application/json", **(headers or {})}
        if endpoint.api_key:
            self._headers["Authorization"] = f"Bearer {endpoint.api_key}"
        self._http: httpx.AsyncClient | None = None
        self._on_retry = on_retry  # told the reason of every retry (progress bars count them)
        self._retry_empty = retry_empty
        self._pool = pool or active_pool()  # a sweep's cells share connections and the in-flight limit

    async def __aenter__(self) -> OpenAICompatClient:
        limits = httpx.Limits(max_connections=self._concurrency, max_keepalive_connections=self._concurrency)
        self._http = httpx.AsyncClient(timeout=self._timeout, headers=self._headers, limits=limits)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None

    @property
    def url(self) -> str:
        return f"{self.endpoint.base_url}/chat/completions"

    async def chat(self, request: ChatRequest) -> ChatResponse:
        """Send one request, retrying transient failures; raise ProviderError when it cannot succeed."""
        if self._http is None:
            raise RuntimeError("OpenAICompatClient used outside 'async with'")
        started = time.monotonic()
        body = request.body()
        last: _Retryable | None = None
        for attempt in range(1, self.retry.max_attempts + 1):
            try:
                async with self._semaphore:  # held for the exchange only, never during the sleep
                    data = await self._exchange(body)
                response = _parse_response(data, request.model, attempt, time.monotonic() - started)
                if self._retry_empty and not response.content.strip():
                    raise _Retryable(f"empty completion (finish_reason {response.finish_reason})", None, None)
                return response
            except _Retryable as exc:
                last = exc
                if attempt == self.retry.max_attempts:
                    break
                delay = self.retry.delay(attempt - 1, exc.retry_after, self._rng)
                if self._on_retry is not None:
                    self._on_retry(str(exc))
                log.warning(
                    "chat request to %s failed (%s); retry %d/%d in %.2fs",
                    self.endpoint.base_url, exc, attempt, self.retry.max_attempts - 1, delay,
                )  # fmt: skip
                await asyncio.sleep(delay)
        assert last is not None
        raise ProviderError(
            f"{self.url}: giving up after {self.retry.max_attempts} attempts: {last}",
            status=last.status,
            retryable=True,
        )

    async def _exchange(self, body: dict[str, Any]) -> dict[str, Any]:
        assert self._http is not None
        try:
            if self._pool is not None:
                resp = await self._pool.post(self.endpoint.base_url, self.url, body, self._headers, self._timeout)
            else:
                resp = await self._http.post(self.url, json=body)
        except httpx.TimeoutException as exc:
            raise _Retryable(f"timeout ({type(exc).__name__})", None, None) from exc
        except httpx.TransportError as exc:
            raise _Retryable(f"connection error ({type(exc).__name__}: {exc})", None, None) from exc
        retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        if resp.status_code in RETRY_STATUSES:
            raise _Retryable(f"HTTP {resp.status_code}", resp.status_code, retry_after)
        if resp.status_code >= 400:
            raise ProviderError(
                f"{self.url}: HTTP {resp.status_code}: {_error_message(resp)}", status=resp.status_code
            )
        try:
            data = resp.json()
        except ValueError as exc:
            raise _Retryable("response body is not JSON", resp.status_code, retry_after) from exc
        if not isinstance(data, dict):
            raise _Retryable("response body is not a JSON object", resp.status_code, retry_after)
        error = data.get("error")
        if error:  # OpenRouter reports some upstream failures as 200 + {"error": …}
            code = error.get("code") if isinstance(error, dict) else None
            message = error.get("message") if isinstance(error, dict) else str(error)
            if isinstance(code, int) and code not in RETRY_STATUSES and 400 <= code < 500:
                raise ProviderError(f"{self.url}: provider error {code}: {message}", status=code)
            raise _Retryable(f"provider error {code}: {message}", code if isinstance(code, int) else None, None)
        return data


def _parse_response(data: dict[str, Any], requested_model: str, attempts: int, latency: float) -> ChatResponse:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError("chat response has no choices")
    message = choices[0].get("message") or {}
    content = message.get("content") if isinstance(message, dict) else None
    if content is None:
        content = ""
    if not isinstance(content, str):  # some servers return content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ChatResponse(
        content=content,
        model=str(data.get("model") or requested_model),
        usage=ChatUsage.from_json(data.get("usage")),
        finish_reason=choices[0].get("finish_reason"),
        attempts=attempts,
        latency_s=latency,
        raw=data,
    )


def _error_message(resp: httpx.Response) -> str:
    try:
        data = resp.json()
    except ValueError:
        return resp.text[:200]
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        return str(data["error"].get("message", data["error"]))[:200]
    return str(data)[:200]


def _as_int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

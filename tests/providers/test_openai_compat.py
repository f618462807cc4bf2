"""The OpenAI-compatible client against a real local HTTP server (tests/support/fake_openai.py)."""

from __future__ import annotations

import asyncio
import random
import time
from email.utils import formatdate

import pytest

from mt_eval.errors import UserError
from mt_eval.providers import (
    ChatRequest,
    ChatResponse,
    Endpoint,
    OpenAICompatClient,
    ProviderError,
    RetryPolicy,
    parse_retry_after,
    resolve_endpoint,
)
from support.fake_openai import FakeOpenAI, Fault

FAST = RetryPolicy(max_attempts=4, base_delay=0.01, max_delay=0.05)


def _req(text: str = "hello world", **kw: object) -> ChatRequest:
    return ChatRequest(model="test/model", messages=({"role": "user", "content": text},), **kw)  # type: ignore[arg-type]


def _chat(server: FakeOpenAI, *requests: ChatRequest, **client_kw: object) -> list[ChatResponse]:
    async def go() -> list[ChatResponse]:
        endpoint = Endpoint(server.base_url, api_key=server.api_key)
        kw: dict[str, object] = {"retry": FAST, **client_kw}
        async with OpenAICompatClient(endpoint, **kw) as client:  # type: ignore[arg-type]
            return list(await asyncio.gather(*(client.chat(r) for r in requests)))

    return asyncio.run(go())


def test_parses_content_model_and_usage() -> None:
    with FakeOpenAI(api_key="sk-test-123") as server:
        (resp,) = _chat(server, _req("two words", max_tokens=50, seed=7))
        sent = server.requests[0]
    assert resp.content == "echo: two words"
    assert resp.model == "test/model@fake"  # the model that answered, from the response
    assert resp.finish_reason == "stop"
    assert resp.attempts == 1
    u = resp.usage
    assert (u.prompt_tokens, u.completion_tokens, u.total_tokens) == (2, 3, 5)
    assert (u.reasoning_tokens, u.cached_tokens) == (3, 2)
    assert u.cost == pytest.approx(5e-6)
    assert sent.path == "/v1/chat/completions"
    assert sent.headers["Authorization"] == "Bearer sk-test-123"
    assert sent.body == {
        "model": "test/model",
        "messages": [{"role": "user", "content": "two words"}],
        "temperature": 0.0,
        "max_tokens": 50,
        "seed": 7,
    }


def test_usage_without_cost_or_details() -> None:
    with FakeOpenAI(responder=lambda body: "ok") as server:
        server.inject(Fault(body={"model": "m", "choices": [{"message": {"content": "x"}}],
                                  "usage": {"prompt_tokens": 4, "completion_tokens": 1}}))  # fmt: skip
        (resp,) = _chat(server, _req())
    assert resp.usage.cost is None
    assert resp.usage.total_tokens == 5
    assert resp.usage.reasoning_tokens == 0


def test_api_key_is_never_in_repr() -> None:
    endpoint = resolve_endpoint("openrouter", environ={"OPENROUTER_API_KEY": "sk-secret"})
    assert endpoint.base_url == "https://openrouter.ai/api/v1"
    assert endpoint.api_key == "sk-secret"
    assert "sk-secret" not in repr(endpoint)


def test_resolve_endpoint_presets_and_custom() -> None:
    assert resolve_endpoint(environ={"OPENROUTER_API_KEY": "k"}).provider == "openrouter"
    openai = resolve_endpoint("openai", environ={"OPENAI_API_KEY": "k"})
    assert openai.base_url == "https://api.openai.com/v1"
    local = resolve_endpoint(base_url="http://127.0.0.1:9/v1/", environ={})
    assert (local.base_url, local.api_key) == ("http://127.0.0.1:9/v1", None)
    named = resolve_endpoint(base_url="http://x/v1", api_key_env="MY_KEY", environ={"MY_KEY": "v"})
    assert named.api_key == "v"
    with pytest.raises(UserError, match="OPENROUTER_API_KEY is not set"):
        resolve_endpoint(environ={})
    with pytest.raises(UserError, match="MY_KEY is not set"):
        resolve_endpoint(base_url="http://x/v1", api_key_env="MY_KEY", environ={})
    with pytest.raises(UserError, match="unknown provider"):
        resolve_endpoint("acme", environ={})
    with pytest.raises(UserError, match="http"):
        resolve_endpoint(base_url="ftp://x", environ={})


def test_no_authorization_header_without_key() -> None:
    with FakeOpenAI() as server:
        _chat(server, _req())
        assert "Authorization" not in server.requests[0].headers


def test_429_honours_retry_after() -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(status=429, retry_after="1"))
        (resp,) = _chat(server, _req(), retry=RetryPolicy(max_attempts=3, base_delay=0.0, max_delay=0.0))
        first, second = server.requests
    assert resp.attempts == 2
    assert [first.status, second.status] == [429, 200]
    assert second.received_at - first.answered_at >= 0.95  # waited as told, not the 0 s backoff


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_retried(status: int) -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(status=status), Fault(status=status))
        (resp,) = _chat(server, _req())
        assert [r.status for r in server.requests] == [status, status, 200]
    assert resp.attempts == 3
    assert resp.content == "echo: hello world"


def test_timeout_is_retried() -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(delay=1.0))
        (resp,) = _chat(server, _req(), timeout_s=0.3)
    assert resp.attempts == 2  # the first attempt cannot have succeeded within 0.3 s


def test_dropped_connection_is_retried() -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(drop=True))
        (resp,) = _chat(server, _req())
    assert resp.attempts == 2


def test_error_body_with_200_is_retried_when_transient() -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(body={"error": {"code": 502, "message": "upstream down"}}))
        (resp,) = _chat(server, _req())
    assert resp.attempts == 2


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_retried(status: int) -> None:
    with FakeOpenAI() as server:
        server.inject(Fault(status=status, body={"error": {"message": "bad thing"}}))
        with pytest.raises(ProviderError, match=f"HTTP {status}: bad thing") as info:
            _chat(server, _req())
        assert len(server.requests) == 1
    assert info.value.status == status


def test_bad_key_is_one_request_and_does_not_leak_key() -> None:
    with FakeOpenAI(api_key="right") as server:
        async def go() -> None:
            async with OpenAICompatClient(Endpoint(server.base_url, api_key="wrong-key"), retry=FAST) as c:
                await c.chat(_req())

        with pytest.raises(ProviderError) as info:
            asyncio.run(go())
        assert len(server.requests) == 1
    assert "wrong-key" not in info.value.one_line()


def test_gives_up_after_max_attempts() -> None:
    with FakeOpenAI() as server:
        server.inject(*[Fault(status=500)] * 5)
        with pytest.raises(ProviderError, match="giving up after 3 attempts: HTTP 500"):
            _chat(server, _req(), retry=RetryPolicy(max_attempts=3, base_delay=0.0))
        assert len(server.requests) == 3


def test_semaphore_bounds_requests_in_flight() -> None:
    with FakeOpenAI(base_delay=0.15) as server:
        responses = _chat(server, *[_req(f"q{i}") for i in range(6)], concurrency=2)
        assert server.max_in_flight == 2
    assert [r.content for r in responses] == [f"echo: q{i}" for i in range(6)]


def test_semaphore_is_not_held_while_sleeping_before_a_retry() -> None:
    """With one slot, a request waiting out Retry-After must not block another request."""
    with FakeOpenAI() as server:
        server.inject(Fault(status=429, retry_after="1"))

        async def go() -> tuple[float, float]:
            async with OpenAICompatClient(Endpoint(server.base_url), concurrency=1, retry=FAST) as c:
                t0 = time.monotonic()
                a = asyncio.create_task(c.chat(_req("first")))
                await asyncio.sleep(0.1)  # first has had its 429 and is sleeping
                await c.chat(_req("second"))
                t_second = time.monotonic() - t0
                await a
                return t_second, time.monotonic() - t0

        t_second, t_first = asyncio.run(go())
        order = [r.body["messages"][0]["content"] for r in server.requests]
    assert order == ["first", "second", "first"]  # second was served while first slept
    assert t_second < t_first and t_first >= 0.95


def test_outside_context_manager_is_a_programming_error() -> None:
    client = OpenAICompatClient(Endpoint("http://127.0.0.1:9/v1"))
    with pytest.raises(RuntimeError):
        asyncio.run(client.chat(_req()))


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after(None) is None
    assert parse_retry_after("soon") is None
    now = time.time()
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == pytest.approx(30, abs=1.5)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0


def test_backoff_is_jittered_exponential_and_capped() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, max_retry_after=10.0)
    rng = random.Random(0)
    for attempt in range(6):
        cap = min(5.0, 2.0**attempt)
        delays = [policy.delay(attempt, None, rng) for _ in range(200)]
        assert all(0.0 <= d <= cap for d in delays)
        assert max(delays) > 0.7 * cap  # actually spread over the range (full jitter)
    assert policy.delay(0, 3.0, rng) == 3.0
    assert policy.delay(0, 999.0, rng) == 10.0

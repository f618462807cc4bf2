"""The broker against a hostile client: fields outside the allow-list, malformed messages, models the
governance policy does not allow, idle and slow connections, malformed HTTP.

The client is this test process on the broker's Unix socket (what a sandboxed method can do to it);
the provider is the suite's real OpenAI-protocol server. References: what that server recorded (the
forwarded bodies), the harness's thread count before the attack, and raw HTTP bytes on the socket.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mt_eval.errors import UserError
from mt_eval.sovereign.broker import ROUTE, Broker, BrokerConfig
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.egress_server import ServerLimits
from mt_eval.sovereign.runner import execute
from support.fake_openai import FakeOpenAI
from support.sovereign import TINY, small_dataset

KEY = "gov-secret-key-456"
MODEL = "test/translator"
GOOD = {"model": MODEL, "messages": [{"role": "user", "content": "a b c"}]}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Broker, FakeOpenAI]]:
    with FakeOpenAI(api_key=KEY) as server, \
            Broker(BrokerConfig(server.base_url, KEY, (MODEL,)), tmp_path / "b.sock",
                   ServerLimits(read_seconds=0.5, idle_seconds=30)) as broker:
        yield broker, server


def _post(broker: Broker, body: Any) -> httpx.Response:
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(broker.socket_path)), timeout=10) as client:
        return client.post("http://broker" + ROUTE, json=body)


def _raw(broker: Broker, data: bytes) -> bytes:
    """Send ``data`` on a fresh connection and read until the broker closes it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5)
        s.connect(str(broker.socket_path))
        s.sendall(data)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    return reply


@pytest.mark.parametrize("field", ["models", "provider", "plugins", "tools", "route", "transforms", "functions",
                                   "tool_choice", "logit_bias", "user"])
def test_fields_outside_the_allow_list_are_refused_and_never_forwarded(served: tuple[Broker, FakeOpenAI],
                                                                       field: str) -> None:
    broker, server = served
    reply = _post(broker, {**GOOD, field: ["anthropic/claude-3-opus"]})
    assert reply.status_code == 403 and reply.json()["error"]["code"] == "field"
    assert repr(field) in reply.json()["error"]["message"]
    assert server.requests == [] and broker.counters.refused == {"field": 1}


def test_only_allow_listed_fields_reach_the_provider(served: tuple[Broker, FakeOpenAI]) -> None:
    broker, server = served
    asked = {**GOOD, "temperature": 0.2, "top_p": 0.9, "seed": 7, "stop": ["\n"], "max_tokens": 20, "n": 3,
             "presence_penalty": 0.5, "frequency_penalty": -0.5, "stream": False}
    reply = _post(broker, asked)
    assert reply.status_code == 200 and reply.json()["choices"][0]["message"]["content"] == "echo: a b c"
    [recorded] = server.requests
    assert recorded.body == {**{k: v for k, v in asked.items() if k != "stream"}, "n": 1}


@pytest.mark.parametrize("body", [
    {**GOOD, "messages": []},
    {**GOOD, "messages": "translate a b c"},
    {**GOOD, "messages": [{"role": "tool", "content": "x"}]},
    {**GOOD, "messages": [{"role": "user", "content": [{"type": "image_url", "image_url": "http://x"}]}]},
    {**GOOD, "messages": [{"role": "user"}]},
    {**GOOD, "messages": [{"role": "user", "content": "x", "name": "alice"}]},
    {**GOOD, "messages": ["user: x"]},
    {**GOOD, "model": ["a", "b"]},
    {**GOOD, "max_tokens": 0},
    {**GOOD, "max_tokens": True},
    {**GOOD, "temperature": "hot"},
    {**GOOD, "temperature": 9},
    {**GOOD, "stop": ["a", "b", "c", "d", "e"]},
    {**GOOD, "seed": 1.5},
])
def test_malformed_requests_are_refused_as_invalid(served: tuple[Broker, FakeOpenAI], body: dict) -> None:
    broker, server = served
    reply = _post(broker, body)
    assert reply.status_code == 403 and reply.json()["error"]["code"] == "invalid", reply.text
    assert server.requests == []


@pytest.mark.parametrize("header", [b"Content-Length: abc", b"Content-Length: -5", b"Content-Length: 1e3",
                                    b"Content-Length: 5\r\nContent-Length: 6", b"Content-Length: 99999999999999"])
def test_a_bad_content_length_is_a_400_and_prints_nothing(served: tuple[Broker, FakeOpenAI], header: bytes,
                                                          capfd: pytest.CaptureFixture[str]) -> None:
    broker, server = served
    reply = _raw(broker, b"POST " + ROUTE.encode() + b" HTTP/1.1\r\nHost: b\r\n" + header + b"\r\n\r\nhello")
    status_line, _, rest = reply.partition(b"\r\n")
    assert status_line.split()[1] in (b"400", b"413"), reply
    assert "error" in json.loads(rest.partition(b"\r\n\r\n")[2])
    assert server.requests == [] and sum(broker.counters.refused.values()) == 1
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_request_never_finished_is_answered_408_after_its_read_deadline(served: tuple[Broker, FakeOpenAI]) -> None:
    broker, _ = served
    reply = _raw(broker, b"POST " + ROUTE.encode() + b" HTTP/1.1\r\nContent-Length: 100\r\n\r\n{\"mo")
    assert reply.split(b"\r\n", 1)[0].split()[1] == b"408"
    assert broker.counters.refused == {"read_timeout": 1}


def test_idle_connections_keep_the_thread_count_bounded_and_a_good_request_is_served(
        served: tuple[Broker, FakeOpenAI]) -> None:
    broker, server = served
    before = threading.active_count()
    idle = []
    try:
        for _ in range(240):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(str(broker.socket_path))
            idle.append(s)
        for s in idle[-8:]:  # a few also start a request and stall (each holds a worker until its deadline)
            s.sendall(b"POST " + ROUTE.encode() + b" HTTP/1.1\r\n")
        reply = _post(broker, GOOD)
        during = threading.active_count()
    finally:
        for s in idle:
            s.close()
    assert reply.status_code == 200 and len(server.requests) == 1
    # every broker thread was started with the broker; the provider stand-in adds its one connection's thread
    assert during - before <= 2


def test_a_bundle_declaring_a_model_the_policy_does_not_allow_is_refused_before_it_runs(make_bundle,
                                                                                        tmp_path: Path) -> None:
    bundle = load_bundle(make_bundle("gateway", {"attacks.json": {}}))
    config = BrokerConfig("http://127.0.0.1:1/v1", KEY, ("test/other-model",))
    with pytest.raises(UserError, match=r"'test/translator' is not a model the governance policy allows \(allowed: "
                                        r"test/other-model\)") as refused:
        execute(bundle, small_dataset(1), TINY, tmp_path / "s", config)
    assert refused.value.file is not None and refused.value.file.endswith("method.toml")
    assert "egress" in (refused.value.hint or "") and not (tmp_path / "s").exists()

"""A real HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol, for tests.

Tests of the provider client and the QA judge talk to this server over a real socket, so the
retry, timeout, header and concurrency behaviour under test is the real thing, not a mock of
httpx. Answers are deterministic; faults (429 with Retry-After, 5xx, slow responses, dropped
connections, 200-with-error bodies) are queued with :meth:`FakeOpenAI.inject` and consumed by the
next requests in arrival order. ``GET /_stats`` returns every request's arrival and answer times,
so a benchmark can see how many requests a client really kept in flight.

Judge prompts (those containing ``Predicted Answer:``) get ``{"score", "explanation"}``: 1.0 when
the prediction equals one of the ``|``-separated gold answers ignoring case and spaces, 0.5 when
one contains the other, else 0.0; the prediction ``GARBAGE`` gets a reply that is not JSON.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops bursts of concurrent connects


@dataclass
class Fault:
    """One injected misbehaviour; ``status`` None with ``delay`` means a slow but normal reply."""

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    drop: bool = False  # close the connection without answering
    body: dict[str, Any] | None = None  # replaces the normal body (e.g. {"error": {...}} with 200)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    received_at: float
    answered_at: float = 0.0
    status: int = 0
    peer_port: int = 0  # the client's source port: one value per TCP connection it used


@dataclass
class FakeOpenAI:
    """Start with ``with FakeOpenAI() as server:``; ``server.base_url`` ends in ``/v1``."""

    api_key: str | None = None
    responder: Callable[[dict[str, Any]], str] | None = None
    base_delay: float = 0.0  # every reply waits this long (to observe concurrency)
    requests: list[Recorded] = field(default_factory=list)
    max_in_flight: int = 0
    # called with the request's ordinal (1-based) when no queued fault is pending: a fault plan
    # such as "every fifth request fails" without queueing thousands of faults up front
    fault_for: Callable[[int], Fault | None] | None = None
    report_cost: bool = True  # False: usage without "cost", as OpenAI and local servers answer

    def __post_init__(self) -> None:
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- control -------------------------------------------------------------------------------
    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> FakeOpenAI:
        handler = _make_handler(self)
        self._server = _Server(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # --- called from handler threads -------------------------------------------------------------
    def _next_fault(self) -> Fault | None:
        with self._lock:
            if self._faults:
                return self._faults.popleft()
            ordinal = len(self.requests)
        return self.fault_for(ordinal) if self.fault_for else None

    def _enter(self, rec: Recorded) -> None:
        with self._lock:
            self.requests.append(rec)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)

    def _leave(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def answer(self, body: dict[str, Any]) -> str:
        if self.responder is not None:
            return self.responder(body)
        prompt = str(body["messages"][-1]["content"])
        if "Predicted Answer:" in prompt:
            return judge_reply(prompt)
        return f"echo: {prompt}"


def judge_reply(prompt: str) -> str:
    gold = re.search(r"^Gold Answer: (.*)$", prompt, re.MULTILINE)
    pred = re.search(r"^Predicted Answer: (.*)$", prompt, re.MULTILINE)
    golds = [g.strip().lower().replace(" ", "") for g in (gold.group(1) if gold else "").split("|")]
    p = (pred.group(1) if pred else "").strip().lower().replace(" ", "")
    if p == "garbage":
        return "I think it is roughly right."
    if p in golds:
        score, why = 1.0, "identical"
    elif any(p and g and (p in g or g in p) for g in golds):
        score, why = 0.5, "partial overlap"
    else:
        score, why = 0.0, "different"
    return "```json\n" + json.dumps({"score": score, "explanation": why}) + "\n```"


def _usage(body: dict[str, Any], content: str, report_cost: bool = True) -> dict[str, Any]:
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion = len(content.split())
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion,
        "total_tokens": prompt_tokens + completion,
        "completion_tokens_details": {"reasoning_tokens": 3},
        "prompt_tokens_details": {"cached_tokens": 2},
        "cost": round(1e-6 * (prompt_tokens + completion), 9),
    }
    if not report_cost:
        del usage["cost"]
    return usage


def _make_handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: avoid the 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            return

        def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                self.close_connection = True

        def do_GET(self) -> None:
            """``GET /_stats``: every request's (received, answered) monotonic times, for benchmarks
            run against a server in another process (CLOCK_MONOTONIC is machine-wide on Linux)."""
            if self.path != "/_stats":
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            with server._lock:
                spans = [[r.received_at, r.answered_at] for r in server.requests]
            return self._send(200, {"spans": spans, "max_in_flight": server.max_in_flight})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            raw = self.rfile.read(length)
            body = json.loads(raw or b"{}")
            rec = Recorded(self.path, dict(self.headers.items()), body, time.monotonic(),
                           peer_port=int(self.client_address[1]))
            server._enter(rec)
            try:
                self._handle(rec, body)
            finally:
                rec.answered_at = time.monotonic()
                server._leave()

        def _handle(self, rec: Recorded, body: dict[str, Any]) -> None:
            if self.path != "/v1/chat/completions":
                rec.status = 404
                return self._send(404, {"error": {"message": f"no route {self.path}"}})
            if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                rec.status = 401
                return self._send(401, {"error": {"message": "invalid API key", "code": 401}})
            fault = server._next_fault()
            time.sleep(server.base_delay + (fault.delay if fault else 0.0))
            if fault is not None and fault.drop:
                self.close_connection = True
                self.connection.shutdown(2)  # socket.SHUT_RDWR: client sees a dropped connection
                return None
            if fault is not None and fault.status is not None:
                rec.status = fault.status
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else None
                return self._send(fault.status, fault.body or {"error": {"message": "injected"}}, headers)
            if fault is not None and fault.body is not None:
                rec.status = 200
                return self._send(200, fault.body)
            content = server.answer(body)
            rec.status = 200
            return self._send(200, {
                "id": f"chatcmpl-{len(server.requests)}",
                "object": "chat.completion",
                "model": f"{body.get('model')}@fake",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": content}}],
                "usage": _usage(body, content, server.report_cost),
            })  # fmt: skip

    return Handler

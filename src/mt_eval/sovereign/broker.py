"""The LLM egress broker: the only way out of the sandbox, for a bundle that declares ``egress = "gateway"``.

An OpenAI-compatible endpoint (``POST /v1/chat/completions``, nothing else) on a Unix socket bound
into the sandbox. It forwards a request only when its ``model`` is one the manifest declares, only to
the provider the governance organisation configured (the method cannot name another: it never sees a
URL, and the sandbox has no network), with the governance API key put in by the broker (the method's
own ``Authorization`` header is dropped), and only while the token and cost budget lasts. Every
request, refusal, byte and token is counted; the counts go on the card. Refusals are answered with an
OpenAI-style error body and recorded by reason and by the entry being translated, so the sandbox
report can name them (``refused_egress``).
"""

from __future__ import annotations

import json
import os
import socketserver
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import httpx

from mt_eval.methods.base import Usage

ROUTE = "/v1/chat/completions"
MAX_BODY = 1 << 20


@dataclass(frozen=True)
class BrokerConfig:
    """What the governance organisation configures; ``api_key`` never leaves this process."""

    base_url: str  # the provider's OpenAI-compatible base URL, e.g. https://api.example/v1
    api_key: str
    models: tuple[str, ...]  # the manifest's declared models
    max_tokens: int = 200_000  # prompt + completion tokens for the whole run
    max_cost_usd: float = 5.0
    timeout_seconds: float = 60.0

    def as_card(self) -> dict[str, Any]:
        """The recordable part (no key, and the provider's host only)."""
        return {"provider": httpx.URL(self.base_url).host, "models": list(self.models),
                "max_tokens": self.max_tokens, "max_cost_usd": self.max_cost_usd}


@dataclass
class BrokerCounters:
    requests: int = 0
    forwarded: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    refused: Counter[str] = field(default_factory=Counter)
    refused_entries: dict[int, list[str]] = field(default_factory=dict)
    # per entry being translated: requests, and the usage of those forwarded (onto the card's results)
    entry_requests: Counter[int] = field(default_factory=Counter)
    entry_usage: dict[int, Usage] = field(default_factory=dict)

    def as_card(self) -> dict[str, Any]:
        return {"requests": self.requests, "forwarded": self.forwarded, "bytes_in": self.bytes_in,
                "bytes_out": self.bytes_out, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "cost_usd": round(self.cost_usd, 6),
                "refused": dict(sorted(self.refused.items()))}


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


class Broker:
    """``with Broker(config, socket_path) as broker:``; set ``broker.current_entry`` per request sent."""

    def __init__(self, config: BrokerConfig, socket_path: Path) -> None:
        self.config = config
        self.socket_path = socket_path
        self.counters = BrokerCounters()
        self.current_entry: int | None = None
        self._lock = threading.Lock()
        # one request at a time to the provider: the budget is checked against every earlier reply's usage
        self.forwarding = threading.Lock()
        self._client = httpx.Client(timeout=config.timeout_seconds)
        self._server = _UnixHTTPServer(str(socket_path), _handler(self))
        os.chmod(socket_path, 0o666)  # the sandbox runs as another uid
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> Broker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()
        self.socket_path.unlink(missing_ok=True)

    def refusal(self, body: dict[str, Any], path: str) -> str | None:
        """Why this request is refused (None: forward it). Checked under the lock with the counters."""
        if path != ROUTE:
            return "route"
        if body.get("stream"):
            return "streaming"
        if body.get("model") not in self.config.models:
            return "undeclared_model"
        c = self.counters
        if c.prompt_tokens + c.completion_tokens >= self.config.max_tokens or c.cost_usd >= self.config.max_cost_usd:
            return "budget_exhausted"
        return None

    def count_request(self) -> None:
        with self._lock:
            self.counters.requests += 1
            if self.current_entry is not None:
                self.counters.entry_requests[self.current_entry] += 1

    def refuse(self, reason: str) -> None:
        with self._lock:
            self.counters.refused[reason] += 1
            if self.current_entry is not None:
                self.counters.refused_entries.setdefault(self.current_entry, []).append(reason)

    def capped(self, body: dict[str, Any]) -> bytes:
        """The request as forwarded: one choice, and no more completion tokens than the budget has left (a
        method asking for 100,000 tokens in one request cannot overshoot it)."""
        c = self.counters
        left = max(1, self.config.max_tokens - c.prompt_tokens - c.completion_tokens)
        asked = body.get("max_tokens")
        wanted = asked if isinstance(asked, int) and not isinstance(asked, bool) and asked > 0 else left
        return json.dumps({**body, "n": 1, "max_tokens": min(wanted, left)}).encode()

    def forward(self, raw: bytes) -> tuple[int, bytes]:
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        try:
            reply = self._client.post(url, content=raw, headers={
                "Authorization": f"Bearer {self.config.api_key}", "Content-Type": "application/json"})
        except httpx.HTTPError:
            return 502, json.dumps({"error": {"type": "provider_unreachable"}}).encode()
        reported = _usage(reply.content)
        usage = Usage(prompt_tokens=int(reported.get("prompt_tokens") or 0),
                      completion_tokens=int(reported.get("completion_tokens") or 0),
                      cost_usd=float(reported.get("cost") or 0.0))
        with self._lock:
            c = self.counters
            c.forwarded += 1
            c.bytes_out += len(raw)
            c.bytes_in += len(reply.content)
            c.prompt_tokens += usage.prompt_tokens
            c.completion_tokens += usage.completion_tokens
            c.cost_usd += usage.cost_usd
            if self.current_entry is not None:
                c.entry_usage.setdefault(self.current_entry, Usage()).add(usage)
        return reply.status_code, reply.content


def _usage(content: bytes) -> dict[str, Any]:
    try:
        usage = json.loads(content).get("usage")
    except (ValueError, AttributeError):
        return {}
    return usage if isinstance(usage, dict) else {}


def _handler(broker: Broker) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def address_string(self) -> str:  # a Unix socket peer has no (host, port)
            return "sandbox"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _refused(self, reason: str) -> None:
            broker.refuse(reason)
            self._send(403, json.dumps({"error": {"type": "refused_egress", "code": reason}}).encode())

        def do_GET(self) -> None:
            broker.count_request()
            self._refused("route")

        def do_POST(self) -> None:
            broker.count_request()
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                return self._refused("too_large")
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                return self._refused("not_json")
            with broker.forwarding:  # checked and forwarded as one step: concurrent requests cannot all pass
                with broker._lock:
                    reason = broker.refusal(body if isinstance(body, dict) else {}, self.path)
                if reason is not None:
                    return self._refused(reason)
                status, data = broker.forward(broker.capped(body))
            self._send(status, data)

    return Handler


def egress_config(base_url: str | None, key_env: str | None, max_tokens: int,
                  max_cost_usd: float) -> BrokerConfig | None:
    """The governance-configured provider from command options (None: no broker). The key is read
    from the named environment variable of the harness; the sandbox's environment is empty."""
    from mt_eval.errors import UserError

    if base_url is None:
        return None
    key = os.environ.get(key_env or "")
    if not key_env or not key:
        raise UserError(f"the provider key variable {key_env or '(none given)'} is not set",
                        hint="--provider-key-env NAME of a variable holding the governance API key")
    return BrokerConfig(base_url, key, (), max_tokens, max_cost_usd)

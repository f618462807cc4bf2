"""The LLM egress broker: the only way out of the sandbox, for a bundle that declares ``egress = "gateway"``.

An OpenAI-compatible endpoint (``POST /v1/chat/completions``, nothing else) on a Unix socket bound
into the sandbox. It forwards a request only when

* its ``model`` is one the **governance policy** allows (``policy.toml`` ``[egress] models``) and the
  manifest declares: a bundle declaring a model the policy does not allow is refused before its
  sandbox starts (``execute``), so the bundle's own declaration never widens what it may reach;
* it carries **only allow-listed fields** (:data:`FIELDS`: model, messages, max_tokens, temperature,
  top_p, stop, seed, n, stream, presence/frequency penalties), each a well-formed value, and its
  ``messages`` are a list of ``{role: system|user|assistant, content: str}``. Anything else
  (``provider``, ``models``, ``plugins``, ``tools``, ``route``, ``transforms``…, which some gateways obey)
  is refused, not stripped: the method learns at preflight that the request it made is not the one it
  would get. What is forwarded is rebuilt from the allow-list (one choice, ``max_tokens`` capped);
* the token and cost budget lasts.

It goes only to the provider the governance organisation configured (the method never sees a URL,
and the sandbox has no network), with the governance API key put in by the broker (the method's own
headers are never forwarded). Every request, refusal, byte and token is counted; the counts go on
the card. Refusals are answered with an OpenAI-style error body and recorded by reason and by the
entry being translated, so the sandbox report can name them (``refused_egress``). The transport
(``egress_server``) bounds threads, connections and time: a bounded worker pool, per-connection
deadlines, and malformed HTTP answered 4xx without a traceback.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx

from mt_eval.errors import UserError
from mt_eval.methods.base import Usage
from mt_eval.sovereign.bundle import MANIFEST, Bundle
from mt_eval.sovereign.egress_server import BoundedServer, Request, ServerLimits
from mt_eval.sovereign.policy import Policy

ROUTE = "/v1/chat/completions"
ROLES = ("system", "user", "assistant")
MAX_MESSAGES = 256
MAX_STOPS = 4  # OpenAI's own limit


Check = Callable[[object], bool]


def _number(low: float, high: float) -> Check:
    return lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high


def _whole(least: int) -> Check:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= least


def _stop(v: object) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and len(v) <= MAX_STOPS and all(isinstance(s, str) for s in v))


def _messages(v: object) -> bool:
    return isinstance(v, list) and 0 < len(v) <= MAX_MESSAGES and all(
        isinstance(m, dict) and set(m) == {"role", "content"} and m["role"] in ROLES and isinstance(m["content"], str)
        for m in v)


# the request fields forwarded, each with the check its value must pass; anything else is refused
FIELDS: dict[str, Check] = {
    "model": lambda v: isinstance(v, str),
    "messages": _messages,
    "max_tokens": _whole(1),
    "temperature": _number(0, 2),
    "top_p": _number(0, 1),
    "stop": _stop,
    "seed": _whole(-(2**63)),
    "n": _whole(1),  # forwarded as 1 whatever is asked: one choice is what the budget is checked against
    "stream": lambda v: isinstance(v, bool),  # never forwarded: a streamed answer is refused (``streaming``)
    "presence_penalty": _number(-2, 2),
    "frequency_penalty": _number(-2, 2),
}


def request_problem(body: dict[str, Any]) -> tuple[str, str] | None:
    """Why a request body is refused before any budget or model check: ``(reason, message)``; None when
    it has only allow-listed fields, each well-formed."""
    for name, value in body.items():
        if name not in FIELDS:
            return "field", f"field {name!r} is not forwarded (allowed: {', '.join(FIELDS)})"
        if not FIELDS[name](value):
            return "invalid", f"field {name!r} has a value the broker does not forward"
    if "messages" not in body or "model" not in body:
        return "invalid", "a request needs model and messages"
    return None


@dataclass(frozen=True)
class BrokerConfig:
    """What the governance organisation configures; ``api_key`` never leaves this process."""

    base_url: str  # the provider's OpenAI-compatible base URL, e.g. https://api.example/v1
    api_key: str
    models: tuple[str, ...]  # the models the governance policy allows (``[egress] models``)
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


class Broker:
    """``with Broker(config, socket_path) as broker:``; set ``broker.current_entry`` per request sent."""

    def __init__(self, config: BrokerConfig, socket_path: Path, limits: ServerLimits | None = None) -> None:
        self.config = config
        self.socket_path = socket_path
        self.counters = BrokerCounters()
        self.current_entry: int | None = None
        self._lock = threading.Lock()
        # one request at a time to the provider: the budget is checked against every earlier reply's usage
        self.forwarding = threading.Lock()
        self._client = httpx.Client(timeout=config.timeout_seconds)
        self._server = BoundedServer(socket_path, self.handle, self.reject, limits or ServerLimits())
        os.chmod(socket_path, 0o666)  # the sandbox runs as another uid

    def __enter__(self) -> Broker:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        self._client.close()
        self.socket_path.unlink(missing_ok=True)

    def handle(self, request: Request) -> tuple[int, bytes]:
        """One whole request from the sandbox: the provider's answer, or a refusal."""
        self.count_request()
        if request.method != "POST" or request.path != ROUTE:
            return self._refused("route")
        try:
            body = json.loads(request.body)
        except (ValueError, RecursionError):
            return self._refused("not_json")
        if not isinstance(body, dict):
            return self._refused("not_json")
        problem = request_problem(body)
        if problem is not None:
            return self._refused(*problem)
        with self.forwarding:  # checked and forwarded as one step: concurrent requests cannot all pass
            with self._lock:
                reason = self.refusal(body)
            if reason is not None:
                return self._refused(reason)
            return self.forward(self.capped(body))

    def reject(self, status: int, code: str) -> bytes:
        """A request the transport refused (malformed HTTP, too large, too slow): counted, and its error body."""
        self.count_request()
        self.refuse(code)
        return json.dumps({"error": {"type": "bad_request" if status < 500 else "broker_error", "code": code}}).encode()

    def _refused(self, reason: str, message: str | None = None) -> tuple[int, bytes]:
        self.refuse(reason)
        error = {"type": "refused_egress", "code": reason, **({"message": message} if message else {})}
        return 403, json.dumps({"error": error}).encode()

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Why a well-formed request is refused (None: forward it). Checked under the lock with the counters."""
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
        """The request as forwarded, rebuilt from the allow-list: one choice, never streamed, and no more
        completion tokens than the budget has left (a method asking for 100,000 tokens in one request
        cannot overshoot it)."""
        c = self.counters
        left = max(1, self.config.max_tokens - c.prompt_tokens - c.completion_tokens)
        kept = {k: v for k, v in body.items() if k in FIELDS and k != "stream"}
        return json.dumps({**kept, "n": 1, "max_tokens": min(body.get("max_tokens", left), left)}).encode()

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


def gateway_models(bundle: Bundle, egress: BrokerConfig | None) -> tuple[str, ...]:
    """The models a gateway bundle's broker forwards to: those it declares, each of which the governance
    policy must allow (``egress.models``); ``UserError`` naming the first one it does not, before
    anything is staged. Empty for a bundle without egress (or without a configured provider, which
    ``execute`` refuses)."""
    if bundle.manifest.egress != "gateway" or egress is None:
        return ()
    for model in bundle.manifest.models:
        if model not in egress.models:
            raise UserError(f"{model!r} is not a model the governance policy allows "
                            f"(allowed: {', '.join(egress.models) or 'none'})", file=str(bundle.root / MANIFEST),
                            field="models", hint="declare only allowed models, or ask governance to allow it: "
                            "[egress] models in policy.toml (mt-eval governance policy --model NAME)")
    return tuple(bundle.manifest.models)


def policy_egress(egress: BrokerConfig | None, policy: Policy) -> BrokerConfig | None:
    """``egress`` allowing exactly the models of the governance policy (``[egress] models``)."""
    return replace(egress, models=policy.models) if egress is not None else None


def egress_config(base_url: str | None, key_env: str | None, max_tokens: int,
                  max_cost_usd: float) -> BrokerConfig | None:
    """The governance-configured provider from command options (None: no broker). The key is read
    from the named environment variable of the harness; the sandbox's environment is empty. Its
    models are filled in from the governance policy by ``runner.preflight``/``run``."""
    if base_url is None:
        return None
    key = os.environ.get(key_env or "")
    if not key_env or not key:
        raise UserError(f"the provider key variable {key_env or '(none given)'} is not set",
                        hint="--provider-key-env NAME of a variable holding the governance API key")
    return BrokerConfig(base_url, key, (), max_tokens, max_cost_usd)

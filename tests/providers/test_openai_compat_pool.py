"""What one request costs the client beyond the exchange: connections reused, no import lookups.

Both are regressions that cost throughput without failing a single request: a pool smaller than
``concurrency`` reconnects (or caps requests in flight), and httpcore 1.0 without ``sniffio``
retries a failed ``import sniffio`` (a scan of every ``sys.path`` entry) several times per request
on the event loop (encode/httpcore#1102), which is why ``sniffio`` is a declared dependency.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from mt_eval.providers import ChatRequest, Endpoint, OpenAICompatClient, RetryPolicy
from support.fake_openai import FakeOpenAI


def _many(server: FakeOpenAI, n: int, concurrency: int) -> None:
    async def go() -> None:
        async with OpenAICompatClient(Endpoint(server.base_url), concurrency=concurrency,
                                      retry=RetryPolicy(max_attempts=1)) as client:
            await asyncio.gather(*(client.chat(ChatRequest("m", ({"role": "user", "content": f"t{i}"},)))
                                   for i in range(n)))

    asyncio.run(go())


def test_every_slot_keeps_its_connection_above_httpx_default_pool() -> None:
    """40 slots: httpx's default keeps 20 connections alive, so 20 would reconnect per request."""
    with FakeOpenAI(base_delay=0.05) as server:
        _many(server, 400, concurrency=40)
    assert len(server.requests) == 400 and server.max_in_flight <= 40
    # 40 connections for 400 requests on a quiet machine; a loaded one (two xdist workers) sees a few reconnects
    # (64 measured), while httpx's default pool of 20 would reconnect 20 slots per request: ~200 ports
    assert 40 <= len({r.peer_port for r in server.requests}) <= 100


class _CountingFinder:
    """A meta-path finder that only counts: which module names reached the import system."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        self.names.append(name)
        return None


def test_requests_do_not_go_through_the_import_system() -> None:
    with FakeOpenAI() as server:
        _many(server, 4, concurrency=2)  # warm: every lazy import the client needs has happened
        finder = _CountingFinder()
        sys.meta_path.insert(0, finder)
        try:
            _many(server, 50, concurrency=8)
        finally:
            sys.meta_path.remove(finder)
    assert len(server.requests) == 54
    assert finder.names == []

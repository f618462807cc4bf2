"""One connection pool and one in-flight limit per endpoint, shared by every client in the process.

A benchmark sweep runs several cells at once, each an ordinary run with its own event loop (in its
own thread, since ``api.orchestrate.run`` owns its loop). Left alone each cell's
:class:`~mt_eval.providers.openai_compat.OpenAICompatClient` would open its own connections and
allow its own ``--concurrency`` requests in flight, so four cells at ``--concurrency 8`` would send
32 requests at once to a provider that allows 8. While a :class:`SharedPool` is active (``with
SharedPool(8):``) every client created in the process sends its requests through it instead:

* one ``httpx.AsyncClient`` (one connection pool) per base URL, owned by an event loop on a thread of
  the pool's own, because an httpx client belongs to the loop that created it;
* one semaphore per base URL with ``concurrency`` slots, held around the HTTP exchange only, as the
  client's own is, so a request waiting to retry does not hold a slot.

A cell's coroutine awaits its exchange through ``asyncio.wrap_future``; cancelling it (Ctrl-C, a
fatal refusal) cancels the exchange on the pool's loop too.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Future
from typing import Any

import httpx

from mt_eval.errors import UserError

_active: list[SharedPool] = []
_lock = threading.Lock()


def active_pool() -> SharedPool | None:
    """The pool clients created now should use (None: each client keeps its own)."""
    with _lock:
        return _active[-1] if _active else None


class SharedPool:
    """``with SharedPool(concurrency):`` routes every new client's requests through one pool."""

    def __init__(self, concurrency: int) -> None:
        if concurrency < 1:
            raise UserError("concurrency must be at least 1", field="concurrency")
        self.concurrency = concurrency
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mt-eval-pool", daemon=True)
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._slots: dict[str, asyncio.Semaphore] = {}

    def __enter__(self) -> SharedPool:
        self._thread.start()
        with _lock:
            _active.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _active.remove(self)
        asyncio.run_coroutine_threadsafe(self._close(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()

    async def _close(self) -> None:
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    async def _post(self, base_url: str, url: str, body: dict[str, Any], headers: dict[str, str],
                    timeout: httpx.Timeout) -> httpx.Response:
        """Runs on the pool's loop: the client and semaphore of ``base_url`` are created there."""
        if base_url not in self._clients:
            limits = httpx.Limits(max_connections=self.concurrency, max_keepalive_connections=self.concurrency)
            self._clients[base_url] = httpx.AsyncClient(limits=limits)
            self._slots[base_url] = asyncio.Semaphore(self.concurrency)
        async with self._slots[base_url]:
            return await self._clients[base_url].post(url, json=body, headers=headers, timeout=timeout)

    async def post(self, base_url: str, url: str, body: dict[str, Any], headers: dict[str, str],
                   timeout: httpx.Timeout) -> httpx.Response:
        """Send one request through the shared pool from any event loop; the response is fully read."""
        future: Future[httpx.Response] = asyncio.run_coroutine_threadsafe(
            self._post(base_url, url, body, headers, timeout), self._loop)
        return await asyncio.wrap_future(future)

"""The broker's HTTP transport: a server on a Unix socket whose threads, connections and time a
hostile client cannot grow.

The client is the sandboxed method, so nothing here trusts it:

* **One request per connection.** Every answer says ``Connection: close``; there is no keep-alive for
  a connection to idle in after its request.
* **Idle connections hold no thread.** A new connection waits for its first byte in the one selector
  thread; after ``idle_seconds`` without one it is closed. At most ``max_connections`` are open at once:
  a new one closes the one that has waited longest (so a good request is still served behind hundreds
  of idle ones), or is closed itself when every open one is already being served.
* **A bounded pool of ``workers`` threads** reads requests. A request must arrive whole within
  ``read_seconds`` of its first byte (408 otherwise: a client trickling a byte at a time holds one worker
  that long, never longer), with headers under ``max_header_bytes`` and a well-formed ``Content-Length``
  of at most ``max_body`` bytes.
* **Malformed HTTP is an answer, never a traceback**: 400 (bad request line, header or Content-Length),
  408, 411 (no Content-Length, or a Transfer-Encoding), 413, 431, each with a JSON error body, and
  nothing printed. The broker is told of each (``reject``) so the card counts it.
"""

from __future__ import annotations

import contextlib
import http
import queue
import re
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ServerLimits:
    """The transport's bounds (the defaults are what a gold run uses)."""

    workers: int = 4
    max_connections: int = 64
    idle_seconds: float = 10.0  # from connect to the first byte
    read_seconds: float = 10.0  # from the first byte to the last byte of the request
    max_header_bytes: int = 16 * 1024
    max_body: int = 1 << 20


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: bytes


class HttpRefusal(Exception):
    """A request refused by the transport: its status and the code the card counts."""

    def __init__(self, status: int, code: str) -> None:
        super().__init__(code)
        self.status, self.code = status, code


class _Gone(Exception):
    """The client closed its connection before sending a whole request: nothing to answer."""


Handle = Callable[[Request], tuple[int, bytes]]
Reject = Callable[[int, str], bytes]  # (status, code) -> the JSON body to send
_DIGITS = re.compile(rb"[0-9]{1,12}")


class BoundedServer:
    """``server.start()`` ... ``server.close()``; ``handle`` answers each whole request, ``reject`` each refused one."""

    def __init__(self, path: Path, handle: Handle, reject: Reject, limits: ServerLimits) -> None:
        self.path, self.limits = path, limits
        self._handle, self._reject = handle, reject
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen(128)
        self._listener.setblocking(False)
        self._stop = threading.Event()
        self._ready: queue.SimpleQueue[socket.socket | None] = queue.SimpleQueue()
        self._busy = 0  # connections handed to the workers and not yet closed
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._select, daemon=True)]
        self._threads += [threading.Thread(target=self._work, daemon=True) for _ in range(limits.workers)]

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def close(self) -> None:
        self._stop.set()
        for _ in range(self.limits.workers):
            self._ready.put(None)
        self._threads[0].join(timeout=2)
        self._listener.close()

    # ------------------------------------------------------------ the selector thread

    def _select(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._listener, selectors.EVENT_READ, None)
        waiting: dict[socket.socket, float] = {}  # insertion order: the longest waiting first
        try:
            while not self._stop.is_set():
                for key, _ in sel.select(timeout=0.05):
                    conn = key.data
                    if conn is None:
                        self._accept(sel, waiting)
                    else:  # its first bytes arrived: a worker reads the request
                        sel.unregister(conn)
                        del waiting[conn]
                        with self._lock:
                            self._busy += 1
                        self._ready.put(conn)
                expired = time.monotonic() - self.limits.idle_seconds
                for conn in [c for c, since in waiting.items() if since < expired]:
                    self._drop(sel, waiting, conn)
        finally:
            for conn in list(waiting):
                self._drop(sel, waiting, conn)
            sel.close()

    def _accept(self, sel: selectors.BaseSelector, waiting: dict[socket.socket, float]) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # out of descriptors: the connection stays in the backlog, tried again
                return
            with self._lock:
                full = len(waiting) + self._busy >= self.limits.max_connections
            if full and not waiting:  # every open connection is being served: this one waits for none
                conn.close()
                continue
            if full:
                self._drop(sel, waiting, next(iter(waiting)))
            conn.setblocking(False)
            sel.register(conn, selectors.EVENT_READ, conn)
            waiting[conn] = time.monotonic()

    @staticmethod
    def _drop(sel: selectors.BaseSelector, waiting: dict[socket.socket, float], conn: socket.socket) -> None:
        sel.unregister(conn)
        del waiting[conn]
        conn.close()

    # ------------------------------------------------------------ the workers

    def _work(self) -> None:
        while (conn := self._ready.get()) is not None:
            try:
                self._serve(conn)
            finally:
                conn.close()
                with self._lock:
                    self._busy -= 1

    def _serve(self, conn: socket.socket) -> None:
        conn.setblocking(True)
        try:
            status, body = self._handle(self._read(conn, time.monotonic() + self.limits.read_seconds))
        except _Gone:
            return
        except HttpRefusal as refusal:
            status, body = refusal.status, self._reject(refusal.status, refusal.code)
        except Exception:  # a fault of ours: an answer the card counts, never a traceback on stderr
            status, body = 500, self._reject(500, "broker_error")
        try:
            reason = http.HTTPStatus(status).phrase
        except ValueError:  # a provider's own status (e.g. 529) passed through
            reason = ""
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode("latin-1")
        conn.settimeout(self.limits.read_seconds)  # a client that never reads its answer does not hold a worker
        with contextlib.suppress(OSError):
            conn.sendall(head + body)

    def _recv(self, conn: socket.socket, deadline: float) -> bytes:
        left = deadline - time.monotonic()
        if left <= 0:
            raise HttpRefusal(408, "read_timeout")
        conn.settimeout(left)
        try:
            chunk = conn.recv(65536)
        except TimeoutError:
            raise HttpRefusal(408, "read_timeout") from None
        except OSError:
            raise _Gone from None
        if not chunk:
            raise _Gone
        return chunk

    def _read(self, conn: socket.socket, deadline: float) -> Request:
        """One whole request, or ``HttpRefusal`` saying what is wrong with it."""
        data = b""
        while b"\r\n\r\n" not in data:
            if len(data) > self.limits.max_header_bytes:
                raise HttpRefusal(431, "headers_too_large")
            data += self._recv(conn, deadline)
        head, _, body = data.partition(b"\r\n\r\n")
        if len(head) > self.limits.max_header_bytes:
            raise HttpRefusal(431, "headers_too_large")
        request_line, *header_lines = head.split(b"\r\n")
        parts = request_line.split(b" ")
        if len(parts) != 3 or parts[2] not in (b"HTTP/1.0", b"HTTP/1.1") or not parts[0].isalpha():
            raise HttpRefusal(400, "bad_request")
        headers: dict[bytes, list[bytes]] = {}
        for line in header_lines:
            name, colon, value = line.partition(b":")
            if not colon or not name or name != name.strip():
                raise HttpRefusal(400, "bad_request")
            headers.setdefault(name.lower(), []).append(value.strip())
        if b"transfer-encoding" in headers:
            raise HttpRefusal(411, "length_required")
        lengths = headers.get(b"content-length", [])
        if len(lengths) > 1 or (lengths and not _DIGITS.fullmatch(lengths[0])):
            raise HttpRefusal(400, "bad_content_length")
        if not lengths and parts[0] == b"POST":
            raise HttpRefusal(411, "length_required")
        length = int(lengths[0]) if lengths else 0
        if length > self.limits.max_body:
            raise HttpRefusal(413, "too_large")
        while len(body) < length:
            body += self._recv(conn, deadline)
        return Request(parts[0].decode("ascii"), parts[1].decode("latin-1"), body[:length])

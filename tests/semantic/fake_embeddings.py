"""A real HTTP server on 127.0.0.1 speaking OpenAI's ``POST /v1/embeddings``, for tests.

The pattern of ``tests/support/fake_openai.py`` (a real socket, recorded requests), for the other
endpoint: each input text gets a deterministic vector (``vector_for``: non-negative, from the text's
SHA-256), so a test can compute the expected cosine with NumPy on its own. ``status`` makes every
request fail with that HTTP status; ``answer`` replaces the body (malformed answers).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

DIM = 16


def vector_for(text: str) -> np.ndarray:
    """The server's vector for ``text``: 16 non-negative floats seeded by its SHA-256 (not unit length)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    return np.abs(np.random.default_rng(seed).normal(size=DIM)) + 0.01


@dataclass
class FakeEmbeddings:
    """``with FakeEmbeddings() as server:``; ``server.base_url`` ends in ``/v1``; ``server.batches`` lists the
    inputs of every request, in arrival order."""

    model: str = "fake-embed-1"
    status: int | None = None
    answer: dict[str, Any] | None = None
    batches: list[list[str]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)

    def __enter__(self) -> FakeEmbeddings:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else list(texts or [])
                owner.batches.append(texts)
                owner.headers.append(dict(self.headers))
                if self.path != "/v1/embeddings" or body.get("model") != owner.model:
                    return self._send(404, {"error": {"message": f"no model {body.get('model')!r} at {self.path}"}})
                if owner.status is not None:
                    return self._send(owner.status, {"error": {"message": "injected"}})
                data = [{"object": "embedding", "index": i, "embedding": vector_for(t).tolist()}
                        for i, t in enumerate(texts)]
                data.reverse()  # servers may answer out of order: the client must use "index"
                self._send(200, owner.answer or {"object": "list", "data": data, "model": owner.model})

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

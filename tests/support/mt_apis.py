"""Local HTTP servers speaking DeepL API v2 and Google Cloud Translation v2, with injected faults.

DeepL: ``POST /v2/translate``, ``Authorization: DeepL-Auth-Key KEY``, JSON ``{"text": [...], "source_lang",
"target_lang"}`` -> ``{"translations": [{"detected_source_language", "text"}]}``; a wrong key is 403, a used-up
quota 456. Google: ``POST /language/translate/v2?key=KEY``, JSON ``{"q": [...], "source", "target", "format"}``
-> ``{"data": {"translations": [{"translatedText"}]}}``; a wrong key is 400 with ``{"error": {"code": 400, ...}}``
(both as their documentation shows). The "translation" reverses the words and tags the target language, so a
test can tell each output's source and direction. Faults are queued and consumed by the next requests.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse


@dataclass
class Fault:
    status: int = 500
    retry_after: str | None = None
    raw: bytes | None = None  # the body as sent (malformed JSON, a short list); None: a JSON error body


@dataclass
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    at: float


def fake_translation(text: str, target: str) -> str:
    return f"<{target.lower()}> " + " ".join(reversed(text.split()))


@dataclass
class FakeMTApi:
    """``with FakeMTApi("deepl", key="k") as server:``; ``server.base_url`` is the host's root."""

    kind: str  # "deepl" or "google"
    key: str = "test-key"
    requests: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def inject(self, *faults: Fault) -> None:
        with self._lock:
            self.faults.extend(faults)

    @property
    def base_url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> FakeMTApi:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, query: dict[str, list[str]], headers: dict[str, str],
               body: Any) -> tuple[int, bytes, str | None]:
        """Status, body and Retry-After of the answer to one request."""
        with self._lock:
            self.requests.append(Seen(path, query, headers, body, time.monotonic()))
            fault = self.faults.popleft() if self.faults else None
        if fault is not None:
            raw = fault.raw if fault.raw is not None else json.dumps({"message": "fault"}).encode()
            return fault.status, raw, fault.retry_after
        return (*self._translate(path, query, headers, body), None)

    def _translate(self, path: str, query: dict[str, list[str]], headers: dict[str, str],
                   body: Any) -> tuple[int, bytes]:
        if self.kind == "deepl":
            if path != "/v2/translate":
                return 404, b'{"message": "Not found"}'
            if headers.get("authorization") != f"DeepL-Auth-Key {self.key}":
                return 403, b'{"message": "Authorization failure, check auth_key"}'
            texts = body["text"]
            out = [{"detected_source_language": body.get("source_lang") or "EN",
                    "text": fake_translation(t, body["target_lang"])} for t in texts]
            return 200, json.dumps({"translations": out}).encode()
        if path != "/language/translate/v2":
            return 404, b'{"error": {"code": 404, "message": "Not Found"}}'
        if query.get("key") != [self.key]:
            return 400, json.dumps({"error": {"code": 400, "message": "API key not valid. Please pass a valid API key.",
                                              "status": "INVALID_ARGUMENT"}}).encode()
        out = [{"translatedText": fake_translation(t, body["target"])} for t in body["q"]]
        return 200, json.dumps({"data": {"translations": out}}).encode()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                return None

            def do_POST(self) -> None:
                url = urlparse(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else {}
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, data, retry_after = owner.answer(url.path, parse_qs(url.query), headers, body)
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

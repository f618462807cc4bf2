"""``mt-eval serve-method``: one measured method behind HTTP, apart from the leaderboard app (``web.app``).

``POST /translate {"segments": [...]}`` answers ``{"translations": [...], "errors": [...], "method_hash": ...}``
through ``api.translate`` (the engine ``run`` uses: same retries, validators, cache); ``GET /method`` answers
the identity. Every response carries the method card hash, so a caller can check it against the card that
earned the method its tier. Requests are bounded before any work: the body in bytes (413), the segment
count (413) and each segment's length (413); anything else malformed is 422 with a one-line reason.

With a ``token`` every request must carry ``Authorization: Bearer TOKEN`` (401 otherwise, compared in constant
time): a served LLM method spends its owner's provider budget for whoever can reach it, so the command refuses a
non-loopback address without one.

Requests are served one at a time (an ``asyncio.Lock``): ``run_method`` opens and closes the method around
each call, and two overlapping calls would close the other's client or Apertium process under it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from mt_eval.api.translate import dataset_from_segments, identity_record, method_hash, translate_dataset_async
from mt_eval.methods.base import Method

__all__ = ["Limits", "create_method_app", "serve_method"]


@dataclass(frozen=True)
class Limits:
    """What one request may hold; the defaults keep a request well under a minute for a local method."""

    max_body_bytes: int = 1_000_000
    max_segments: int = 256
    max_segment_chars: int = 10_000  # far below scoring/limits.py's 100,000-character output bound


def _refuse(status: int, reason: str, hashed: str) -> JSONResponse:
    return JSONResponse({"error": reason, "method_hash": hashed}, status_code=status)


async def _body(request: Request, limit: int) -> bytes | None:
    """The body, or None as soon as it is over ``limit`` (a lying or absent Content-Length reads no further)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _authorised(request: Request, token: str | None) -> bool:
    if token is None:
        return True
    scheme, _, given = request.headers.get("authorization", "").partition(" ")
    # compare_digest on bytes: constant time, and no UnicodeError on a non-ASCII header value.
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


def _unauthorised(hashed: str) -> JSONResponse:
    answer = _refuse(401, "a bearer token is required: send Authorization: Bearer TOKEN", hashed)
    answer.headers["WWW-Authenticate"] = "Bearer"
    return answer


def _segments(raw: bytes, limits: Limits) -> tuple[int, str] | list[str]:
    """The request's segments, or (status, one-line reason)."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return 422, "the body is not JSON: send {\"segments\": [\"...\", ...]}"
    segments = body.get("segments") if isinstance(body, dict) else None
    if not isinstance(segments, list) or not all(isinstance(s, str) for s in segments):
        return 422, "segments must be a list of strings: send {\"segments\": [\"...\", ...]}"
    if not segments:
        return 422, "segments is empty: send at least one"
    if len(segments) > limits.max_segments:
        return 413, f"{len(segments)} segments: at most {limits.max_segments} per request"
    long = next((i for i, s in enumerate(segments) if len(s) > limits.max_segment_chars), None)
    if long is not None:
        return 413, f"segment {long} has {len(segments[long])} characters: at most {limits.max_segment_chars}"
    return segments


def create_method_app(method: Method, *, source_lang: str, target_lang: str, limits: Limits = Limits(),
                      card_hash: str | None = None, token: str | None = None) -> FastAPI:
    """The app serving ``method`` from ``source_lang`` into ``target_lang``; ``card_hash``: the sealed card the
    method was checked against (``--card``), named in every response; ``token``: the bearer token every request
    must carry (None: none asked, for a loopback address)."""
    app = FastAPI(title="mt-eval method", docs_url=None, redoc_url=None, openapi_url=None)
    hashed = method_hash(method.identity)
    card = {"run_card_hash": card_hash} if card_hash else {}
    lock = asyncio.Lock()

    @app.get("/method", response_model=None)
    async def describe(request: Request) -> dict[str, Any] | JSONResponse:
        if not _authorised(request, token):
            return _unauthorised(hashed)
        return {**identity_record(method), "source_language": source_lang, "target_language": target_lang,
                "limits": {"max_body_bytes": limits.max_body_bytes, "max_segments": limits.max_segments,
                           "max_segment_chars": limits.max_segment_chars}, **card}

    @app.post("/translate")
    async def translate(request: Request) -> JSONResponse:
        if not _authorised(request, token):
            return _unauthorised(hashed)
        raw = await _body(request, limits.max_body_bytes)
        if raw is None:
            return _refuse(413, f"request body over {limits.max_body_bytes} bytes", hashed)
        parsed = _segments(raw, limits)
        if isinstance(parsed, tuple):
            return _refuse(*parsed, hashed)
        dataset = dataset_from_segments(parsed, source_lang, target_lang, dataset_id="serve-method")
        async with lock:
            done = await translate_dataset_async(method, dataset, input_sha256=hashlib.sha256(raw).hexdigest(),
                                                 card_hash=card_hash)
        return JSONResponse({"translations": [t.text if t.error is None else "" for t in done.translations],
                             "errors": [t.error for t in done.translations], "method_hash": hashed, **card})

    return app


def serve_method(app: FastAPI, *, host: str, port: int) -> None:
    """Run ``app`` under uvicorn until interrupted (``mt-eval serve-method``)."""
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")

"""The application: ``create_app(db_url)`` opens the store once and mounts one router per area.

Errors a reader can cause are answered, never a traceback: a ``UserError`` (an unknown sort key,
runs on different datasets) is a 400 with its one line, an unknown hash a 404, a malformed
parameter FastAPI's 422. Pages answer in HTML, ``/api/…`` in JSON. Every response carries a
Content-Security-Policy allowing this origin only (no inline script, no other host), so even a
mistake in escaping could not run a card's script or load anything from elsewhere.

FastAPI's own documentation pages load their script from a CDN, so they are off; ``/openapi.json``
is served and ``/api`` lists its endpoints as a plain page.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from mt_eval.errors import UserError
from mt_eval.store.db import StoreError, open_store
from mt_eval.store.ranking import N_RESAMPLES
from mt_eval.version import __version__
from mt_eval.web import accounts, admin, compare, contest_routes, datasets, leaderboard, review, runs
from mt_eval.web.common import HERE, Memo, page

ROUTERS = (leaderboard.router, runs.router, compare.router, datasets.router, accounts.router, admin.router,
           review.router, contest_routes.router)
"""One router per area: the public pages, then sign-in and invitations, the admin's, the reviewer's, contests."""
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def create_app(db_url: str | None, *, n_resamples: int = N_RESAMPLES, cookie_secure: bool | None = None,
               public_url: str | None = None, contests: Path | None = None) -> FastAPI:
    """The web app over the store at ``db_url`` (a SQLite path or a database URL; ``None``: the
    default store, as ``--db`` is resolved on the command line). The store opens (and migrates) here,
    so a wrong URL is one ``StoreError`` before any server starts. ``cookie_secure``: mark the session
    cookie Secure always (True), never (False), or when the request came over https (None).
    ``public_url``: where readers reach the server (behind a proxy), for the links it makes (invitations);
    None: each request's own base URL (``accounts.links``). ``contests``: a folder of contest roots served
    under ``/contests`` (``web.contest_routes``); None: no contests."""
    store = open_store(db_url)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        store.close()

    app = FastAPI(title="mt-eval leaderboard", version=__version__, docs_url=None, redoc_url=None, lifespan=lifespan,
                  description="Published run cards, ranked with significance clusters. Texts of the "
                              "gold_standard and held_out segments are never served.")  # fmt: skip
    app.state.store = store
    app.state.n_resamples = n_resamples
    app.state.cookie_secure = cookie_secure
    app.state.public_url = public_url
    app.state.contests = contests
    app.state.memos = {"boards": Memo(64), "cards": Memo(8), "comparisons": Memo(16)}
    for router in ROUTERS:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    app.get("/api", response_class=HTMLResponse, summary="The JSON API, listed")(_api_index)
    _handlers(app)

    @app.middleware("http")
    async def headers(request: Request, call_next: Any) -> Response:
        if "\x00" in unquote(request.url.path) or "\x00" in unquote(request.url.query):
            # PostgreSQL refuses NUL in a text parameter (a 500 deep in the driver): refused here instead
            response: Response = _error(request, 400, "NUL characters are not allowed in a request")
        else:
            response = await call_next(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    return app


def _api_index(request: Request) -> HTMLResponse:
    """Every ``/api`` endpoint with its summary and parameters, from the OpenAPI document."""
    paths = request.app.openapi()["paths"]
    endpoints = [{"path": path, "summary": op.get("summary", ""),
                  "params": [p["name"] for p in op.get("parameters", [])]}
                 for path, ops in sorted(paths.items()) if path.startswith("/api/")
                 for op in ops.values()]  # fmt: skip
    return page(request, "api.html", endpoints=endpoints, title="API")


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or request.url.path == "/openapi.json"


def _error(request: Request, status: int, message: str) -> Response:
    if _wants_json(request):
        return JSONResponse({"detail": message}, status_code=status)
    return page(request, "error.html", status_code=status, status=status, message=message, title=f"Error {status}")


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(StoreError)
    async def store_error(request: Request, exc: StoreError) -> Response:
        return _error(request, 503, exc.one_line())

    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> Response:
        return _error(request, 400, exc.one_line())

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 303 and exc.headers:  # a page for signed-in people: to the sign-in form
            return Response(status_code=303, headers=exc.headers)
        return _error(request, exc.status_code, str(exc.detail))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        if _wants_json(request):
            return JSONResponse({"detail": jsonable_encoder(exc.errors())}, status_code=422)
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'][1:])}: {err['msg']}" for err in exc.errors())
        return _error(request, 422, problems)


def serve(db: str | None, host: str, port: int, *, cookie_secure: bool | None = None,
          public_url: str | None = None, contests: Path | None = None) -> None:
    """Run the app under uvicorn until interrupted (``mt-eval serve``). Session cookies are Secure when a
    request came over https: uvicorn takes the scheme from ``X-Forwarded-Proto`` of a proxy on 127.0.0.1
    (its default ``forwarded_allow_ips``); ``cookie_secure`` forces either way. The address it is reached
    at (``public_url``, else ``host``:``port``) is recorded in the store for ``accounts invite``."""
    import uvicorn

    from mt_eval.accounts.links import record_public_url, served_url

    app = create_app(db, cookie_secure=cookie_secure, public_url=public_url, contests=contests)
    record_public_url(app.state.store, public_url or served_url(host, port))
    uvicorn.run(app, host=host, port=port, log_level="info")

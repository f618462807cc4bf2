"""``serve``: the web leaderboard over a store (``mt_eval.web``), run by uvicorn."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mt_eval.cli.common import opt
from mt_eval.cli.store import DbOpt
from mt_eval.errors import UserError


def serve(
    db: DbOpt = None,
    host: Annotated[str, opt("Address to listen on (127.0.0.1: this machine only).", "--host")] = "127.0.0.1",
    port: Annotated[int, opt("Port to listen on.", "--port")] = 8000,
    secure_cookies: Annotated[bool | None, opt(
        "Mark the session cookie Secure (--secure-cookies) or never (--insecure-cookies); default: Secure when "
        "the request came over https (a proxy on 127.0.0.1 may say so with X-Forwarded-Proto).",
        "--secure-cookies/--insecure-cookies")] = None,
    public_url: Annotated[str | None, opt(
        "Where readers reach the server, when not at --host:--port (a proxy): invitation links use it. Default: "
        "the address each request came to; accounts invite uses http://HOST:PORT.", "--public-url")] = None,
    contests: Annotated[Path | None, opt(
        "A folder of contest roots (made with mt-eval contest create) to serve under /contests: the pages, and "
        "self-serve submission for signed-in accounts.", "--contests")] = None,
) -> None:
    """Serve the leaderboard, run pages, comparisons and dataset pages, with a JSON API under /api,
    and the review pages for signed-in reviewers and admins (make the first admin with
    mt-eval accounts add NAME --role admin). With --contests, the contests of that folder too.

    Pages work without JavaScript and load nothing from another host. Texts of the gold_standard
    and held_out segments are never served. Stop with Ctrl-C.

    Example: mt-eval serve --db mt-eval.db --port 8000 --public-url https://review.example.org
    """
    # web.app before accounts.links: without the web extra, the one line names 'web', not 'store' only
    from mt_eval.web.app import serve as run_server

    if not 0 < port < 65536:
        raise UserError(f"--port must be between 1 and 65535, not {port}")
    if contests is not None and not contests.is_dir():
        raise UserError("--contests must be a folder of contest roots", file=str(contests),
                        hint="make one with mt-eval contest create")
    from mt_eval.accounts.links import check_base_url

    run_server(db, host, port, cookie_secure=secure_cookies,
               public_url=check_base_url(public_url) if public_url is not None else None,
               contests=contests.resolve() if contests is not None else None)

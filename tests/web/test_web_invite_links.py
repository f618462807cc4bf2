"""Invitation links point at the server that will answer them: the command line's link carries the port
`mt-eval serve` really listens on (it assumed 8000 whatever --port said), the web page's link the host and
port the admin's request came to, or the configured public URL behind a proxy; with no address known the
command line refuses before a token exists (it is shown only once)."""

from __future__ import annotations

import re
import urllib.request
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from review_web_helpers import cheap_hashing, csrf_of, make_admin, sign_in  # noqa: F401  (autouse fixture)
from sqlalchemy import func, select
from typer.testing import CliRunner
from web_helpers import running_server

from mt_eval.accounts.links import check_base_url, record_public_url, recorded_public_url, served_url
from mt_eval.cli import app as cli_app
from mt_eval.errors import UserError
from mt_eval.store import open_store
from mt_eval.store.models import Invitation
from mt_eval.web.app import create_app

runner = CliRunner()
TOKEN = r"/invite/[A-Za-z0-9_-]{43}"


def _invite(db: str, *extra: str) -> object:
    return runner.invoke(cli_app, ["accounts", "invite", "ben", "--db", db, *extra])


def _invitations(db: str) -> int:
    with open_store(db) as store, store.session() as session:
        return int(session.scalar(select(func.count()).select_from(Invitation)) or 0)


@pytest.mark.slow  # a uvicorn subprocess (~9 s here); the fast test below covers the recorded address
def test_the_command_lines_link_opens_on_the_port_serve_listens_on(tmp_path: Path) -> None:
    db = str(tmp_path / "board.db")
    with running_server(db) as base:  # a free port, not 8000
        made = _invite(db)
        assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
        link = made.stdout.strip()  # type: ignore[attr-defined]
        assert re.fullmatch(re.escape(base) + TOKEN, link), (base, link)
        with urllib.request.urlopen(link, timeout=10) as page:  # the server itself answers the link
            assert page.status == 200 and "invitation" in page.read().decode().lower()


def test_the_command_line_uses_the_address_serve_recorded(tmp_path: Path) -> None:
    db = str(tmp_path / "board.db")
    with open_store(db) as store:
        record_public_url(store, served_url("127.0.0.1", 9123))  # what `serve --port 9123` records
    made = _invite(db)
    assert made.exit_code == 0 and re.fullmatch(r"http://127\.0\.0\.1:9123" + TOKEN,  # type: ignore[attr-defined]
                                                made.stdout.strip()), made.output  # type: ignore[attr-defined]
    with open_store(db) as store:
        record_public_url(store, "https://review.example.org")  # `serve --public-url …`
        assert recorded_public_url(store) == "https://review.example.org"
    assert _invite(db).stdout.startswith("https://review.example.org/invite/")  # type: ignore[attr-defined]


def test_base_url_overrides_and_a_bad_one_is_one_line(tmp_path: Path) -> None:
    db = str(tmp_path / "board.db")
    given = _invite(db, "--base-url", "https://review.example.org/")
    assert given.exit_code == 0 and re.fullmatch(r"https://review\.example\.org" + TOKEN,  # type: ignore[attr-defined]
                                                 given.stdout.strip())  # type: ignore[attr-defined]
    for bad in ("127.0.0.1:9000", "ftp://x.example", "http://h.example:99999", "https://h.example/?a=1"):
        result = _invite(db, "--base-url", bad)
        lines = result.output.strip().splitlines()  # type: ignore[attr-defined]
        assert result.exit_code == 2 and len(lines) == 1 and "--base-url" in lines[0], (bad, result.output)  # type: ignore[attr-defined]
    assert _invitations(db) == 1  # a refused command made no invitation


def test_with_no_address_known_the_command_line_refuses_before_making_a_token(tmp_path: Path) -> None:
    db = str(tmp_path / "never-served.db")
    result = _invite(db)
    lines = result.output.strip().splitlines()  # type: ignore[attr-defined]
    assert result.exit_code == 2 and len(lines) == 1 and "--base-url" in lines[0]  # type: ignore[attr-defined]
    assert "8000" not in result.output and _invitations(db) == 0  # type: ignore[attr-defined]


@pytest.mark.parametrize(("public", "request_base", "expected"), [
    (None, "http://review.local:9123", "http://review.local:9123"),  # the request's own host and port
    ("https://review.example.org", "http://127.0.0.1:9123", "https://review.example.org"),  # behind a proxy
])
def test_the_web_pages_link_uses_the_request_or_the_public_url(tmp_path: Path, public: str | None,
                                                               request_base: str, expected: str) -> None:
    db = str(tmp_path / "board.db")
    make_admin(db)
    with TestClient(create_app(db, public_url=public), base_url=request_base) as client:
        assert sign_in(client, "root").status_code == 303
        token = csrf_of(client.get("/admin/accounts").text)
        made = client.post("/admin/invitations", data={"csrf": token, "name": "dan", "role": "reviewer"})
        assert made.status_code == 200, made.text
        links = re.findall(r"https?://[^\s\"<]+" + TOKEN, made.text)
        assert links and all(link.startswith(expected + "/invite/") for link in links), links


def test_addresses() -> None:
    assert served_url("127.0.0.1", 9001) == "http://127.0.0.1:9001"
    assert served_url("::1", 9001) == "http://[::1]:9001"
    assert served_url("0.0.0.0", 9001) is None and served_url("::", 9001) is None  # every interface: no one address
    assert check_base_url("https://r.example.org/board/") == "https://r.example.org/board"
    with pytest.raises(UserError, match="--public-url"):
        check_base_url("r.example.org")

"""Red-team tests of the contest pages (issue 25), beyond tests/web/test_web_contest.py: markup in a contest's
own fields, the contest's files the web must never serve, a form field that names another entrant, a session
cookie planted before sign-in, a private contest's existence, and the dev split's content type. Real contests
(``contest.create_contest``) and the real app; each assertion fails if its guard is removed.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from review_web_helpers import PASSWORD, cheap_hashing, csrf_of, sign_in  # noqa: F401  (cheap_hashing: autouse)

from mt_eval.accounts.users import add_account
from mt_eval.contest.state import contest_state
from mt_eval.store import open_store
from mt_eval.web.app import create_app
from mt_eval.web.auth import COOKIE
from support.contest import apertium_bundle, make_contest, record

SCRIPT = "<script>alert('t')</script>"
IMG = '<img src=x onerror="alert(1)">'
SECRET_VALUE = 63.90417  # the executed entry's hidden value: its digits appear nowhere before close


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Accounts alice, bob, organiser; contests ``markup`` (markup in its title and licence, entrants named,
    one entry of bob's executed on the secret split) and ``hidden-one`` (private to alice)."""
    folder = tmp_path_factory.mktemp("web-contest-hostile")
    db = str(folder / "store.db")
    with open_store(db) as store:
        for name in ("alice", "bob", "organiser"):
            add_account(store, name, "reviewer", PASSWORD)
    contests = folder / "contests"
    contests.mkdir()
    markup = make_contest(contests, name="markup", title=f"Eng→spa {SCRIPT}", licence=f"CC-BY {IMG}",
                          anonymise=False)
    make_contest(contests, name="hidden-one", visibility="private", members=["alice"])
    edited = make_contest(contests, name="edited-dev")  # its dev.json rewritten after creation
    dev = edited.root / "dev.json"
    dev.write_bytes(dev.read_bytes().replace(b'"reference": "', b'"reference": "EDITED '))
    record(markup.root, "contest.submit", entry=1, entrant="bob", entry_kind="bundle", sha256="ab" * 32)
    record(markup.root, "contest.qualify", entry=1, passed=True, score=31.5, reason="")
    record(markup.root, "contest.approve", entry=1, custodian="custodian-1")
    record(markup.root, "contest.execute", entry=1, value=SECRET_VALUE, ci=[61.2, 66.7], composite=0.7781,
           full_run_card_hash="cd" * 32)
    entry = markup.root / "entries" / "1"  # what the harness writes beside an executed entry
    entry.mkdir(parents=True)
    (entry / "result.json").write_text(f'{{"value": {SECRET_VALUE}}}', encoding="utf-8")
    (markup.root / "ranking.json").write_text(f'{{"value": {SECRET_VALUE}}}', encoding="utf-8")
    bundle = apertium_bundle(folder / "bundle")
    archive = Path(shutil.make_archive(str(folder / "apertium"), "gztar", bundle))
    return {"db": db, "contests": contests, "markup": markup, "archive": archive}


@pytest.fixture(scope="module")
def app_of(world: dict[str, Any]) -> Iterator[Any]:
    yield create_app(world["db"], n_resamples=100, contests=world["contests"])


def client_for(app: Any, account: str | None = None) -> TestClient:
    client = TestClient(app, raise_server_exceptions=False)
    if account:
        assert sign_in(client, account).status_code == 303
    return client


def test_markup_in_a_contests_fields_is_escaped_on_every_page(app_of: Any) -> None:
    """Attack: a contest title and licence holding a script and an event handler (an organiser's fields are
    shown to every visitor). Every page shows them as text."""
    for who, url in ((None, "/contests"), (None, "/contests/markup"), ("alice", "/contests/markup/submit"),
                     ("bob", "/contests/markup/entries/1"), ("organiser", "/contests/markup/organiser")):
        page = client_for(app_of, who).get(url)
        assert page.status_code == 200, (who, url)
        assert SCRIPT not in page.text and IMG not in page.text, (who, url)
        assert "&lt;script&gt;" in page.text, (who, url)  # shown, as text
        assert "script-src 'self'" in page.headers["content-security-policy"] or \
            "default-src 'self'" in page.headers["content-security-policy"]


@pytest.mark.parametrize("path", ["contest.json", "ranking.json", "entries/1/result.json", "governance/audit.jsonl",
                                  "vault", "entries/1/artefact", "dev.json/../contest.json", "entries/1/qualify.json"])
def test_the_contests_own_files_are_not_served(app_of: Any, path: str) -> None:
    """Attack: fetch the manifest (its seed), the ranking and an entry's result.json (the hidden value) or the
    log by their paths under the contest's URL, or through the static mount."""
    organiser = client_for(app_of, "organiser")
    for url in (f"/contests/markup/{path}", f"/static/../contests/markup/{path}", f"/api/contests/markup/{path}"):
        response = organiser.get(url, follow_redirects=False)
        assert response.status_code in (404, 405), (url, response.status_code)
        assert "63.90" not in response.text and '"seed"' not in response.text, url


def test_the_executed_value_is_hidden_from_the_entrant_and_the_organiser(app_of: Any) -> None:
    for who in (None, "bob", "organiser"):
        client = client_for(app_of, who)
        for url in ("/contests/markup", "/api/contests/markup", "/contests/markup/entries/1",
                    "/contests/markup/organiser", "/api/contests"):
            text = client.get(url, follow_redirects=False).text
            for digits in ("63.90", "63.9", "61.2", "66.7", "0.778"):
                assert digits not in text, (who, url, digits)


def test_a_form_field_naming_another_entrant_is_ignored(app_of: Any, world: dict[str, Any]) -> None:
    """Attack: alice adds ``entrant=bob`` (and ``who``) to the form: the entry is alice's, the account."""
    alice = client_for(app_of, "alice")
    token = csrf_of(alice.get("/contests/markup/submit").text)
    with world["archive"].open("rb") as fh:
        sent = alice.post("/contests/markup/submit", data={"csrf": token, "kind": "bundle", "entrant": "bob",
                                                           "who": "bob"},
                          files={"archive": ("a.tar.gz", fh, "application/gzip")}, follow_redirects=False)
    assert sent.status_code == 303, sent.text[-400:]
    number = int(sent.headers["location"].rsplit("/", 1)[1])
    assert contest_state(world["markup"].root).entry(number).entrant == "alice"


def test_a_session_cookie_planted_before_sign_in_is_not_signed_in(app_of: Any) -> None:
    """Session fixation: an attacker gives the victim a session cookie (the login form sets one), the victim
    signs in with it; the attacker's copy of the cookie must not be the signed-in session."""
    victim = TestClient(app_of, raise_server_exceptions=False)
    victim.get("/login")
    planted = victim.cookies.get(COOKIE)
    assert planted  # the login form gave an anonymous session
    assert sign_in(victim, "alice").status_code == 303
    assert victim.cookies.get(COOKIE) != planted  # a new session id on sign-in
    assert victim.get("/contests/hidden-one").status_code == 200  # the victim is signed in
    attacker = TestClient(app_of, raise_server_exceptions=False)
    attacker.cookies.set(COOKIE, planted)
    assert attacker.get("/contests/hidden-one").status_code == 404
    assert attacker.get("/contests/markup/submit", follow_redirects=False).status_code == 303  # to sign in


def test_a_private_contest_answers_like_a_missing_one(app_of: Any) -> None:
    """A private contest's existence must not leak through a different status or body than a missing id's."""
    bob = client_for(app_of, "bob")
    for suffix in ("", "/dev.json", "/submit", "/organiser", "/entries/1"):
        hidden = bob.get(f"/contests/hidden-one{suffix}", follow_redirects=False)
        missing = bob.get(f"/contests/no-such-one{suffix}", follow_redirects=False)
        assert (hidden.status_code, hidden.text) == (missing.status_code, missing.text), suffix
    with_form = bob.post("/contests/hidden-one/submit", data={"csrf": "x"}, follow_redirects=False)
    without = bob.post("/contests/no-such-one/submit", data={"csrf": "x"}, follow_redirects=False)
    assert (with_form.status_code, with_form.text) == (without.status_code, without.text)
    assert "hidden-one" not in bob.get("/contests").text and "hidden-one" not in bob.get("/api/contests").text


def test_the_dev_split_is_served_as_a_json_download(app_of: Any) -> None:
    """Content-type confusion: the dev split holds the corpus's texts (any markup in a source), so it is sent
    as JSON, as an attachment, with nosniff: a browser never renders it as a page."""
    dev = client_for(app_of).get("/contests/markup/dev.json")
    assert dev.status_code == 200
    assert dev.headers["content-type"].startswith("application/json")
    assert dev.headers["content-disposition"].startswith("attachment")
    assert dev.headers["x-content-type-options"] == "nosniff"


def test_a_dev_split_edited_after_creation_is_not_served(app_of: Any) -> None:
    """Attack: rewrite dev.json on the server (every entrant downloads it to tune for the qualifier); the
    manifest pins its sha256, so the download is refused like any contest whose record fails verification."""
    response = client_for(app_of).get("/contests/edited-dev/dev.json")
    assert response.status_code == 503 and "EDITED" not in response.text
    assert client_for(app_of).get("/contests/markup/dev.json").status_code == 200


@pytest.mark.parametrize("verb", ["qualify", "approve", "execute", "rank", "close", "export", "publish"])
def test_no_web_request_changes_a_contests_state_but_a_submission(app_of: Any, world: dict[str, Any],
                                                                    verb: str) -> None:
    """Attack: an entrant (or a stolen organiser session) approves or runs an entry, ranks or closes the contest
    over the web; those are the organiser's commands on the organiser's machine, so no URL answers them and the
    log is unchanged."""
    before = contest_state(world["markup"].root).head
    for who in ("bob", "organiser"):
        client = client_for(app_of, who)
        token = csrf_of(client.get("/contests/markup/submit").text) if who == "bob" else "x"
        for url in (f"/contests/markup/{verb}", f"/contests/markup/entries/1/{verb}", f"/api/contests/markup/{verb}",
                    f"/contests/markup/organiser/{verb}"):
            response = client.post(url, data={"csrf": token, "entry": "1", "custodian": who}, follow_redirects=False)
            assert response.status_code in (404, 405), (who, url, response.status_code)
    assert contest_state(world["markup"].root).head == before

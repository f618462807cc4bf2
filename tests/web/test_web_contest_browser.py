"""The self-serve contest flow in a real Chromium against ``mt-eval serve --contests`` (a subprocess, a free
port): an entrant signs in, opens the contest, uploads the Apertium bundle as a .tar.gz through the form and
lands on their entry's page ("submitted"); the organiser's machine qualifies it (``qualify_entry``, what
``mt-eval contest qualify`` runs: the bundle in the sandbox on the dev split) and the entry page shows
"qualified" with its dev score; the public page names no entrant and still hides results. Nothing is
requested from another host and the console stays clean. Raw requests (sent byte for byte, as no browser
would) with ``..`` in a contest id find nothing."""

from __future__ import annotations

import http.client
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page
from review_web_helpers import PASSWORD
from web_helpers import raw_get, running_server

from mt_eval.accounts.sessions import csrf_token
from mt_eval.accounts.users import add_account
from mt_eval.contest.execution import qualify_entry
from mt_eval.contest.state import contest_state
from mt_eval.store import open_store
from support.contest import apertium_bundle, make_contest

ENTRANT = "entrant-1"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("web-contest-browser")
    db = str(folder / "store.db")
    with open_store(db) as store:
        add_account(store, ENTRANT, "reviewer", PASSWORD)
    contests = folder / "contests"
    contests.mkdir()
    made = make_contest(contests, name="eng-spa")
    archive = Path(shutil.make_archive(str(folder / "apertium"), "gztar", apertium_bundle(folder / "bundle")))
    with running_server(db, "--contests", str(contests)) as base:
        yield {"base": base, "root": made.root, "archive": archive, "manifest": made.manifest}


def watch(page: Page, base: str, problems: list[str]) -> None:
    """Record console errors, page errors, dialogs and any request to another host."""
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))

    def dialog(d: Dialog) -> None:  # an alert() would mean a script of ours or an entrant's ran
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    page.on("request", lambda r: None if r.url.startswith((base + "/", "data:")) else problems.append(r.url))


@pytest.mark.slow
def test_an_entrant_submits_through_the_browser(served: dict[str, Any], browser: Browser) -> None:
    base, problems = served["base"], list[str]()
    context = browser.new_context()
    page = context.new_page()
    watch(page, base, problems)
    page.goto(base + "/contests")
    page.click("a[href='/contests/eng-spa']")
    assert page.locator("#contest-state").inner_text() == "open"
    assert page.locator("#results-hidden").count() == 1
    assert served["manifest"].licence in page.locator("#licence").inner_text()
    page.click("text=Sign in")
    page.fill("input[name=name]", ENTRANT)
    page.fill("input[name=password]", PASSWORD)
    page.click("#login-form button[type=submit]")
    page.goto(base + "/contests/eng-spa")
    page.click("#submit-link")
    assert page.locator("#entrant").inner_text() == ENTRANT
    page.check("input[name=kind][value=bundle]")
    page.set_input_files("input[name=archive]", str(served["archive"]))
    page.click("#submit-form button[type=submit]")
    page.wait_for_url("**/contests/eng-spa/entries/1")
    assert page.locator("#entry-state").inner_text() == "submitted"
    assert contest_state(served["root"]).entries[0].entrant == ENTRANT  # the log has it, as the CLI records it

    outcome = qualify_entry(served["root"], 1)  # the organiser's machine re-runs it on the public dev split
    page.reload()
    state = page.locator("#entry-state").inner_text()
    assert state == ("qualified" if outcome["passed"] else "not-qualified"), outcome
    assert page.locator("#dev-score").inner_text().startswith(f"{outcome['score']:.2f}")
    assert page.locator("#secret-hidden").count() == 1

    public = browser.new_context().new_page()  # someone not signed in
    watch(public, base, problems)
    public.goto(base + "/contests/eng-spa")
    assert public.locator("#results-hidden").count() == 1
    assert public.locator("table.entries tbody tr").count() == 1
    assert "Entrant 1" in public.locator("table.entries").inner_text()
    assert ENTRANT not in public.content()
    public.goto(base + "/contests/eng-spa/entries/1")
    assert public.url.endswith("/login")  # an entry page is its entrant's: a visitor is asked to sign in
    assert not problems, problems
    context.close()


@pytest.mark.parametrize("path", ["/contests/..", "/contests/../contests/eng-spa/dev.json", "/contests/%2e%2e",
                                  "/contests/eng-spa/../../etc/passwd", "/api/contests/..%2feng-spa",
                                  "/contests/eng-spa%2f..%2f..%2fstore.db"])  # fmt: skip
def test_raw_traversal_in_contest_ids_finds_nothing(served: dict[str, Any], path: str) -> None:
    status, body = raw_get(served["base"], path)
    assert status == 404, (path, status)
    assert "root:" not in body and "SQLite" not in body and '"entries"' not in body


def test_an_oversize_upload_is_refused_before_its_body_is_sent(served: dict[str, Any]) -> None:
    """A signed-in entrant declares 10 GiB and sends no byte of it: uvicorn answers 413 at once (the header is
    checked before the body is read), so a server never spends disk or time on an upload it will refuse."""
    host, port = served["base"].removeprefix("http://").split(":")

    def request(method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Any:
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        response.read()
        connection.close()
        return response

    login = request("GET", "/login")
    cookie = login.getheader("set-cookie").split(";")[0]
    form = f"csrf={csrf_token(cookie.split('=', 1)[1])}&name={ENTRANT}&password={PASSWORD.replace(' ', '+')}"
    signed = request("POST", "/login", form.encode(), {"Cookie": cookie,
                                                      "Content-Type": "application/x-www-form-urlencoded"})
    assert signed.status == 303, signed.status
    session = signed.getheader("set-cookie").split(";")[0]
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.putrequest("POST", "/contests/eng-spa/submit")
    for name, value in (("Cookie", session), ("Content-Type", "multipart/form-data; boundary=b"),
                        ("Content-Length", str(10 << 30))):
        connection.putheader(name, value)
    connection.endheaders()  # headers only: not one byte of the declared body follows
    response = connection.getresponse()
    assert response.status == 413 and b"limit" in response.read()
    connection.close()

"""Contests on the web (``web.contest_routes``) against real contests made by ``contest.create_contest`` and a
real ``submit_entry``: the pages and their JSON twin, hostile requests each refused with its status, and
results hidden everywhere until close.

Hidden results are checked by their digits: the executed entry's secret-split value (``SECRET_VALUE``) is a
number no page would otherwise print, so a response leaks it exactly when its digits appear in the body.
The secret split's texts (recomputed from the corpus and the seed, as anyone holding both could) must appear
in no response at all.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from review_web_helpers import PASSWORD, cheap_hashing, csrf_of, sign_in  # noqa: F401  (cheap_hashing: autouse)
from web_helpers import cli

from mt_eval.accounts.users import add_account
from mt_eval.contest.manifest import split_ids
from mt_eval.store import open_store
from mt_eval.web.app import create_app
from mt_eval.web.contest_upload import FORM_OVERHEAD
from support.contest import CORPUS, DEV, SECRET, SEED, apertium_bundle, make_contest, record

SECRET_VALUE = 47.31829
SECRET_DIGITS = ("47.31", "47.32", "47.3")
ACCOUNTS = ("organiser", "alice", "bob", "member", "root")  # root: the server's admin


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with five accounts; a contests folder with a public contest ``open-one`` (one entry, executed on
    the secret split), a private contest ``private-one`` for ``member`` (one entry, not qualified), a public
    contest ``closed-one`` closed after its one entry ran, and ``broken-one`` whose manifest was edited after
    creation (a lowered threshold); the Apertium bundle as a .tar.gz."""
    folder = tmp_path_factory.mktemp("web-contest")
    db = str(folder / "store.db")
    with open_store(db) as store:
        for name in ACCOUNTS:
            add_account(store, name, "admin" if name == "root" else "reviewer", PASSWORD)
    contests = folder / "contests"
    contests.mkdir()
    made = {name: make_contest(contests, name=name, **options) for name, options in (
        ("open-one", {}), ("private-one", {"visibility": "private", "members": ["member"]}), ("closed-one", {}),
        ("broken-one", {}))}
    manifest = made["broken-one"].root / "contest.json"  # edited after creation: every reader refuses it
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"threshold": 20.0', '"threshold": 0.0'),
                        encoding="utf-8")
    bundle = apertium_bundle(folder / "bundle")
    archive = Path(shutil.make_archive(str(folder / "apertium"), "gztar", bundle))
    for name in ("open-one", "closed-one"):  # entries by the log's own events (the writers of later steps)
        root = made[name].root
        record(root, "contest.submit", entry=1, entrant="bob", entry_kind="bundle", sha256="ab" * 32)
        record(root, "contest.qualify", entry=1, passed=True, score=31.5, reason="")
        record(root, "contest.approve", entry=1, custodian="custodian-1")
        record(root, "contest.execute", entry=1, value=SECRET_VALUE, ci=[45.1, 49.2], composite=0.6123,
               full_run_card_hash="cd" * 32)  # fmt: skip
    record(made["private-one"].root, "contest.submit", entry=1, entrant="member", entry_kind="model", sha256="ef" * 32)
    record(made["private-one"].root, "contest.qualify", entry=1, passed=False, score=12.25,
           reason="chrF++ 12.25 is below the qualifier 20.0")  # fmt: skip
    record(made["closed-one"].root, "contest.rank", ranking_sha256="ef" * 32, metric="chrf_plus_plus",
           ranks=[{"entry": 1, "rank": 1, "cluster": 1}])  # fmt: skip
    record(made["closed-one"].root, "contest.close", ranking_sha256="ef" * 32)
    return {"db": db, "contests": contests, "made": made, "archive": archive}


@pytest.fixture(scope="module")
def app_of(world: dict[str, Any]) -> Iterator[Any]:
    app = create_app(world["db"], n_resamples=100, contests=world["contests"])
    yield app


def client_for(app: Any, account: str | None = None) -> TestClient:
    client = TestClient(app, raise_server_exceptions=False)
    if account:
        assert sign_in(client, account).status_code == 303
    return client


@pytest.fixture(scope="module")
def secret_texts() -> list[str]:
    """The secret split's sources and references, as anyone with the corpus and the seed can recompute them."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    _, secret = split_ids([e["id"] for e in data["entries"]], SEED, DEV, SECRET)
    chosen = set(secret)
    return [e[k] for e in data["entries"] if e["id"] in chosen for k in ("source", "reference")]


def _leaks(body: str, secret_texts: list[str]) -> list[str]:
    return [t[:40] for t in secret_texts if t in body]


def upload(client: TestClient, contest: str, archive: Path, *, kind: str = "bundle", csrf: str | None = None,
           headers: dict[str, str] | None = None) -> Any:
    token = csrf if csrf is not None else csrf_of(client.get(f"/contests/{contest}/submit").text)
    with archive.open("rb") as fh:
        return client.post(f"/contests/{contest}/submit", data={"csrf": token, "kind": kind},
                           files={"archive": (archive.name, fh, "application/gzip")}, headers=headers or {},
                           follow_redirects=False)  # fmt: skip


def test_list_pages_and_api_show_public_contests_only(app_of: Any, world: dict[str, Any]) -> None:
    anonymous, member = client_for(app_of), client_for(app_of, "member")
    page = anonymous.get("/contests")
    assert page.status_code == 200
    assert 'href="/contests/open-one"' in page.text and "private-one" not in page.text
    assert [c["id"] for c in anonymous.get("/api/contests").json()] == ["closed-one", "open-one"]
    assert "private-one" in member.get("/contests").text
    listed = {c["id"]: c for c in member.get("/api/contests").json()}
    assert set(listed) == {"closed-one", "open-one", "private-one"}
    assert listed["open-one"]["state"] == "open" and listed["open-one"]["results_hidden"] is True
    assert listed["closed-one"]["state"] == "closed" and listed["closed-one"]["entries"] == 1
    assert listed["private-one"]["entries"] == 1 and listed["private-one"]["visibility"] == "private"
    assert 'href="/contests"' in anonymous.get("/").text  # the nav links the contests when the server runs some


def test_contest_page_shows_rules_and_serves_only_the_public_dev_split(
        app_of: Any, world: dict[str, Any], secret_texts: list[str]) -> None:
    client = client_for(app_of)
    manifest = world["made"]["open-one"].manifest
    page = client.get("/contests/open-one")
    assert page.status_code == 200
    assert manifest.licence in page.text and f"≥ {manifest.threshold}" in page.text
    assert 'href="/contests/open-one/dev.json"' in page.text
    assert "Entrant 1" in page.text and "bob" not in page.text  # anonymised by default
    dev = client.get("/contests/open-one/dev.json")
    assert dev.status_code == 200 and dev.content == (world["made"]["open-one"].root / "dev.json").read_bytes()
    assert len(json.loads(dev.content)["entries"]) == DEV
    for url in ("/contests", "/contests/open-one", "/contests/open-one/dev.json", "/api/contests",
                "/api/contests/open-one", "/contests/closed-one", "/api/contests/closed-one"):
        assert not _leaks(client.get(url).text, secret_texts), url


def test_results_are_hidden_everywhere_until_close(app_of: Any, world: dict[str, Any]) -> None:
    """Before close no page or JSON holds the executed entry's value, CI, composite or rank, whoever asks
    (its entrant and the organiser included); after close the public page ranks it."""
    urls = ["/contests", "/contests/open-one", "/api/contests", "/api/contests/open-one",
            "/contests/open-one/entries/1", "/contests/open-one/organiser"]  # fmt: skip
    for who in (None, "bob", "organiser", "root"):
        client = client_for(app_of, who)
        for url in urls:
            response = client.get(url, follow_redirects=False)
            assert response.status_code in (200, 303, 403, 404), (who, url)
            for digits in (*SECRET_DIGITS, "45.1", "49.2", "0.612"):
                assert digits not in response.text, (who, url, digits)
    public = client_for(app_of).get("/api/contests/open-one").json()
    assert public["results_hidden"] is True and public["entries"][0]["value"] is None
    assert public["entries"][0]["state"] == "executed" and public["entries"][0]["rank"] is None
    assert 'id="secret-hidden"' in client_for(app_of, "bob").get("/contests/open-one/entries/1").text
    closed = client_for(app_of).get("/contests/closed-one")
    assert "47.32" in closed.text and 'id="results"' in closed.text
    assert client_for(app_of).get("/api/contests/closed-one").json()["entries"][0]["rank"] == 1


def test_the_organiser_sees_names_and_commands(app_of: Any, world: dict[str, Any]) -> None:
    """The account named as organiser and the server's admins see entrants' names, approvals and the next
    commands (and a private contest); an entrant gets 403."""
    for who in ("organiser", "root"):
        organiser = client_for(app_of, who)
        page = organiser.get("/contests/open-one/organiser")
        assert page.status_code == 200 and "bob" in page.text and "custodian-1" in page.text
        assert f"mt-eval contest show {world['made']['open-one'].root} --organiser" in page.text
        assert "bob" in organiser.get("/api/contests/open-one").text
    assert client_for(app_of, "root").get("/contests/private-one/organiser").status_code == 200
    assert client_for(app_of, "organiser").get("/contests/private-one").status_code == 200
    assert client_for(app_of, "alice").get("/contests/open-one/organiser").status_code == 403
    assert client_for(app_of).get("/contests/open-one/organiser", follow_redirects=False).status_code == 303


def test_self_serve_submission_runs_the_cli_checker(app_of: Any, world: dict[str, Any], tmp_path: Path) -> None:
    alice = client_for(app_of, "alice")
    sent = upload(alice, "open-one", world["archive"])
    assert sent.status_code == 303, sent.text[-500:]
    entry = sent.headers["location"]
    assert entry.startswith("/contests/open-one/entries/")
    page = alice.get(entry)
    assert page.status_code == 200 and 'id="entry-state">submitted<' in page.text and "alice" in page.text
    assert client_for(app_of, "bob").get(entry).status_code == 404  # another entrant's entry
    assert client_for(app_of, "organiser").get(entry).status_code == 200
    assert "alice" not in client_for(app_of).get("/contests/open-one").text  # still anonymised in public
    again = upload(alice, "open-one", world["archive"])  # the CLI's own refusal, as one line on the form
    assert again.status_code == 400 and "already submitted this artefact" in again.text
    assert str(world["contests"]) not in again.text and "/tmp" not in again.text
    as_model = upload(alice, "open-one", world["archive"], kind="model")
    assert as_model.status_code == 400 and 'id="submit-error"' in as_model.text
    text = tmp_path / "notes.zip"
    text.write_bytes(b"not a zip")
    broken = upload(alice, "open-one", text)
    assert broken.status_code == 400 and 'id="submit-error"' in broken.text
    assert upload(client_for(app_of, "member"), "private-one", world["archive"]).status_code == 303  # a member's
    wrong_kind = tmp_path / "bundle.rar"
    wrong_kind.write_bytes(world["archive"].read_bytes())
    assert upload(alice, "open-one", wrong_kind).status_code == 400


def test_hostile_submissions_are_refused_before_the_body_is_used(app_of: Any, world: dict[str, Any]) -> None:
    root = world["made"]["open-one"].root
    before = sorted(p.name for p in (root / "entries").iterdir()) if (root / "entries").exists() else []
    anonymous = client_for(app_of)
    with world["archive"].open("rb") as fh:
        no_session = anonymous.post("/contests/open-one/submit", data={"kind": "bundle"},
                                    files={"archive": ("a.tar.gz", fh)}, follow_redirects=False)  # fmt: skip
    assert no_session.status_code == 401
    assert anonymous.get("/contests/open-one/submit", follow_redirects=False).headers["location"] == "/login"
    alice = client_for(app_of, "alice")
    assert upload(alice, "open-one", world["archive"], csrf="0" * 64).status_code == 403
    assert upload(alice, "open-one", world["archive"], csrf="").status_code == 403
    bob = client_for(app_of, "bob")  # another session's token is refused too
    assert upload(alice, "open-one", world["archive"], csrf=csrf_of(bob.get("/contests").text)).status_code == 403
    limit = (world["made"]["open-one"].manifest.max_artefact_mb << 20) + FORM_OVERHEAD
    token = csrf_of(alice.get("/contests/open-one/submit").text)
    oversize = alice.post("/contests/open-one/submit", content=b"x" * 10,
                          headers={"content-length": str(limit + 1), "content-type": "multipart/form-data; boundary=b"})
    assert oversize.status_code == 413 and "limit" in oversize.text
    body = (f'--b\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n{token}\r\n--b\r\nContent-Disposition: '
            f'form-data; name="kind"\r\n\r\nbundle\r\n--b--\r\n').encode()
    lying = alice.post("/contests/open-one/submit", content=body + b"y" * 5000,
                       headers={"content-length": "100", "content-type": "multipart/form-data; boundary=b"})
    assert lying.status_code == 413 and "Content-Length" in lying.text
    many = b"".join(f'--b\r\nContent-Disposition: form-data; name="f{i}"\r\n\r\nv\r\n'.encode() for i in range(50))
    fields = alice.post("/contests/open-one/submit", content=many + b"--b--\r\n",
                        headers={"content-type": "multipart/form-data; boundary=b"})
    assert fields.status_code == 400
    data = world["archive"].read_bytes()
    two = alice.post("/contests/open-one/submit", data={"csrf": token, "kind": "bundle"},
                     files=[("archive", ("a.tar.gz", data)), ("archive", ("b.tar.gz", data))])  # fmt: skip
    assert two.status_code == 400  # one file per submission
    as_file = alice.post("/contests/open-one/submit", data={"kind": "bundle"},
                         files={"csrf": ("t", token.encode()), "archive": ("a.tar.gz", data)})  # fmt: skip
    assert as_file.status_code in (400, 403)
    assert upload(client_for(app_of, "bob"), "private-one", world["archive"], csrf="0" * 64).status_code == 404
    assert upload(client_for(app_of, "bob"), "closed-one", world["archive"], csrf="0" * 64).status_code == 409
    # the organiser sees the private contest but is not one of its members: no entry from them
    assert upload(client_for(app_of, "organiser"), "private-one", world["archive"], csrf="0" * 64).status_code == 403
    after = sorted(p.name for p in (root / "entries").iterdir()) if (root / "entries").exists() else []
    assert after == before  # nothing was unpacked or recorded


@pytest.mark.parametrize("contest", ["%2e%2e", "..%2fopen-one", "open-one%2f..%2fprivate-one", "Open-One",
                                     "-x", "open-one%00", "private-one", "nope", "open-one-keys", "a" * 65])
def test_bad_or_hidden_contest_ids_are_404(app_of: Any, contest: str) -> None:
    client = client_for(app_of, "bob")
    for url in (f"/contests/{contest}", f"/contests/{contest}/dev.json", f"/api/contests/{contest}",
                f"/contests/{contest}/entries/1"):
        response = client.get(url, follow_redirects=False)
        assert response.status_code in (400, 404, 422), (url, response.status_code)
        assert "governance" not in response.text and "AGE-SECRET" not in response.text


def test_private_contest_is_its_members_and_entry_numbers_are_checked(app_of: Any) -> None:
    assert client_for(app_of).get("/contests/private-one").status_code == 404
    assert client_for(app_of, "alice").get("/api/contests/private-one").status_code == 404
    member = client_for(app_of, "member")
    assert member.get("/contests/private-one").status_code == 200
    assert member.get("/contests/private-one/dev.json").status_code == 200
    entry = member.get("/contests/private-one/entries/1").text  # not qualified: the reason and the dev score
    assert 'id="entry-state">not-qualified<' in entry and "below the qualifier 20.0" in entry and "12.25" in entry
    bob = client_for(app_of, "bob")
    assert bob.get("/contests/open-one/entries/1").status_code == 200  # bob's own
    assert bob.get("/contests/open-one/entries/99").status_code == 404
    assert bob.get("/contests/open-one/entries/0").status_code == 422
    assert bob.get("/contests/open-one/entries/x").status_code == 422


def test_a_contest_whose_record_fails_verification_is_refused_not_shown(app_of: Any, world: dict[str, Any]) -> None:
    client = client_for(app_of)
    listing = client.get("/contests")
    assert 'id="refused"' in listing.text and "broken-one" not in listing.text
    assert "broken-one" not in {c["id"] for c in client.get("/api/contests").json()}
    for url in ("/contests/broken-one", "/api/contests/broken-one", "/contests/broken-one/dev.json"):
        response = client.get(url)
        assert response.status_code == 503, url
        assert str(world["contests"]) not in response.text and "0.0" not in response.text


def test_serve_refuses_a_contests_path_that_is_not_a_folder(tmp_path: Path) -> None:
    result = cli("serve", "--db", str(tmp_path / "s.db"), "--contests", str(tmp_path / "missing"))
    assert result.exit_code == 2 and "--contests must be a folder" in result.output


def test_a_server_without_contests_answers_404(world: dict[str, Any]) -> None:
    with TestClient(create_app(world["db"], n_resamples=100), raise_server_exceptions=False) as client:
        assert client.get("/contests").status_code == 404
        assert client.get("/api/contests").status_code == 404
        assert 'href="/contests"' not in client.get("/").text


def test_what_submit_entry_would_refuse_is_refused_before_the_upload_is_read(world: dict[str, Any],
                                                                            tmp_path: Path) -> None:
    """A contest that requires signed entries (the form carries none), or whose deadline has passed: the web
    refuses from the headers (403), with submit_entry's own line, not after reading and copying the archive."""
    contests = tmp_path / "contests"
    make_contest(contests, name="signed-one", require_signatures=True)
    make_contest(contests, name="late-one", deadline="2020-01-01")
    client = client_for(create_app(world["db"], n_resamples=100, contests=contests), "member")
    for name, why in (("signed-one", "requires a signed submission"), ("late-one", "took entries until 2020-01-01")):
        assert client.get(f"/contests/{name}/submit").status_code == 403
        answer = upload(client, name, world["archive"], csrf="not-read")
        assert answer.status_code == 403 and why in answer.text, (name, answer.status_code, answer.text[:300])

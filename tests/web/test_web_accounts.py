"""Accounts and review on the web, with hostile requests (in-process client over a real SQLite store with
real published cards): CSRF, roles, another reviewer's items, the sign-in rate limit without a
user-enumeration oracle, cookie flags, session fixation, spent and expired invitations, XSS in comments,
secret segments refused for a campaign, and the disagreement lens against the stored ratings."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from review_web_helpers import (  # noqa: F401  (cheap_hashing: an autouse fixture)
    PASSWORD,
    attentive,
    cheap_hashing,
    csrf_of,
    humanise,
    invited_reviewer,
    make_admin,
    publish,
    sign_in,
    truths,
)
from sqlalchemy import delete, select, update
from web_helpers import XSS

from mt_eval.accounts.invitations import invite
from mt_eval.review.campaign import assign, create_campaign
from mt_eval.review.lens import LENS_HIGH, LENS_LOW
from mt_eval.review.online import online_batch, record_rating
from mt_eval.store import open_store
from mt_eval.store.models import Card, Invitation, ReviewItem, StoreSetting
from mt_eval.store.review_pages import SECRET_REVIEW_SETTING
from mt_eval.web.app import create_app
from mt_eval.web.auth import COOKIE


@pytest.fixture(scope="module")
def world(cards: dict[str, Path], secret_cards: dict[str, Any], tmp_path_factory: pytest.TempPathFactory
          ) -> dict[str, Any]:
    """A store with near, half and a secret-corpus card; an admin; two campaigns; ana on the first
    (``es-a``), ben on the second (``es-b``), both signed up through invitations."""
    db = str(tmp_path_factory.mktemp("web-accounts") / "store.db")
    hashes = publish(db, cards["near"], cards["half"], secret_cards["cards"]["plain"])
    make_admin(db)
    with open_store(db) as store:
        a = create_campaign(store, [hashes["near"], hashes["half"]], size=30, seed=1, name="es-a")
        b = create_campaign(store, [hashes["near"]], size=30, seed=2, name="es-b")
        tokens = {"ana": invite(store, "ana", "reviewer", campaign="es-a", by="root", identity="ana@example.org"),
                  "ben": invite(store, "ben", "reviewer", campaign="es-b", by="root", identity="ben@example.org")}
    return {"db": db, "hashes": hashes, "uids": {"es-a": a.uid, "es-b": b.uid}, "tokens": tokens}


@pytest.fixture(scope="module")
def app(world: dict[str, Any]) -> Iterator[Any]:
    application = create_app(world["db"], n_resamples=200)
    with TestClient(application):  # runs the lifespan once: the store closes at the end
        yield application


def client_for(app: Any, base_url: str = "http://testserver") -> TestClient:
    return TestClient(app, base_url=base_url, raise_server_exceptions=False)


def accept(app: Any, token: str) -> TestClient:
    client = client_for(app)
    page = client.get(f"/invite/{token}")
    assert page.status_code == 200 and "Welcome" in page.text
    done = client.post(f"/invite/{token}", data={"csrf": csrf_of(page.text), "password": PASSWORD,
                                                 "repeat": PASSWORD}, follow_redirects=False)  # fmt: skip
    assert done.status_code == 303 and done.headers["location"] == "/review", done.text
    return client


@pytest.fixture(scope="module")
def reviewers(app: Any, world: dict[str, Any]) -> dict[str, TestClient]:
    return {name: accept(app, token) for name, token in world["tokens"].items()}


def test_a_used_or_expired_invitation_is_refused(app: Any, world: dict[str, Any],
                                                 reviewers: dict[str, TestClient]) -> None:
    used = client_for(app).get(f"/invite/{world['tokens']['ana']}")
    assert used.status_code == 404 and "not valid" in used.text
    with open_store(world["db"]) as store:
        token = invite(store, "late", "reviewer", lifetime=timedelta(days=1))
        with store.session() as session:  # a day passes twice
            session.execute(update(Invitation).where(Invitation.name == "late")
                            .values(expires_at=datetime.now(UTC) - timedelta(days=1)))
    client = client_for(app)
    assert client.get(f"/invite/{token}").status_code == 404
    form = client.get("/login")  # a session and its token, then the post on the expired one
    refused = client.post(f"/invite/{token}", data={"csrf": csrf_of(form.text), "password": PASSWORD,
                                                    "repeat": PASSWORD})  # fmt: skip
    assert refused.status_code == 404 and "not valid" in refused.text
    assert sign_in(client_for(app), "late").status_code == 401  # no account was made
    assert client_for(app).get("/invite/" + "A" * 43).status_code == 404  # never existed: the same answer


def test_forms_without_or_with_a_wrong_csrf_token_are_403(app: Any, world: dict[str, Any],
                                                          reviewers: dict[str, TestClient]) -> None:
    ana = reviewers["ana"]
    item = online_batch_first(world, "ana", "es-a")
    url = f"/review/{world['uids']['es-a']}/{item}"
    good = csrf_of(ana.get(url).text)
    other = csrf_of(reviewers["ben"].get("/review").text)  # a real token, of another session
    for data in ({}, {"csrf": ""}, {"csrf": "0" * 64}, {"csrf": other}):
        response = ana.post(url, data={**data, "value": "2"})
        assert response.status_code == 403 and "CSRF" in response.text, data
    assert ana.post("/logout", data={}).status_code == 403
    anonymous = client_for(app)
    assert anonymous.post("/login", data={"name": "root", "password": PASSWORD}).status_code == 403
    assert ana.post(url, data={"csrf": good, "value": "2"}, follow_redirects=False).status_code == 303


def online_batch_first(world: dict[str, Any], reviewer: str, campaign: str) -> str:
    with open_store(world["db"]) as store:
        return online_batch(store, world["uids"][campaign], reviewer).groups[0].items[0].hash


def test_a_reviewer_reaches_only_their_items_and_no_admin_page(app: Any, world: dict[str, Any],
                                                               reviewers: dict[str, TestClient]) -> None:
    ana, ben = reviewers["ana"], reviewers["ben"]
    bens_item = online_batch_first(world, "ben", "es-b")
    url = f"/review/{world['uids']['es-b']}/{bens_item}"
    assert ben.get(url).status_code == 200
    assert ana.get(url).status_code == 404 and ana.get(f"/review/{world['uids']['es-b']}").status_code == 404
    token = csrf_of(ana.get("/review").text)
    assert ana.post(url, data={"csrf": token, "value": "0"}).status_code == 404
    with open_store(world["db"]) as store, pytest.raises(LookupError):  # nothing was written for ana on es-b
        online_batch(store, world["uids"]["es-b"], "ana")
    for page in ("/admin", "/admin/accounts", "/admin/campaigns/es-a", "/api/admin/campaigns/es-a"):
        assert ana.get(page, follow_redirects=False).status_code == 403, page
    assert ana.post("/admin/invitations", data={"csrf": token, "name": "eve", "role": "admin"}).status_code == 403
    assert ana.post("/admin/campaigns", data={"csrf": token, "run": world["hashes"]["near"]}).status_code == 403


def test_anonymous_viewers_reach_no_review_or_admin_route(app: Any, world: dict[str, Any]) -> None:
    viewer = client_for(app)
    item = online_batch_first(world, "ben", "es-b")
    url = f"/review/{world['uids']['es-b']}/{item}"
    for page in ("/review", url, "/admin", "/admin/campaigns/es-a"):
        response = viewer.get(page, follow_redirects=False)
        assert response.status_code == 303 and response.headers["location"] == "/login", page
    assert viewer.get("/api/admin/campaigns/es-a").status_code == 401
    token = csrf_of(viewer.get("/login").text)  # a viewer with a (pre-sign-in) session and its token
    assert viewer.post(url, data={"csrf": token, "value": "3"}).status_code == 401
    assert viewer.post(url, data={"value": "3"}).status_code == 403
    assert viewer.get("/").status_code == 200  # the public pages stay public


def test_sign_in_rate_limit_gives_no_user_enumeration_oracle(app: Any, world: dict[str, Any]) -> None:
    make_admin_if_missing(app, "victim")
    client = client_for(app)

    def attempt(name: str, password: str) -> tuple[int, str]:
        token = csrf_of(client.get("/login").text)
        response = client.post("/login", data={"csrf": token, "name": name, "password": password})
        return response.status_code, re.sub(r'value="[^"]*"', "", response.text)  # the echoed name aside

    unknown, wrong = attempt("nobody", "x" * 12), attempt("victim", "x" * 12)
    assert unknown == wrong and unknown[0] == 401 and "name or the password is wrong" in unknown[1]
    for _ in range(4):  # five failures lock the name, whether or not an account has it
        attempt("victim", "y" * 12), attempt("nobody", "y" * 12)
    locked_real, locked_unknown = attempt("victim", PASSWORD), attempt("nobody", PASSWORD)
    assert locked_real == locked_unknown and locked_real[0] == 429 and "Too many" in locked_real[1]
    assert sign_in(client_for(app), "Victim").status_code == 429  # the lock is on the name in any case


def test_session_cookie_flags_and_a_new_id_at_sign_in(app: Any) -> None:
    make_admin_if_missing(app, "carol")
    for base, secure in (("http://testserver", False), ("https://testserver", True)):
        client = client_for(app, base)
        form = client.get("/login")
        before = form.cookies.get(COOKIE)
        header = form.headers["set-cookie"]
        assert "HttpOnly" in header and "SameSite=strict" in header.replace("Strict", "strict")
        assert ("Secure" in header) is secure, header
        signed = sign_in(client, "carol")
        assert signed.status_code == 303 and signed.headers["location"] == "/admin"
        after = signed.cookies.get(COOKIE)
        assert before and after and before != after  # no fixation: the planted id is worthless after sign-in
        planted = client_for(app, base)
        planted.cookies.set(COOKIE, before)
        assert planted.get("/admin", follow_redirects=False).status_code == 303
        assert client.get("/admin").status_code == 200
    forced = create_app(app.state.store.engine.url.render_as_string(False), cookie_secure=True)
    with TestClient(forced) as plain:
        assert "Secure" in plain.get("/login").headers["set-cookie"]  # behind a TLS proxy on 127.0.0.1


def make_admin_if_missing(app: Any, name: str) -> None:
    from mt_eval.accounts.users import add_account, list_accounts

    if name not in {a.name for a in list_accounts(app.state.store)}:
        add_account(app.state.store, name, "admin", PASSWORD)


def test_comments_are_inert_and_the_lens_reads_stored_ratings(app: Any, world: dict[str, Any], cards: dict[str, Path],
                                                              reviewers: dict[str, TestClient]) -> None:
    uid, db = world["uids"]["es-a"], world["db"]
    known = truths(db)
    with open_store(db) as store, store.session() as session:
        batch = online_batch(store, uid, "ana")
        where = {h: (c, e) for h, c, e in session.execute(  # item → (method, entry): the test's own knowledge
            select(ReviewItem.item_hash, Card.method_name, ReviewItem.entry_id)
            .join(Card, Card.id == ReviewItem.card_id).where(ReviewItem.kind == "output"))}
    items = [i.hash for g in batch.groups for i in g.items]
    chrf = {m: {r["entry_id"]: r["entry_chrf"] for r in json.loads(cards[m].read_text())["results"]}
            for m in ("near", "half")}  # per-entry chrF++ read from the card files themselves
    planted_reject = next(h for h in items[1:] if h in where and where[h][0] == "near"
                          and chrf["near"][where[h][1]] >= LENS_HIGH)
    halves = [h for h in items if h in where and where[h][0] == "half"]
    planted_accept = min(halves, key=lambda h: chrf["half"][where[h][1]])
    assert chrf["half"][where[planted_accept][1]] < LENS_LOW
    first = next(h for h in items if h not in batch.rated and h not in (planted_reject, planted_accept))
    # (an item ana has not rated yet: with the reference shown after rating, a first rating stands)
    given = {name: {h: attentive(known[h], n + 5 * k) for n, h in enumerate(items)}  # people differ
             for k, name in enumerate(("ana", "bob", "cid"))}
    for name in given:  # everyone rejects a good-scoring output and accepts a poor-scoring one
        given[name] |= {planted_reject: 0, planted_accept: 3, first: 0 if name == "ana" else 3}
    ana = reviewers["ana"]  # ana rates the first item on the page, with a script as her comment
    token = csrf_of(ana.get(f"/review/{uid}/{first}").text)
    posted = ana.post(f"/review/{uid}/{first}", data={"csrf": token, "value": "0", "comment": XSS, "seconds": "4.5"})
    assert posted.status_code == 200 and "Rated 0" in posted.text
    with open_store(db) as store:
        for name, ratings in given.items():
            if name != "ana":  # bob and cid (invited too) rate offline-style, through the domain
                invited_reviewer(db, name)
                assign(store, "es-a", name)
            for item, value in ratings.items():
                if name != "ana" or (item != first and item not in batch.rated):  # a first rating stands
                    record_rating(store, uid, name, item, value)
    for seed, name in enumerate(given):  # ratings made in a loop look scripted: time them like people
        humanise(db, name, seed)
    admin = client_for(app)
    assert sign_in(admin, "root").status_code == 303
    report = admin.get("/admin/campaigns/es-a")
    assert report.status_code == 200 and XSS not in report.text and "&lt;script&gt;" in report.text
    data = admin.get("/api/admin/campaigns/es-a").json()
    assert all(c["passed"] for c in data["checks"]) and len(data["checks"]) == 3
    assert [d["comments"] for d in data["adjudication"] if d["item_hash"] == first] == [{"ana": XSS}]
    expected = set()  # the lens recomputed from what was rated and the cards' own per-entry chrF++
    for item, (method, entry) in where.items():
        if item in items:
            human = statistics.median(given[name][item] for name in given)
            if chrf[method][entry] >= LENS_HIGH and human == 0:
                expected.add((world["hashes"][method], entry, "metric high, human reject"))
            elif chrf[method][entry] < LENS_LOW and human >= 2:
                expected.add((world["hashes"][method], entry, "metric low, human acceptable"))
    near, half = world["hashes"]["near"], world["hashes"]["half"]
    lens = admin.get(f"/api/compare?run={near}&run={half}").json()["lens"]
    assert {(r["run"], r["entry_id"], r["kind"]) for r in lens["rows"]} == expected and len(expected) >= 2
    assert (near, where[planted_reject][1], "metric high, human reject") in expected
    assert lens["rated"] == len(set(where) & set(items)) and all(r["ratings"] == 3 for r in lens["rows"])
    page = admin.get(f"/compare?run={near}&run={half}")
    assert page.status_code == 200 and page.text.count('<tr data-run="') == len(expected)


def test_a_campaign_on_secret_segments_is_refused_on_the_web(app: Any, world: dict[str, Any]) -> None:
    admin = client_for(app)
    assert sign_in(admin, "root").status_code == 303
    token = csrf_of(admin.get("/admin").text)
    refused = admin.post("/admin/campaigns", data={"csrf": token, "run": world["hashes"]["plain"], "size": "5"})
    assert refused.status_code == 400 and "gold_standard or held_out" in refused.text
    with open_store(world["db"]) as store, store.session() as session:  # a governance store reviews them
        session.add(StoreSetting(name=SECRET_REVIEW_SETTING, value="allow"))
    allowed = admin.post("/admin/campaigns", data={"csrf": token, "run": world["hashes"]["plain"], "size": "5",
                                                   "name": "es-gov"}, follow_redirects=False)  # fmt: skip
    assert allowed.status_code == 303 and allowed.headers["location"] == "/admin/campaigns/es-gov"
    with open_store(world["db"]) as store, store.session() as session:
        session.execute(delete(StoreSetting).where(StoreSetting.name == SECRET_REVIEW_SETTING))
    made = admin.post("/admin/campaigns", data={"csrf": token, "run": world["hashes"]["near"], "size": "30",
                                                "name": "es-web"}, follow_redirects=False)  # fmt: skip
    assert made.status_code == 303 and made.headers["location"] == "/admin/campaigns/es-web"
    invited = admin.post("/admin/invitations", data={"csrf": token, "name": "dan", "role": "reviewer",
                                                     "campaign": "es-web"})  # fmt: skip
    link = re.search(r"http://testserver/invite/([A-Za-z0-9_-]+)", invited.text)
    assert invited.status_code == 200 and link
    dan = accept(app, link.group(1))
    assert "es-web" in dan.get("/review").text and "es-a" not in dan.get("/review").text
    page = admin.get("/admin/campaigns/es-a")
    assert '<option>dan</option>' in page.text and '<option>ana</option>' not in page.text  # ana is already on it
    added = admin.post(f"/admin/campaigns/{world['uids']['es-a']}/reviewers",
                       data={"csrf": token, "reviewer": "dan"}, follow_redirects=False)
    assert added.status_code == 303 and "es-a" in dan.get("/review").text
    for who in ("root", "nobody"):  # an admin or an unknown name is no reviewer
        refused = admin.post("/admin/campaigns/es-a/reviewers", data={"csrf": token, "reviewer": who})
        assert refused.status_code == 400 and "no active reviewer" in refused.text

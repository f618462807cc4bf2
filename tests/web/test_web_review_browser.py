"""The online review in a real Chromium against ``mt-eval serve`` (a subprocess, a free port): the first
admin is made with ``mt-eval accounts add``, signs in, creates a campaign from a published run and
invites a reviewer; the reviewer accepts, sets a password and rates with the keys 0–3 (the reference
appears only once an item is rated, progress moves, the seconds are stored); three more reviewers send
offline result files (``mt-eval review import``), one of them careless (always 3) and excluded by the
control items; the admin's report shows the gate accept the run (careless reviewer not counted) and
the leaderboard's tier changes from "awaiting review" to the tier. Screenshots are kept in the test's
temporary folder."""

from __future__ import annotations

import json
import random
import re
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page
from review_web_helpers import PASSWORD, attentive, humanise, invited_reviewer, publish, running_server, truths
from sqlalchemy import select
from typer.testing import CliRunner

from mt_eval.cli import app as cli_app
from mt_eval.review.campaign import assign
from mt_eval.review.offline import RESULT_FORMAT
from mt_eval.review.online import online_batch, record_rating
from mt_eval.store import open_store
from mt_eval.store.models import ReviewCampaign, ReviewRating

# the slow stage (make test-slow; CI's second stage runs it on every submission): headless Chromium
pytestmark = pytest.mark.slow

RATED_IN_BROWSER = 3


@pytest.fixture(scope="module")
def setup(cards: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    folder = tmp_path_factory.mktemp("web-review-browser")
    db = str(folder / "store.db")
    hashes = publish(db, cards["near"])
    made = CliRunner().invoke(cli_app, ["accounts", "add", "root", "--role", "admin", "--db", db,
                                        "--password-stdin"], input=PASSWORD + "\n")  # fmt: skip
    assert made.exit_code == 0, made.output
    with running_server(db) as base:
        yield {"db": db, "near": hashes["near"], "base": base, "folder": folder}


def watch(page: Page, problems: list[str]) -> None:
    """Record console errors, page errors and dialogs (an alert would mean a script ran)."""
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))

    def dialog(d: Dialog) -> None:
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)


def board_tier(base: str, run: str) -> str:
    with urllib.request.urlopen(f"{base}/api/leaderboard", timeout=30) as response:
        rows = json.loads(response.read())
    return str(next(r for r in rows if r["run_card_hash"] == run)["quality_tier_shown"])


def offline_reviewer(db: str, name: str, folder: Path, *, careless: bool = False) -> None:
    """A reviewer the admin invited (with an identity of their own) who works offline: their batch (as
    ``review export`` makes it), filled in attentively at a person's pace (``careless``: every item rated 3,
    controls included), imported with ``mt-eval review import``."""
    invited_reviewer(db, name)
    with open_store(db) as store:
        batch = assign(store, "es-live", name)
    known = truths(db)
    items = [i.hash for g in batch.groups for i in g.items]
    shift = sum(map(ord, name))  # people differ: not one answer key under several names
    values = [3 if careless else attentive(known[h], n + shift) for n, h in enumerate(items)]
    rng = random.Random(name)
    at = datetime(2026, 11, 23, 9, tzinfo=UTC) + timedelta(minutes=rng.uniform(0, 600))
    ratings = []
    for h, v in zip(items, values, strict=True):
        seconds = round(rng.uniform(4, 25), 3)
        at += timedelta(seconds=seconds)
        ratings.append({"item": h, "value": v, "comment": None, "seconds": seconds, "rated_at": at.isoformat()})
    result = {"format": RESULT_FORMAT, "campaign": batch.uid, "reviewer": name, "token": batch.token,
              "ratings": ratings}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(result), encoding="utf-8")
    imported = CliRunner().invoke(cli_app, ["review", "import", str(path), "--db", db])
    assert imported.exit_code == 0, imported.output


def test_the_review_flow_in_a_real_browser(setup: dict[str, Any], browser: Browser) -> None:
    base, db, near, shots = setup["base"], setup["db"], setup["near"], setup["folder"]
    problems: list[str] = []
    tier_before = board_tier(base, near)
    assert tier_before.endswith("awaiting review"), tier_before

    admin = browser.new_context().new_page()
    watch(admin, problems)
    admin.goto(base + "/admin")  # not signed in: sent to the form
    assert admin.url == base + "/login"
    admin.fill("input[name=name]", "root")
    admin.fill("input[name=password]", PASSWORD)
    admin.click("#login-form button")
    assert admin.url == base + "/admin"
    admin.check(f"input[name=run][value='{near}']")
    admin.fill("#campaign-form input[name=name]", "es-live")
    admin.fill("#campaign-form input[name=size]", "30")
    admin.click("#campaign-form button")
    assert admin.url == base + "/admin/campaigns/es-live"
    admin.goto(base + "/admin")
    admin.fill("#invite-form input[name=name]", "ana")
    admin.fill("#invite-form input[name=identity]", "Ana@Example.org")  # the gate counts verified identities
    admin.select_option("#invite-form select[name=role]", "reviewer")
    admin.select_option("#invite-form select[name=campaign]", label="es-live")
    admin.click("#invite-form button")
    link = admin.locator("#invitation-link").inner_text()
    assert re.fullmatch(re.escape(base) + r"/invite/[A-Za-z0-9_-]{43}", link), link

    reviewer = browser.new_context().new_page()
    watch(reviewer, problems)
    reviewer.goto(link)
    reviewer.fill("input[name=password]", PASSWORD)
    reviewer.fill("input[name=repeat]", PASSWORD)
    reviewer.click("#invite-form button")
    assert reviewer.url == base + "/review"
    reviewer.click("#my-campaigns a")
    known = truths(db)
    total = len(known)
    for n in range(RATED_IN_BROWSER):
        item = reviewer.url.rsplit("/", 1)[1]
        assert reviewer.locator("#reference").count() == 0 and reviewer.locator("#reference-hidden").is_visible()
        assert reviewer.locator("#progress-text").inner_text() == f"{n} of {total} rated"
        assert "near" not in reviewer.locator("main").inner_text()  # blind: no method name
        reviewer.wait_for_timeout(300)  # a reviewer reads before rating: the timing must see it
        value = attentive(known[item], n)
        reviewer.keyboard.press(str(value))  # the key rates and sends
        reviewer.wait_for_selector("#rated")
        assert reviewer.locator("#rated").inner_text().startswith(f"Rated {value}")
        assert reviewer.locator("#reference").is_visible()  # shown now that it is rated
        assert reviewer.locator("#progress-text").inner_text() == f"{n + 1} of {total} rated"
        if n == 0:
            reviewer.screenshot(path=str(shots / "rated-item.png"), full_page=True)
        with reviewer.expect_navigation():
            reviewer.keyboard.press("n")
        assert reviewer.url.rsplit("/", 1)[1] != item
    with open_store(db) as store, store.session() as session:
        seconds = session.scalars(select(ReviewRating.seconds)).all()
        assert len(seconds) == RATED_IN_BROWSER and all(s is not None and 0.3 <= s < 60 for s in seconds), seconds
        uid = session.scalars(select(ReviewCampaign.uid).where(ReviewCampaign.name == "es-live")).one()
        batch = online_batch(store, uid, "ana")  # the rest of ana's batch through the domain
        for n, item in enumerate(i.hash for g in batch.groups for i in g.items):
            if item not in batch.rated:
                record_rating(store, batch.campaign.uid, "ana", item, attentive(known[item], n), seconds=4.0)
    humanise(db, "ana", 0)  # ratings sent in a loop are stamped within a second: a script, to quality control

    offline_reviewer(db, "bob", shots)
    assert board_tier(base, near) == tier_before  # two reviewers are not a community yet
    offline_reviewer(db, "dan", shots, careless=True)  # rates everything 3: the controls give them away
    assert board_tier(base, near) == tier_before  # a careless third reviewer does not complete the community
    offline_reviewer(db, "cid", shots)
    admin.goto(base + "/admin/campaigns/es-live")
    admin.screenshot(path=str(shots / "campaign-report.png"), full_page=True)
    verdict = admin.locator(f"#verdicts tr[data-run='{near}']")
    assert verdict.locator("td.verdict").inner_text() == "accepted"
    assert verdict.locator("td.num").first.inner_text() == "3"  # ana, bob, cid: dan is not counted
    assert re.fullmatch(r"\d+\.\d% \[\d+\.\d%, \d+\.\d%\]", verdict.locator("td.reject").inner_text())
    assert admin.locator("#reviewers tbody tr").count() == 4
    outcome = {row.locator("td").first.inner_text(): row.locator("td").last.inner_text()
               for row in admin.locator("#reviewers tbody tr").all()}
    assert outcome["dan"].startswith("excluded") and all(outcome[n].startswith("passed") for n in ("ana", "bob", "cid"))
    assert "3 reviewers" in admin.locator("#agreement").inner_text()
    assert board_tier(base, near) == tier_before.removesuffix(" — awaiting review")
    admin.goto(base + "/")
    shown = re.compile("^" + re.escape(board_tier(base, near)) + "$")  # the page's tier cell, not "… awaiting"
    assert admin.locator("table.leaderboard .tier", has_text=shown).count() == 1
    assert not problems, problems


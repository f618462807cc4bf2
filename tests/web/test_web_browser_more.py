"""More of the web app in a real Chromium against ``mt-eval serve`` (subprocesses on free ports):

- three runs compared: picked with the leaderboard's check boxes, the page shows the three systems in the
  order picked (the first the baseline), two paired rows per metric, and each run's chrF++ as its card
  records it;
- reviewers' comments carrying script payloads are shown as text on the admin's campaign report: an
  init script arms a flag that any injected script would set, ``alert`` is a dialog the test records, and
  no element of the payloads exists in the page.

Screenshots are kept as artefacts in the test's temporary folder and, when ``MT_EVAL_ARTEFACTS`` names
a folder, copied there (CI uploads it).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page
from review_web_helpers import PASSWORD, attentive, humanise, invited_reviewer, publish, running_server, truths
from typer.testing import CliRunner

from mt_eval.cli import app as cli_app
from mt_eval.review.campaign import assign, create_campaign
from mt_eval.review.online import record_rating
from mt_eval.store import open_store

# the slow stage (make test-slow; CI's second stage runs it on every submission): headless Chromium
pytestmark = pytest.mark.slow

# each calls __hit(name) if it runs; the init script defines __hit and records the names
PAYLOADS = {
    "script": "<script>__hit('script')</script>",
    "img": "<img src=x onerror=\"__hit('img')\">",
    "svg": "<svg onload=\"__hit('svg')\"></svg>",
    "iframe": "\"><iframe srcdoc=\"<script>parent.__hit('iframe')</script>\"></iframe>",
    "alert": "</p></td><script>alert('xss')</script>",
    "link": "<a id=xss-link href=\"javascript:__hit('link')\">link</a>",
}
TRAP = "window.__xss = []; window.__hit = (name) => window.__xss.push(name);"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("web-browser-shots")


def keep(page: Page, folder: Path, name: str) -> Path:
    """A full-page screenshot in ``folder`` and, when ``MT_EVAL_ARTEFACTS`` is set, a copy there."""
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    if os.environ.get("MT_EVAL_ARTEFACTS"):
        target = Path(os.environ["MT_EVAL_ARTEFACTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target / path.name)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def watched(browser: Browser) -> tuple[Page, list[str]]:
    """A page in a fresh context with the XSS trap armed; console errors, page errors and dialogs are
    recorded (an ``alert`` would be a script that ran)."""
    page = browser.new_context().new_page()
    page.add_init_script(TRAP)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))

    def dialog(d: Dialog) -> None:
        problems.append(f"dialog: {d.message}")
        d.dismiss()

    page.on("dialog", dialog)
    return page, problems


def test_three_runs_compared(board_db: str, cards: dict[str, Path], browser: Browser, shots: Path) -> None:
    picked = ["near", "truncated", "half"]
    data = {name: json.loads(cards[name].read_text(encoding="utf-8")) for name in picked}
    page, problems = watched(browser)
    with running_server(board_db) as base:
        page.goto(base + "/")
        for name in picked:  # the check boxes in the order a user would tick them
            page.check(f"section.board input[name=run][value='{data[name]['run_card_hash']}']")
        page.locator(f"section.board input[name=run][value='{data['near']['run_card_hash']}']").locator(
            "xpath=ancestor::form").locator("button[type=submit]").click()
        page.wait_for_url("**/compare?**")
        keep(page, shots, "compare-three")
        assert page.locator("h1").inner_text() == "Compare 3 runs"
        headers = page.locator("table.compare-scores thead th a").all_inner_texts()
        assert headers == picked, headers  # in the order ticked, the first the baseline
        assert page.locator("table.compare-scores thead th", has_text="(baseline)").inner_text().startswith("near")
        paired = page.locator("table.paired tbody tr")
        metrics = page.locator("table.compare-scores tbody tr").count()
        assert metrics >= 3 and paired.count() == 2 * metrics  # two challengers, every metric
        assert set(page.locator("table.paired tbody td:nth-of-type(1)").all_inner_texts()) == {"truncated", "half"}
        chrf = page.locator("table.compare-scores tbody tr", has=page.locator("th", has_text="chrF++"))
        shown = [float(t.split()[0]) for t in chrf.locator("td").all_inner_texts()]
        expected = [data[name]["scores"]["chrf_plus_plus"] for name in picked]
        assert shown == pytest.approx(expected, abs=0.01)
        assert shown[0] > shown[1] > shown[2]  # near > truncated > half, as the outputs were made
        assert page.evaluate("window.__xss") == []
    assert not problems, problems


@pytest.fixture(scope="module")
def commented(cards: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A store with one campaign on the ``near`` card; ana and bob rate attentively, except one output
    that ana rates 0 and bob 3 (so it is to adjudicate), each with every payload as a comment."""
    folder = tmp_path_factory.mktemp("web-xss-review")
    db = str(folder / "store.db")
    publish(db, cards["near"])
    made = CliRunner().invoke(cli_app, ["accounts", "add", "root", "--role", "admin", "--db", db,
                                        "--password-stdin"], input=PASSWORD + "\n")  # fmt: skip
    assert made.exit_code == 0, made.output
    with open_store(db) as store:
        summary = create_campaign(store, [json.loads(cards["near"].read_text(encoding="utf-8"))["run_card_hash"]],
                                  size=30, name="xss")  # fmt: skip
        known = truths(db)
        comment = " ".join(PAYLOADS.values())
        for name in ("ana", "bob"):
            invited_reviewer(db, name, campaign="xss")
        batches = {name: [i.hash for g in assign(store, "xss", name).groups for i in g.items]
                   for name in ("ana", "bob")}  # fmt: skip
        target = next(h for h in batches["ana"] if known[h][0] == "output" and h in batches["bob"])
        for reviewer, value in (("ana", 0), ("bob", 3)):
            for n, item in enumerate(batches[reviewer]):
                if item == target:
                    record_rating(store, summary.uid, reviewer, item, value, comment=f"{reviewer}: {comment}")
                else:
                    record_rating(store, summary.uid, reviewer, item, attentive(known[item], n), seconds=4.0)
    for seed, name in enumerate(("ana", "bob")):  # a loop's ratings look scripted: time them like people
        humanise(db, name, seed)
    return {"db": db}


def test_script_in_reviewer_comments_is_inert(commented: dict[str, Any], browser: Browser, shots: Path) -> None:
    page, problems = watched(browser)
    with running_server(commented["db"]) as base:
        page.goto(base + "/login")
        page.fill("input[name=name]", "root")
        page.fill("input[name=password]", PASSWORD)
        page.click("#login-form button")
        assert page.url == base + "/admin"
        page.goto(base + "/admin/campaigns/xss")
        page.wait_for_load_state("networkidle")
        keep(page, shots, "review-report-xss")
        # 0 of 30 entries rejected: the Wilson interval is [0, z²/(n + z²)] = [0, 0.1135]
        assert page.locator("#verdicts td.reject").inner_text() == "0.0% [0.0%, 11.4%]"
        assert "· 30 items · 2 reviewers" in page.locator("#agreement").inner_text()
        cell = page.locator("#adjudication td.text")
        assert cell.count() == 1  # the one output ana and bob disagree on
        text = cell.inner_text()
        for payload in PAYLOADS.values():  # shown as the reviewers typed it
            assert text.count(payload) == 2, payload
        assert page.locator("#adjudication script, #adjudication img, #adjudication svg, #adjudication iframe, "
                            "#xss-link").count() == 0  # fmt: skip
        assert page.evaluate("window.__xss") == []  # the trap is armed (the init script ran) and untouched
        assert page.evaluate("typeof window.__hit") == "function"
    assert not problems, problems

"""A real Chromium against ``mt-eval serve`` (uvicorn in a subprocess, a free port): pages render,
filters change the rows and the Pareto frontier, the run page shows its diff, nothing is requested
from another host, the console stays clean, and everything works with JavaScript off."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Dialog, Page
from web_helpers import XSS, raw_get, running_server

# the slow stage (make test-slow; CI's second stage runs it on every submission): headless Chromium
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(board_db: str) -> Iterator[str]:
    """``mt-eval serve`` on a free port, until the module ends."""
    with running_server(board_db) as base:
        yield base


@dataclass
class Watched:
    """A page with every request URL, console error and dialog it produced."""

    page: Page
    js: bool
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def check(self, base: str) -> None:
        outside = [u for u in self.requests if not (u.startswith(base + "/") or u.startswith("data:"))]
        assert not outside, outside
        assert not self.errors, self.errors
        assert not self.dialogs, self.dialogs


@pytest.fixture(params=[True, False], ids=["js", "no-js"])
def watched(request: pytest.FixtureRequest, browser: Browser) -> Iterator[Watched]:
    context = browser.new_context(java_script_enabled=request.param)
    page = context.new_page()
    seen = Watched(page, request.param)
    page.on("request", lambda r: seen.requests.append(r.url))
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda exc: seen.errors.append(str(exc)))

    def dialog(d: Dialog) -> None:  # an alert() would mean a card's script ran
        seen.dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", dialog)
    yield seen
    context.close()


def _api(base: str, path: str) -> Any:
    with urllib.request.urlopen(base + path, timeout=30) as response:
        return json.loads(response.read())


def test_leaderboard_filters_rows(server: str, watched: Watched) -> None:
    """A menu filter changes the rows (and the charts are drawn from the filtered rows: with every cost and
    latency unknown, each says so instead of drawing a point at 0)."""
    page = watched.page
    rows = _api(server, "/api/leaderboard")
    page.goto(server + "/")
    assert page.locator("table.leaderboard tbody tr").count() == sum(1 for r in rows if r["rank"])
    assert page.locator(f"text={XSS}").count() >= 1  # the hostile method name shows as text
    assert all(r["cost_per_entry_usd"] is None for r in rows)
    assert page.locator("svg.pareto").count() == 0
    assert page.locator("text=No card on this board has a measured cost per entry (USD).").count() >= 1
    prefix = "Not drawn, no measured cost per entry (USD) (declared or unknown): "
    notes = [t for t in page.locator("p.not-drawn").all_inner_texts() if t.startswith(prefix)]
    named = {name for t in notes for name in t.removeprefix(prefix).split(", ")}
    assert {r["method"] for r in rows if r["rank"]} <= named  # each card left out is named, none drawn at 0
    if watched.js:  # the menu submits itself
        with page.expect_navigation():
            page.select_option("select[name=model]", "truncated")
    else:
        page.select_option("select[name=model]", "truncated")
        page.click("form.filters button[type=submit]")
    page.wait_for_url("**model=truncated**")
    assert page.locator("table.leaderboard tbody tr").count() == 1
    assert page.locator("table.leaderboard .model").inner_text() == "truncated"
    watched.check(server)


def test_run_page_shows_the_diff_and_compare_works(server: str, watched: Watched, cards: dict[str, Path]) -> None:
    page = watched.page
    card = json.loads(cards["truncated"].read_text(encoding="utf-8"))
    page.goto(f"{server}/runs/{card['run_card_hash']}")
    assert page.locator("td.diff del").count() > 0  # truncated outputs lack reference characters
    assert page.locator("#entries-table tbody tr").count() == 100
    page.goto(server + "/")
    for name in ("near", "truncated"):  # the same profile (profile_b ranks beside them on chrF++, not comparable
        # on the composite: compare refuses it)
        run = json.loads(cards[name].read_text(encoding="utf-8"))["run_card_hash"]
        page.check(f'section.board input[name="run"][value="{run}"]')
    page.locator('section.board input[name="run"]').nth(0).locator("xpath=ancestor::form").locator(
        "button[type=submit]").click()
    page.wait_for_url("**/compare?**")
    assert page.locator("table.paired tbody tr").count() > 0
    watched.check(server)


def test_sorting_and_live_search_with_javascript(server: str, browser: Browser, cards: dict[str, Path]) -> None:
    page = browser.new_page()
    card = json.loads(cards["half"].read_text(encoding="utf-8"))
    page.goto(f"{server}/runs/{card['run_card_hash']}")
    page.click("#entries-table th:has-text('chrF++')")
    values = [float(v) for v in page.locator("#entries-table tbody td:last-child").evaluate_all(
        "cells => cells.map(c => c.dataset.value)")]
    assert values == sorted(values) and values[0] < values[-1]
    page.fill("#entry-search", card["results"][0]["source"][:30])
    assert page.locator("#entries-table tbody tr:not(.hidden)").count() == 1
    page.close()


def test_raw_traversal_requests_find_nothing(server: str) -> None:
    """Paths sent byte for byte (a browser or client library would normalise ``..`` first)."""
    for path in ("/static/../app.py", "/static/../../store/db.py", "/static/%2e%2e/common.py", "/static/..%5capp.py"):
        status, body = raw_get(server, path)
        assert status == 404, path
        assert "import" not in body, path

"""The leaderboard page in a real Chromium at a 1400 px wide window: every table fits (its scrollWidth within the
page's width, no horizontal scroll), a column that no row of its board has a value in is left out, the board
names its ranking key, and the composite and tier are still on every row (the spec's view).

The JSON API (``mt-eval leaderboard --json``'s rows) is the reference for which columns have values.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser
from web_helpers import running_server

# the slow stage (make test-slow; CI's second stage runs it on every submission): headless Chromium
pytestmark = pytest.mark.slow

WIDTH = 1400
OPTIONAL = {"cost / entry $": "cost_per_entry_usd", "latency s": "avg_latency_seconds",
            "cost-adjusted": "cost_adjusted"}  # fmt: skip
METRICS = {"chrF++": "chrf_plus_plus", "FST acceptance": "fst_acceptance_rate", "exact match": "exact_match_rate",
           "semantic": "semantic_score"}  # fmt: skip


@pytest.fixture(scope="module")
def server(board_db: str) -> Iterator[str]:
    with running_server(board_db) as base:
        yield base


def _rows(base: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(base + "/api/leaderboard", timeout=30) as response:
        rows: list[dict[str, Any]] = json.loads(response.read())
    return rows


def test_leaderboard_fits_1400px_and_hides_empty_columns(server: str, browser: Browser,
                                                         tmp_path: Path) -> None:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(server + "/")
    shot = tmp_path / "leaderboard-1400.png"
    page.screenshot(path=str(shot), full_page=True)
    if os.environ.get("MT_EVAL_ARTEFACTS"):
        target = Path(os.environ["MT_EVAL_ARTEFACTS"])
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy2(shot, target / shot.name)
    tables = page.locator("table.leaderboard")
    assert tables.count() >= 2
    widths = tables.evaluate_all("ts => ts.map(t => [t.scrollWidth, t.parentElement.clientWidth])")
    assert all(scroll <= min(room, WIDTH) for scroll, room in widths), widths
    assert page.evaluate("document.documentElement.scrollWidth") <= WIDTH

    rows = _rows(server)
    for section in page.locator("section.board").all():
        sha = str(section.get_attribute("data-dataset"))
        mine = [r for r in rows if r["dataset_sha256"] == sha and r["rank"]]
        if not mine or section.locator("table.leaderboard").count() == 0:
            continue
        headers = [" ".join(h.split()) for h in section.locator("table.leaderboard thead th").all_inner_texts()]
        for header, field in OPTIONAL.items():
            has = any(r[field] is not None for r in mine)
            assert (header in headers) == has, (header, headers)
        for header, metric in METRICS.items():
            has = any((r["scores"].get(metric) or {}).get("value") is not None for r in mine)
            assert any(h.startswith(header) for h in headers) == has, (header, headers)
        assert any(h.startswith("composite") for h in headers)  # the spec's view stays, valued or not
        assert "quality tier" in " ".join(headers)
        caption = " ".join(section.locator("table.leaderboard caption").inner_text().split())
        assert "ranked by" in caption, caption
        cells = section.locator("table.leaderboard tbody tr").count()
        assert cells == len(mine)
    page.close()


def test_ranking_key_column_is_marked(server: str, browser: Browser) -> None:
    """The registered NTREX board ranks by chrF++: its header says so; the composite header says it is the spec's."""
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(server + "/?dataset=ntrex128-eng-spa-demo")
    key = page.locator("table.leaderboard thead th.key")
    assert key.count() == 1 and key.inner_text().startswith("chrF++")
    caption = " ".join(page.locator("table.leaderboard caption").inner_text().split())
    assert "ranked by chrF++" in caption and "composite" in caption
    page.close()


def test_switching_the_key_reranks_a_running_app(cards: dict[str, Path], tmp_path: Path) -> None:
    """Boards are remembered per state of the store: switching the dataset's key (no card published) must
    show the new ranking at once, as the CLI does."""
    from fastapi.testclient import TestClient
    from web_helpers import board_json, cli, put_cards

    from mt_eval.web.app import create_app

    db = str(tmp_path / "board.db")
    put_cards(db, cards["near"], cards["profile_b"], cards["half"])
    with TestClient(create_app(db, n_resamples=200)) as client:
        by_chrf = {r["method"]: r["rank"] for r in client.get("/api/leaderboard").json()}
        assert by_chrf["profile_b"] is not None  # chrF++ does not depend on the profile
        done = cli("dataset", "primary-metric", "ntrex128-eng-spa-demo", "composite", "--db", db)
        assert done.exit_code == 0, done.output
        rows = client.get("/api/leaderboard").json()
        assert {r["method"]: r["rank"] for r in rows}["profile_b"] is None  # another profile's composite
        assert [r["run_card_hash"] for r in rows] == [r["run_card_hash"] for r in board_json(db)]

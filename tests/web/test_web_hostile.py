"""Hostile cards and requests: scripts stay text, secret segments stay secret, bad input is a 4xx.

Every secret text of the corpus carries a marker word (``secretmark<id>``), so a response leaks a
secret exactly when the marker appears in its body, whatever escaping it went through.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_helpers import XSS

from mt_eval.web.app import create_app

ZERO = "0" * 64


@pytest.fixture(scope="module")
def client(board_db: str) -> Iterator[TestClient]:
    with TestClient(create_app(board_db, n_resamples=200), raise_server_exceptions=False) as test_client:
        yield test_client


def _hash(card: Path) -> str:
    return str(json.loads(card.read_text(encoding="utf-8"))["run_card_hash"])


@pytest.fixture(scope="module")
def hashes(cards: dict[str, Path], secret_cards: dict[str, Any]) -> dict[str, str]:
    return {name: _hash(p) for name, p in {**cards, **secret_cards["cards"]}.items()}


def test_a_script_in_a_card_renders_as_text(client: TestClient, hashes: dict[str, str]) -> None:
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    pages = ["/", f"/runs/{hashes['hostile']}",
             f"/compare?run={hashes['hostile']}&run={hashes['plain']}"]  # fmt: skip
    for url in pages:
        response = client.get(url)
        assert response.status_code == 200, url
        assert XSS not in response.text and escaped in response.text, url
        assert "script-src 'self'" in response.headers["content-security-policy"]
    api = client.get(f"/api/runs/{hashes['hostile']}").json()
    assert api["method"]["name"] == XSS  # the API gives the value as it is; JSON is not HTML


@pytest.mark.parametrize("path", ["/static/../app.py", "/static/..%2fapp.py", "/static/%2e%2e/common.py",
                                  "/static/%2e%2e%2f%2e%2e%2fstore/db.py", "/static//etc/passwd",
                                  "/static/..\\app.py"])  # fmt: skip
def test_static_paths_cannot_leave_the_folder(client: TestClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404, path
    assert "import" not in response.text and "root:" not in response.text


def test_unknown_hashes_and_names_are_404(client: TestClient, hashes: dict[str, str]) -> None:
    for url in (f"/runs/{ZERO}", f"/api/runs/{ZERO}", f"/api/runs/{ZERO}/entries", "/datasets/no-such-set",
                f"/api/compare?run={ZERO}&run={hashes['near']}", f"/compare?run={hashes['near']}&run={ZERO}"):
        response = client.get(url)
        assert response.status_code == 404, url
        assert "not in this store" in response.text, url


@pytest.mark.parametrize("url,status", [
    ("/?limit=0", 422), ("/?limit=abc", 422), ("/api/leaderboard?limit=99999", 422), ("/?sort=nope", 400),
    ("/api/leaderboard?sort=composite%27%3B%20DROP%20TABLE%20run_cards%3B--", 400), ("/?complete=maybe", 422),
    ("/?dataset=" + "x" * 400, 422), ("/runs/not-a-hash", 422), ("/api/runs/" + "A" * 64, 422),
    ("/runs/{near}?difficulty=9", 422), ("/api/runs/{near}/entries?offset=-1", 422),
    ("/api/runs/{near}/entries?limit=100000", 422), ("/api/compare?run={near}", 422),
    ("/api/compare?run=abc&run=def", 400), ("/compare?run={near}&run={near}", 400),
    ("/api/compare?" + "&".join(f"run={i:064x}" for i in range(9)), 422),
    ("/api/compare?run={near}&run={plain}", 400),  # different datasets: not comparable
    ("/api/runs/{near}/entries?q=%00", 400), ("/api/runs/{near}/entries?q=%ff%fe", 200), ("/?tier=%3Cscript%3E", 200),
])  # fmt: skip
def test_bad_parameters_are_refused_clearly(client: TestClient, hashes: dict[str, str], url: str, status: int) -> None:
    response = client.get(url.format(**hashes))
    assert response.status_code == status, (url, response.text[:300])
    if status == 400:
        detail = response.json()["detail"] if url.startswith("/api/") else response.text
        assert detail and "Traceback" not in detail


def test_secret_segments_never_leave_the_store(client: TestClient, hashes: dict[str, str],
                                               secret_cards: dict[str, Any]) -> None:
    secret = [e for e in secret_cards["entries"] if e["segment"] in ("gold_standard", "held_out")]
    word = max((w for w in secret[0]["source"].split() if "mark" not in w), key=len)  # a secret word to search
    runs = [hashes[n] for n in ("plain", "hostile", "partial")]
    together = "&".join(f"run={h}" for h in runs)
    urls = ["/", "/?dataset=secret-demo", "/api/leaderboard", "/api/pareto", "/api/facets", "/datasets",
            "/datasets/secret-demo", "/api/datasets", "/api/datasets/secret-demo", "/openapi.json", "/api",
            f"/compare?{together}", f"/api/compare?{together}"]  # fmt: skip
    for h in runs:
        urls += [f"/runs/{h}", f"/api/runs/{h}", f"/api/runs/{h}/entries?limit=1000", f"/runs/{h}?segment=held_out",
                 f"/api/runs/{h}/entries?segment=gold_standard", f"/api/runs/{h}/entries?q={word}",
                 f"/runs/{h}?q={word}", f"/api/runs/{h}/entries?q={secret[0]['id']}"]  # fmt: skip
    shown = 0
    for url in urls:
        response = client.get(url)
        assert response.status_code == 200, url
        assert "secretmark" not in response.text, url
        shown += "pubmark" in response.text
    assert shown >= 8  # run pages, entries and comparisons show the public entries: the grep would see a leak
    entries = client.get(f"/api/runs/{runs[0]}/entries?limit=1000").json()
    assert {e["segment"] for e in entries["entries"]} == {"development"} and entries["matched"] == 6
    assert client.get(f"/api/runs/{runs[0]}").json()["entry_counts"] == {"total": 12, "shown": 6, "secret": 6}


SQL_PAYLOADS = ("' OR '1'='1", "x'; DROP TABLE run_cards;--", "%' OR 1=1 --", '") UNION SELECT card FROM run_cards--')


@pytest.mark.parametrize("param", ["dataset", "method_class", "tier", "verification", "model", "sort"])
def test_sql_through_every_filter_and_sort_is_only_text(client: TestClient, hashes: dict[str, str],
                                                         param: str) -> None:
    """Every leaderboard filter and the sort key reach the database as bound values or a whitelist: an SQL
    payload matches nothing (or is refused as an unknown sort), never widens the result, and the store is
    intact afterwards (the same rows as before)."""
    before = client.get("/api/leaderboard").json()
    for payload in SQL_PAYLOADS:
        response = client.get("/api/leaderboard", params={param: payload})
        assert response.status_code in (200, 400), (param, payload, response.text[:200])
        if response.status_code == 200:
            assert response.json() == []  # matches nothing: the payload was a value, not SQL
        entries = client.get(f"/api/runs/{hashes['near']}/entries", params={"q": payload})
        assert entries.status_code == 200 and entries.json()["entries"] == []  # a search for the text itself
    assert client.get("/api/leaderboard").json() == before

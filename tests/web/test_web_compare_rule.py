"""The compare page says which rule made each verdict: a p of 0.032 read "not significant" with no reason
(the rule was the Holm-adjusted p, or an interval of Δ that includes 0, stated nowhere near it). Each
verdict is checked against the rule recomputed from the JSON API's numbers (Scoring Spec §8.2)."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from mt_eval.web.app import create_app

NAMES = ("near", "truncated", "half")


@pytest.fixture(scope="module")
def client(board_db: str) -> Iterator[TestClient]:
    with TestClient(create_app(board_db, n_resamples=200)) as test_client:
        yield test_client


def _query(cards: dict[str, Path], names: tuple[str, ...]) -> str:
    return "&".join(f"run={json.loads(cards[n].read_text(encoding='utf-8'))['run_card_hash']}" for n in names)


def _verdicts(page: str) -> list[str]:
    table = page.split('<table class="grid paired">', 1)[1].split("</table>", 1)[0]
    return [html.unescape(v) for v in re.findall(r'<td class="verdict">(.*?)</td>', table)]


@pytest.mark.parametrize("names", [NAMES, NAMES[:2]], ids=["three", "two"])
def test_every_verdict_names_its_rule(client: TestClient, cards: dict[str, Path], names: tuple[str, ...]) -> None:
    query = _query(cards, names)
    page = client.get(f"/compare?{query}")
    assert page.status_code == 200, page.text
    comparison = client.get(f"/api/compare?{query}").json()["comparison"]
    verdicts = _verdicts(page.text)
    assert len(verdicts) == len(comparison["paired"]) > 0
    holm = len(names) > 2
    label = "Holm-adjusted p" if holm else "p"
    rule = html.unescape(re.search(r'<p id="rule">(.*?)</p>', page.text, re.S).group(1))  # type: ignore[union-attr]
    assert "α = 0.05" in rule and "95% interval of Δ excludes 0" in rule and "paired bootstrap" in rule
    assert ("Holm-adjusted across the 2 systems" in rule) == holm
    for row, verdict in zip(comparison["paired"], verdicts, strict=True):
        p, lo, hi = row["p_adjusted"], row["ci_lower"], row["ci_upper"]
        expected = bool(row["delta"]) and p is not None and p < 0.05 and (lo > 0 or hi < 0)  # §8.2, recomputed
        assert row["significant"] == expected and verdict.startswith("significant") == expected, (row, verdict)
        if p is not None and row["delta"]:
            assert f"{label} {p:.3f}" in verdict and "α 0.05" in verdict, verdict
            if not expected:  # the reason is the one that failed
                assert ("≥ α" in verdict) == (p >= 0.05) and ("includes 0" in verdict) == (p < 0.05), verdict
    if holm:  # the adjusted p can differ from the raw one, and the page shows both when it decides the verdict
        raw = [r for r in comparison["paired"] if r["p_value"] is not None and r["p_adjusted"] != r["p_value"]
               and r["p_adjusted"] >= 0.05 and r["delta"]]
        for row in raw:
            assert any(f"unadjusted p {row['p_value']:.3f}" in v for v in verdicts)

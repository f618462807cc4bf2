"""Real LLM runs (the fake OpenAI-compatible server, tokens only, no provider cost) give honest cost blocks:
table-priced cost records the rows it used and equals tokens × prices, an unpriced model's cost is unknown
(null), a rerun answered from the cache is a measured $0; each card verifies (decisions §49)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.api import evaluate_card
from mt_eval.runcard.verify import verify_card
from mt_eval.stats.config import BootstrapConfig
from support.llm_fake import Translator
from support.llm_helpers import make_dataset, method, serve

SMALL = BootstrapConfig(20, 0.05, 1)


def _run(tmp: Path, name: str, times: int = 1, **kw: object) -> tuple[dict, Path]:
    """The last of ``times`` runs on one server (the cache keys on its address)."""
    ds = make_dataset(12)
    with serve(Translator(), ds, report_cost=False) as server:
        for _ in range(times):
            card, path = evaluate_card(ds, method(server, tmp, **kw), runs_dir=tmp / "runs", out=tmp / f"{name}.json",
                                       bootstrap=SMALL)
    return card, path


def test_table_priced_unpriced_and_cached_runs(tmp_path: Path) -> None:
    pricing = tmp_path / "prices.json"
    pricing.write_text(json.dumps({"models": {"test/model": {"prompt": 1.0, "completion": 2.0}}}), encoding="utf-8")
    card, path = _run(tmp_path, "priced", batch_size=4, pricing_file=str(pricing))
    cost, tokens = card["cost"], card["tokens"]
    assert cost["status"] == "measured" and cost["source"] == "pricing-table"
    row = cost["pricing"]["models"]["test/model"]
    assert (row["prompt"], row["completion"], row["prompt_tokens"]) == (1.0, 2.0, tokens["prompt_tokens"])
    expected = (tokens["prompt_tokens"] * 1.0 + tokens["completion_tokens"] * 2.0) / 1e6
    assert cost["total_cost_usd"] == pytest.approx(expected, rel=1e-12)
    assert cost["pricing"]["table"] == str(pricing) and verify_card(card, path) == []

    again, path = _run(tmp_path, "cached", 2, batch_size=4, pricing_file=str(pricing))  # the rerun: all cached
    assert again["cost"]["status"] == "measured" and again["cost"]["source"] == "cache"
    assert again["cost"]["total_cost_usd"] == 0 and "pricing" not in again["cost"]
    assert verify_card(again, path) == []

    unpriced, path = _run(tmp_path, "unpriced", cache_path=None)  # test/model is not in the shipped table
    assert unpriced["cost"]["status"] == "unknown" and unpriced["cost"]["total_cost_usd"] is None
    assert unpriced["tokens"]["total_tokens"] > 0 and unpriced["scores"]["cost_adjusted"] is None
    assert unpriced["speed"]["status"] == "measured" and verify_card(unpriced, path) == []

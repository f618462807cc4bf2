"""Cost and speed honesty in the store (issue 21 item 3): a card whose cost or speed figures do not hold is
refused by ``publish`` (the store rebuilds a card from the submission's outputs, usage and latencies, so
they are checked before they are carried); cost-adjusted ranking, the cost and latency sorts and the Pareto
charts use measured figures only, declared ones stay on the card, labelled. On SQLite and PostgreSQL."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from mt_eval.api import evaluate_card, score_predictions
from mt_eval.corpus import load_corpus, select_entries
from mt_eval.languages.card import language_card
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, Usage
from mt_eval.methods.registry import build_method
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.runcard.io import write_card
from mt_eval.runcard.seal import seal
from mt_eval.runcard.verify_economics import FiguresRefused
from mt_eval.stats.config import BootstrapConfig
from mt_eval.store import open_store
from mt_eval.store.datasets import register_dataset
from mt_eval.store.pages import pareto
from mt_eval.store.publish import publish
from mt_eval.store.query import query_rows

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
N = 8
SMALL = BootstrapConfig(20, 0.05, 1)
PRICE = {"model": "gpt-4o-mini", "prompt": 0.15, "completion": 0.60, "cached_prompt": 0.075}


def _dataset() -> Any:
    return select_entries(load_corpus(CORPUS), ids=f"1-{N}")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """An Apertium run (measured $0), a table-priced LLM run (measured), and a predictions file whose
    submitter declares cost and latency: three cards on the same 8 registered NTREX entries."""
    if shutil.which("apertium") is None:
        pytest.skip("the 'apertium' command is not installed")
    tmp = tmp_path_factory.mktemp("cost-cards")
    dataset = _dataset()
    _, apertium = evaluate_card(dataset, build_method("apertium:eng-spa", dataset=dataset), runs_dir=tmp / "runs",
                                out=tmp / "apertium.json", bootstrap=SMALL)
    hyp = tmp / "declared.jsonl"
    hyp.write_text("".join(json.dumps({"entry_id": e.id, "predicted": e.reference, "cost_usd": 1e-7,
                                       "latency_seconds": 1e-6}) + "\n" for e in dataset.entries), encoding="utf-8")
    declared = score_predictions(dataset, hyp, runs_dir=tmp / "runs", out=tmp / "declared.json", bootstrap=SMALL).path
    return {"apertium": apertium, "declared": declared, "llm": _llm(tmp, dataset)}


def _llm(tmp: Path, dataset: Any) -> Path:
    translations = []
    for i, e in enumerate(dataset.entries):
        usage = Usage(prompt_tokens=120 + i, completion_tokens=40 + i)
        usage.cost_usd = (usage.prompt_tokens * 0.15 + usage.completion_tokens * 0.60) / 1e6
        words = e.reference.split()
        translations.append(Translation(e.id, " ".join(words[:-1]) if i % 2 else e.reference, latency_seconds=0.5,
                                        usage=usage, extra={"cost_source": "pricing-table", "price": PRICE}))
    identity = MethodIdentity("llm:openai/gpt-4o-mini", MethodClass.RAW_LLM, "1", "openai/gpt-4o-mini",
                              {"pricing": "default"}, provider="openrouter")
    info = RunInfo("llm-run", "2025-01-01T00:00:00Z", 2.0, "t", bootstrap=SMALL)
    card, stats = build_card(dataset, identity, translations, info, language_card("es"), language_card("en"),
                             statistics_file="llm.stats.npz")
    return write_card(card, tmp / "llm.json", stats)


def _store(db_url: str) -> Any:
    store = open_store(db_url)
    register_dataset(store, load_corpus(CORPUS))
    return store


def test_the_issue_forgery_is_refused_by_publish(made: dict[str, Path], db_url: str, tmp_path: Path) -> None:
    """cost_adjusted 5.0 (above its composite), latency 1 µs, cost $1e-7 on an Apertium card, resealed."""
    card = json.loads(made["apertium"].read_text(encoding="utf-8"))
    forged = copy.deepcopy(card)
    forged["scores"]["cost_adjusted"] = 5.0
    for r in forged["results"]:
        r["latency_seconds"] = 1e-6
    for block in (forged["speed"], forged["scores"]):
        block.update(avg_latency_seconds=1e-6, median_latency_seconds=1e-6, p95_latency_seconds=1e-6)
    forged["cost"].update(total_cost_usd=1e-7, cost_per_entry_usd=1e-7 / N)
    forged = seal(dict(forged, run_card_hash=""))
    sidecar = made["apertium"].with_name(card["statistics"]["file"])
    shutil.copy(sidecar, tmp_path / sidecar.name)
    path = tmp_path / "forged.json"
    path.write_text(json.dumps(forged, ensure_ascii=False), encoding="utf-8")
    store = _store(db_url)
    with pytest.raises(FiguresRefused, match=r"refused: its cost or speed figures do not hold: "):
        publish(store, [path])
    with store.session() as session:
        assert query_rows(session) == []
    store.close()


def test_only_measured_figures_are_sorted_and_charted(made: dict[str, Path], db_url: str) -> None:
    store = _store(db_url)
    publish(store, [made["apertium"], made["declared"], made["llm"]])
    with store.session() as session:
        rows = {r.method: r for r in query_rows(session)}
        by_cost = [r.method for r in query_rows(session, sort="cost_adjusted")]
        by_latency = [r.method for r in query_rows(session, sort="latency")]
    store.close()
    llm, apertium, declared = rows["llm:openai/gpt-4o-mini"], rows["apertium:eng-spa"], rows["predictions"]
    assert llm.cost_adjusted is not None and llm.cost_per_entry is not None and llm.avg_latency == 0.5
    # the declared $1e-7 a card would have ranked first by cost_adjusted, and its 1 µs latency: not ranked
    assert declared.cost_adjusted is None and declared.cost_per_entry is None and declared.avg_latency is None
    assert by_cost[0] == "llm:openai/gpt-4o-mini" and by_latency[-1] == "predictions"
    assert apertium.cost_per_entry == 0.0 and apertium.avg_latency is not None  # a measured $0 and its timing
    drawn = {p.label for p in pareto(rows.values(), "cost_per_entry")}
    assert "predictions" not in drawn and {"llm:openai/gpt-4o-mini", "apertium:eng-spa"} <= drawn


def test_a_cost_priced_at_the_submitter_s_own_prices_is_not_ranked(made: dict[str, Path]) -> None:
    """Table prices are recorded on the card and verify recomputes tokens × prices, but a submitter's own
    --pricing file may name any price: the store ranks a table-priced cost only at the shipped table's prices."""
    from mt_eval.scoring.economics import ranked_figures

    card = json.loads(made["llm"].read_text(encoding="utf-8"))
    assert ranked_figures(card)["cost_adjusted"] is not None  # gpt-4o-mini at the shipped 0.15 / 0.60 $/1M
    cheap = json.loads(json.dumps(card))
    cheap["cost"]["pricing"]["models"]["gpt-4o-mini"].update(prompt=1e-6, completion=1e-6)
    assert ranked_figures(cheap)["cost_adjusted"] is None and ranked_figures(cheap)["cost_per_entry"] is None
    unknown_model = json.loads(json.dumps(card))
    unknown_model["cost"]["pricing"]["models"] = {"my-own-model": card["cost"]["pricing"]["models"]["gpt-4o-mini"]}
    assert ranked_figures(unknown_model)["cost_adjusted"] is None

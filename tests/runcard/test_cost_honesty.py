"""Cost and speed honesty (issue 21 item 3): every figure is measured, declared or unknown, never 0 for
unknown; ``verify`` recomputes what follows from the card and refuses impossible figures, so a forged,
resealed card is refused by ``verify`` and therefore by ``publish``.

The forged cards are made as a forger would: edit the figures, then reseal with the project's own
``seal`` (the hash alone cannot catch it)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mt_eval.api import evaluate_card
from mt_eval.corpus import load_corpus, select_entries
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, Usage
from mt_eval.methods.registry import build_method
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.runcard.seal import seal
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.composite import cost_adjusted
from mt_eval.stats.config import BootstrapConfig

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
N = 8
SMALL = BootstrapConfig(20, 0.05, 1)


def _dataset() -> Any:
    return select_entries(load_corpus(CORPUS), ids=f"1-{N}")


def _resealed(card: dict[str, Any]) -> dict[str, Any]:
    return seal(dict(card, run_card_hash=""))


@pytest.fixture(scope="module")
def apertium(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    """A real Apertium eng→spa run of 8 NTREX entries, with its statistics sidecar."""
    if shutil.which("apertium") is None:  # CI installs it (apt-get install apertium apertium-eng-spa)
        pytest.skip("the 'apertium' command is not installed")
    tmp = tmp_path_factory.mktemp("apertium")
    dataset = _dataset()
    card, path = evaluate_card(dataset, build_method("apertium:eng-spa", dataset=dataset),
                               runs_dir=tmp / "runs", out=tmp / "card.json", bootstrap=SMALL)
    return card, path


def _write(card: dict[str, Any], original: Path, dest: Path) -> Path:
    """The forged card beside a copy of the original's sidecar (the statistics are not what was forged)."""
    sidecar = original.with_name(card["statistics"]["file"])
    (dest / sidecar.name).write_bytes(sidecar.read_bytes())
    out = dest / "forged.json"
    out.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    return out


def test_an_apertium_run_is_a_measured_zero_cost(apertium: tuple[dict[str, Any], Path]) -> None:
    card, path = apertium
    assert card["cost"]["status"] == "measured" and card["cost"]["source"] == "local"
    assert card["cost"]["total_cost_usd"] == 0.0 and card["scores"]["cost_adjusted"] is None
    assert card["speed"]["status"] == "measured" and card["speed"]["elapsed_seconds"] == card["elapsed_seconds"]
    latencies = [r["latency_seconds"] for r in card["results"]]
    assert card["speed"]["avg_latency_seconds"] == pytest.approx(float(np.mean(latencies)))
    assert verify_card(card, path) == []


def test_the_issue_forgery_is_refused_by_verify(apertium: tuple[dict[str, Any], Path],
                                                             tmp_path: Path) -> None:
    """The issue's card: cost_adjusted 5.0 (above its own composite), latency 1 µs, cost 1e-7, resealed."""
    card, path = apertium
    forged = copy.deepcopy(card)
    assert forged["scores"]["composite"] < 5.0
    forged["scores"]["cost_adjusted"] = 5.0
    for r in forged["results"]:
        r["latency_seconds"] = 1e-6
    for block in (forged["speed"], forged["scores"]):
        block.update(avg_latency_seconds=1e-6, median_latency_seconds=1e-6, p95_latency_seconds=1e-6)
    forged["cost"].update(total_cost_usd=1e-7, cost_per_entry_usd=1e-7 / N)
    forged = _resealed(forged)
    problems = verify_card(forged, _write(forged, path, tmp_path))
    assert problems and any(p.startswith("scores.cost_adjusted") for p in problems), problems


def _consistent_cost(card: dict[str, Any], total: float) -> None:
    """A careful forger: every derived cost figure recomputed from the forged total, cost_adjusted too."""
    n, chars = len(card["results"]), sum(len(r["source"]) for r in card["results"])
    tokens = card["tokens"]["total_tokens"]
    card["cost"].update(total_cost_usd=total, cost_per_entry_usd=total / n, cost_per_source_char=total / chars,
                        cost_per_1k_tokens=total / tokens * 1000 if tokens else None)
    card["totals"].update(total_cost_usd=total, cost_per_entry_usd=total / n)
    card["scores"]["cost_adjusted"] = cost_adjusted(card["scores"]["composite"], total / n)


def _consistent_latency(card: dict[str, Any], seconds: float) -> None:
    for r in card["results"]:
        r["latency_seconds"] = seconds
    for block in (card["speed"], card["scores"]):
        block.update(avg_latency_seconds=seconds, median_latency_seconds=seconds, p95_latency_seconds=seconds)
    card["elapsed_seconds"] = card["speed"]["elapsed_seconds"] = seconds * len(card["results"])
    card["speed"]["entries_per_minute"] = len(card["results"]) / (card["elapsed_seconds"] / 60)


@pytest.mark.parametrize(("forge", "field"), [
    (lambda c: c["scores"].update(cost_adjusted=5.0), "scores.cost_adjusted"),
    (lambda c: _consistent_cost(c, 1e-7), "cost.total_cost_usd: a local engine spends nothing"),
    (lambda c: _consistent_latency(c, 1e-6), "results[0].latency_seconds: 1e-06 s is below"),
    (lambda c: _longer_than_the_run(c, 3), "results[3].latency_seconds"),
    (lambda c: c["speed"].update(entries_per_minute=2_211_849.0), "speed.entries_per_minute"),
    (lambda c: c["cost"].update(total_cost_usd=-1.0), "cost.total_cost_usd: -1.0 is not a finite"),
    (lambda c: c["speed"].update(avg_latency_seconds=float("nan")), "speed.avg_latency_seconds: nan"),
    (lambda c: c["cost"].update(status="free"), "cost.status"),
    (lambda c: c["cost"].update(status="declared"), "cost.source"),
    (lambda c: c["tokens"].update(prompt_tokens=5, total_tokens=5), "tokens.prompt_tokens"),
], ids=["cost_adjusted", "cost", "latency-floor", "latency-above-elapsed", "throughput", "negative", "nan",
        "status", "declared-without-source", "tokens"])
def test_each_forged_figure_is_named(apertium: tuple[dict[str, Any], Path], forge: Any, field: str) -> None:
    card = copy.deepcopy(apertium[0])
    forge(card)
    problems = verify_card(_resealed(card))
    assert problems and any(p.startswith(field) for p in problems), problems


def _longer_than_the_run(card: dict[str, Any], row: int) -> None:
    card["results"][row]["latency_seconds"] = card["elapsed_seconds"] * 2
    _consistent_summary(card)


def _consistent_summary(card: dict[str, Any]) -> None:
    latencies = np.asarray([r["latency_seconds"] for r in card["results"]])
    for block in (card["speed"], card["scores"]):
        block.update(avg_latency_seconds=float(latencies.mean()), median_latency_seconds=float(np.median(latencies)),
                     p95_latency_seconds=float(np.percentile(latencies, 95)))


# --- outside outputs: unknown, or declared by the submitter -------------------------------------------


def _predictions(tmp: Path, extra: dict[str, Any] | None = None) -> Path:
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:N]
    path = tmp / "hyp.jsonl"
    path.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": e["reference"], **(extra or {})}) + "\n"
                            for e in entries), encoding="utf-8")
    return path


def test_a_scored_predictions_file_has_unknown_cost_and_speed(tmp_path: Path) -> None:
    from mt_eval.api import score_predictions

    scored = score_predictions(_dataset(), _predictions(tmp_path), runs_dir=tmp_path / "runs",
                               out=tmp_path / "card.json", bootstrap=SMALL)
    card, path = scored.card, scored.path
    assert card["cost"]["status"] == "unknown" and card["speed"]["status"] == "unknown"
    assert all(card["cost"][k] is None for k in ("total_cost_usd", "cost_per_entry_usd", "cost_per_source_char"))
    assert card["speed"]["elapsed_seconds"] is None and card["speed"]["entries_per_minute"] is None
    assert card["scores"]["avg_latency_seconds"] is None and card["scores"]["cost_adjusted"] is None
    assert all(r["latency_seconds"] is None for r in card["results"])
    assert verify_card(card, path) == []
    forged = copy.deepcopy(card)  # the old card's $0 and latency 0, resealed: refused now
    forged["cost"].update(total_cost_usd=0.0, cost_per_entry_usd=0.0, cost_per_source_char=0.0)
    forged["totals"].update(total_cost_usd=0.0, cost_per_entry_usd=0.0)
    assert verify_card(_resealed(forged))[0].startswith("cost.total_cost_usd: an unknown cost is null")
    forged = copy.deepcopy(card)
    forged["results"][0]["latency_seconds"] = 0.0
    assert any(p.startswith("results[0].latency_seconds") for p in verify_card(_resealed(forged)))


def test_figures_a_predictions_file_gives_are_declared(tmp_path: Path) -> None:
    from mt_eval.api import score_predictions

    scored = score_predictions(_dataset(), _predictions(tmp_path, {"latency_seconds": 0.5, "cost_usd": 0.002}),
                               runs_dir=tmp_path / "runs", out=tmp_path / "card.json", bootstrap=SMALL)
    card, path = scored.card, scored.path
    assert card["cost"]["status"] == "declared" and card["cost"]["source"] == "declared"
    assert card["cost"]["total_cost_usd"] == pytest.approx(0.002 * N)
    assert card["scores"]["cost_adjusted"] == pytest.approx(cost_adjusted(card["scores"]["composite"], 0.002))
    assert card["speed"]["status"] == "declared" and card["speed"]["avg_latency_seconds"] == 0.5
    assert card["speed"]["elapsed_seconds"] is None and card["speed"]["entries_per_minute"] is None
    assert verify_card(card, path) == []


# --- a table-priced LLM run: cost = tokens × the prices recorded on the card ------------------------------


PRICE = {"model": "gpt-4o-mini", "prompt": 0.15, "completion": 0.60, "cached_prompt": 0.075}


def _llm_card(tmp: Path) -> dict[str, Any]:
    """An LLM run as the engine builds it: each entry's tokens, the row that priced it, its latency."""
    from mt_eval.languages.card import language_card

    dataset = _dataset()
    translations = []
    for i, e in enumerate(dataset.entries):
        usage = Usage(prompt_tokens=120 + i, completion_tokens=40 + i, cached_tokens=10 * (i % 2))
        usage.cost_usd = ((usage.prompt_tokens - usage.cached_tokens) * 0.15 + usage.cached_tokens * 0.075
                          + usage.completion_tokens * 0.60) / 1e6
        translations.append(Translation(e.id, e.reference, latency_seconds=0.4 + 0.01 * i, usage=usage,
                                        model_id="gpt-4o-mini-2024-07-18",
                                        extra={"cost_source": "pricing-table", "price": PRICE, "cached": False}))
    identity = MethodIdentity("llm:openai/gpt-4o-mini", MethodClass.RAW_LLM, "1", "openai/gpt-4o-mini",
                              {"pricing": "default", "concurrency": 8}, provider="openrouter")
    info = RunInfo("llm-run", "2025-01-01T00:00:00Z", 1.5, "t", cost_source="pricing-table", bootstrap=SMALL)
    card, _ = build_card(dataset, identity, translations, info, language_card("es"), language_card("en"))
    return card


def test_a_table_priced_cost_records_its_prices_and_verifies(tmp_path: Path) -> None:
    card = _llm_card(tmp_path)
    cost = card["cost"]
    assert cost["status"] == "measured" and cost["source"] == "pricing-table"
    row = cost["pricing"]["models"]["gpt-4o-mini"]
    assert cost["pricing"]["table"] == "default" and row["prompt"] == 0.15 and row["completion"] == 0.60
    assert row["prompt_tokens"] == card["tokens"]["prompt_tokens"] and row["cached_tokens"] == 40
    expected = ((row["prompt_tokens"] - 40) * 0.15 + 40 * 0.075 + row["completion_tokens"] * 0.60) / 1e6
    assert cost["total_cost_usd"] == pytest.approx(expected, rel=1e-12)
    adjusted = card["scores"]["cost_adjusted"]
    assert adjusted is not None and adjusted <= card["scores"]["composite"]
    assert verify_card(card) == []


@pytest.mark.parametrize(("forge", "field"), [
    (lambda c: _consistent_cost(c, c["cost"]["total_cost_usd"] / 1000), "cost.total_cost_usd: card says"),
    (lambda c: c["cost"]["pricing"]["models"]["gpt-4o-mini"].update(prompt=0.0001), "cost.pricing.models.gpt-4o-mini"),
    (lambda c: c["cost"].pop("pricing"), "cost.pricing: a table-priced cost records no prices"),
    (lambda c: c["cost"].update(source="local"), "cost.source: a measured $0"),
], ids=["cost-below-tokens-times-prices", "price-edited", "prices-removed", "claims-local"])
def test_a_priced_cost_that_is_not_tokens_times_prices_is_refused(tmp_path: Path, forge: Any, field: str) -> None:
    card = _llm_card(tmp_path)
    forge(card)
    problems = verify_card(_resealed(card))
    assert problems and any(p.startswith(field) for p in problems), problems

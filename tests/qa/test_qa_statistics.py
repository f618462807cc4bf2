"""QA statistics on the shared machinery: the metric protocol, mt_eval.stats' bootstrap, Holm.

Every expectation is computed by hand here (resampling with numpy directly, Holm's step-down on
paper), not by calling the code under test a second time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qa_helpers import write_jsonl
from test_qa_four_systems import GOLD, SYSTEMS
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.metrics.base import Metric
from mt_eval.qa.data import GoldItem, Prediction
from mt_eval.qa.evaluate import confidence_intervals, holm_correct, score_system
from mt_eval.qa.measures import F1, RLC, ExactMatch, QASamples, Recorded, RLCOk
from mt_eval.stats.config import BootstrapConfig

ITEMS = (GoldItem("a", "?", ("Paris",), "en"), GoldItem("b", "?", ("Denver Broncos",), "en"),
         GoldItem("c", "?", ("北京",), "zh"))  # fmt: skip


def test_qa_metrics_are_protocol_metrics_with_the_spec_values() -> None:
    samples = QASamples(ITEMS, ("en", "en", "zh"))
    answers = ["paris", "Broncos", "北京 city"]
    for metric_type in (ExactMatch, F1, RLC, RLCOk):
        assert isinstance(metric_type(samples), Metric)
    em = ExactMatch(samples)
    stats = em.statistics(answers)
    assert stats.tolist() == [[1, 1], [0, 1], [0, 1]]
    assert em.aggregate(stats.sum(axis=0)) == pytest.approx(1 / 3)
    f1 = F1(samples)
    # "Broncos" vs "denver broncos": P 1, R 1/2 -> 2/3; "北京city" vs "北京" by characters: P 2/6, R 1 -> 1/2
    assert f1.entry_values(f1.statistics(answers)) == pytest.approx([1, 2 / 3, 1 / 2])
    assert RLC(samples).entry_values(RLC(samples).statistics(answers)) == pytest.approx([1, 1, 2 / 6])
    assert RLCOk(samples).entry_values(RLCOk(samples).statistics(answers)).tolist() == [1, 1, 0]
    with pytest.raises(ValueError, match="2 answers for 3 samples"):
        em.statistics(answers[:2])


def test_an_unscored_sample_drops_out_of_the_mean_and_its_resamples() -> None:
    judged = Recorded("semantic_score", [1.0, np.nan, 0.5, 0.0])
    stats = judged.statistics(["w", "x", "y", "z"])
    assert stats.tolist() == [[1, 1], [0, 0], [0.5, 1], [0, 1]]
    assert judged.aggregate(stats.sum(axis=0)) == pytest.approx(0.5)
    assert np.isnan(judged.aggregate(np.array([0.0, 0.0])))  # a resample of unjudged samples only


def test_bootstrap_ci_is_the_percentile_interval_of_resampled_means() -> None:
    """The CI through the protocol and mt_eval.stats equals numpy's own resampling, by hand."""
    gold = [GoldItem(f"q{i}", "?", ("yes",), "en") for i in range(9)]
    answers = ["yes", "no", "yes", "yes", "no", "no", "yes", "maybe", "yes"]
    result = score_system("s", gold, {g.id: Prediction(g.id, a) for g, a in zip(gold, answers, strict=True)}, lang=None)
    result.semantic = np.array([1, np.nan, 1, 0.5, 0, np.nan, 1, 0, 1], dtype=np.float64)
    cfg = BootstrapConfig(n_resamples=500, alpha=0.1, seed=7)
    cis = confidence_intervals(result, cfg)
    idx = np.random.default_rng(7).choice(9, (500, 9))  # sacrebleu's resamples
    em = np.array([1, 0, 1, 1, 0, 0, 1, 0, 1], dtype=np.float64)
    lo, hi = np.quantile(em[idx].mean(axis=1), [0.05, 0.95])
    assert (cis["em"]["point"], cis["em"]["ci_lower"], cis["em"]["ci_upper"]) == pytest.approx((5 / 9, lo, hi))
    sem = result.semantic[idx]
    means = np.nanmean(np.where(np.isnan(sem), np.nan, sem), axis=1)
    lo, hi = np.quantile(means[~np.isnan(means)], [0.05, 0.95])
    assert cis["semantic_score"]["point"] == pytest.approx(4.5 / 7)
    assert (cis["semantic_score"]["ci_lower"], cis["semantic_score"]["ci_upper"]) == pytest.approx((lo, hi))


def _test(p: float, delta: float = 0.2, lo: float = 0.1, hi: float = 0.3) -> dict[str, Any]:
    return {"delta": delta, "ci_lower": lo, "ci_upper": hi, "p_value": p, "significant": p < 0.05}


def test_holm_correct_by_hand() -> None:
    """Raw p 0.01, 0.04, 0.03 over three systems: sorted x3, x2, x1 with a running maximum gives
    0.03, 0.06, 0.06 — only the first stays significant at 0.05, though all three were raw."""
    tests = {"a": {"f1": _test(0.01)}, "b": {"f1": _test(0.04)}, "c": {"f1": _test(0.03), "em": _test(0.02)}}
    holm_correct(tests, 0.05)
    assert [tests[s]["f1"]["p_adjusted"] for s in "abc"] == pytest.approx([0.03, 0.06, 0.06])
    assert [tests[s]["f1"]["significant"] for s in "abc"] == [True, False, False]
    assert all(tests[s]["f1"]["significant_uncorrected"] for s in "abc")
    assert tests["c"]["em"]["p_adjusted"] == 0.02 and tests["c"]["em"]["significant"]  # a family of one
    straddling = {"a": {"f1": _test(0.001, lo=-0.1)}}  # §8.2: the interval must exclude 0 as well
    holm_correct(straddling, 0.05)
    assert straddling["a"]["f1"]["significant"] is False
    undefined = {"a": {"f1": _test(float("nan"))}, "b": {"f1": _test(0.02)}}
    holm_correct(undefined, 0.05)  # NaN is left out of the family, so b is not multiplied by 2
    assert undefined["b"]["f1"]["p_adjusted"] == 0.02 and not undefined["a"]["f1"]["significant"]


def _compare(tmp_path: Path, *extra: str) -> tuple[str, dict[str, Any], Path]:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    args = ["qa", "compare", "--gold", str(gold), "--baseline", "direct", "--out", str(tmp_path / "metrics.json"),
            "-b", "300", "--seed", "3", *extra]  # fmt: skip
    args += [f"{name}={write_jsonl(tmp_path / f'{name}.jsonl', rows)}" for name, rows in SYSTEMS.items()]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads((tmp_path / "metrics.json").read_text("utf-8")), tmp_path / "metrics.json"


def test_qa_compare_applies_holm_and_says_so(tmp_path: Path) -> None:
    stdout, doc, _ = _compare(tmp_path)
    paired = doc["paired_tests"]
    assert paired["correction"] == "holm" and paired["baseline"] == "direct"
    for metric in ("em", "f1", "rlc"):
        raw = sorted((paired["systems"][s][metric]["p_value"], s) for s in ("multi", "cross", "lbrag"))
        running = 0.0
        for rank, (p, system) in enumerate(raw):  # Holm's step-down, by hand
            running = max(running, min(1.0, (3 - rank) * p))
            assert paired["systems"][system][metric]["p_adjusted"] == pytest.approx(running)
    assert doc["config"]["bootstrap"]["seed"] == 3
    assert "p Holm-adjusted across 3 systems per metric" in stdout


def test_correction_none_reports_raw_p_values(tmp_path: Path) -> None:
    stdout, doc, _ = _compare(tmp_path, "--correction", "none")
    assert doc["paired_tests"]["correction"] == "none"
    assert "p_adjusted" not in doc["paired_tests"]["systems"]["cross"]["f1"]
    assert "p not corrected for multiple comparisons" in stdout
    bad = CliRunner().invoke(app, ["qa", "compare", "--gold", "g", "--baseline", "a", "a=p", "--correction", "bonf"])
    assert bad.exit_code == 2 and "unknown --correction 'bonf'" in bad.stderr


def test_metrics_json_bytes_keep_the_spec_layout(tmp_path: Path) -> None:
    """Two-space indent, the spec's "metrics" block first, keys in the spec's order, n a float."""
    _, _, path = _compare(tmp_path)
    text = path.read_text("utf-8")
    f1 = np.array([2 / 3, 0, 1 / 2, 2 / 3])  # direct's hand F1s; numpy's mean and population std
    assert text.startswith(
        '{\n  "metrics": {\n    "direct": {\n      "em": 0.0,\n      "em_std": 0.0,\n'
        f'      "f1": {float(f1.mean())!r},\n      "f1_std": {float(f1.std())!r},\n      "rlc": 1.0,\n'
        '      "rlc_std": 0.0,\n      "rlc_ok": 1.0,\n      "rlc_ok_std": 0.0,\n      "cost": 0.0,\n'
        '      "cost_std": 0.0,\n      "cnbe": 0.0,\n      "cnbe_std": 0.0,\n      "n": 4.0\n    },\n'
    )
    assert text.endswith("}\n")


def test_debug_shows_the_traceback_instead_of_one_line(tmp_path: Path) -> None:
    args = ["qa", "score", "--gold", str(tmp_path / "missing.jsonl"), "--predictions", str(tmp_path / "p.jsonl")]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 2 and plain.stderr.startswith("error: ")
    debug = CliRunner().invoke(app, [*args, "--debug"])
    assert isinstance(debug.exception, UserError) and "file not found" in str(debug.exception)

"""``calibrate``'s verdict follows its intervals, and acc23 is reported beside the floor it cannot go below
(issue 22 item 6)."""

from __future__ import annotations

import csv
import itertools

import numpy as np
import pytest

from data_paths import MQM_TED
from mt_eval.calibration import meta
from mt_eval.calibration.report import CHRF_PP, LEARNED, NO_GAIN, SPEC, Block, Row, _verdict

E = meta.Estimate
EVEN = E(0.0, -0.001, 0.001)


def _block(tau_gain: E, acc_gain: E = EVEN, floor: bool = False) -> Block:
    row = Row(E(0.08, 0.05, 0.11), E(0.48, 0.47, 0.49), 1.0, None, floor)
    block = Block("held-out", 10, 130, 0.48, {LEARNED: row, CHRF_PP: row, SPEC: row})
    block.diffs = {CHRF_PP: {"tau": tau_gain, "acc23": acc_gain}, SPEC: {"tau": tau_gain, "acc23": acc_gain}}
    return block


def test_a_gain_whose_interval_crosses_zero_is_no_evidence() -> None:
    """The en-de case of docs/calibration.md: learned − chrF++ +0.0094 [−0.0036, +0.0244] was "adopt"."""
    verdict = _verdict([_block(E(0.0094, -0.0036, 0.0244))])
    assert verdict["adopt"] is False and verdict["verdict"] == NO_GAIN
    assert "+0.0094" in verdict["reason"] and "does not exclude 0" in verdict["reason"]


def test_a_gain_whose_interval_excludes_zero_is_adopted() -> None:
    verdict = _verdict([_block(E(0.03, 0.01, 0.05)), _block(E(0.02, 0.004, 0.04))])
    assert verdict["adopt"] is True and verdict["verdict"] == "adopt" and verdict["reason"] is None


def test_one_setting_without_evidence_is_enough_to_refuse() -> None:
    verdict = _verdict([_block(E(0.03, 0.01, 0.05)), _block(E(0.02, -0.001, 0.04))])
    assert verdict["adopt"] is False


def test_floor_is_said_in_the_lines() -> None:
    verdict = _verdict([_block(E(0.03, 0.01, 0.05), floor=True)])
    assert all("tie floor" in line for line in verdict["lines"])


def _brute_floor(items: list[str], human: np.ndarray) -> float:
    """Straight from the definition: per item, the share of pairs people tie; averaged over items."""
    groups: dict[str, list[int]] = {}
    for k, item in enumerate(items):
        groups.setdefault(item, []).append(k)
    shares = [np.mean([human[a] == human[b] for a, b in itertools.combinations(idx, 2)])
              for idx in groups.values() if len(idx) >= 2]
    return float(np.mean(shares))


def test_tie_floor_is_the_acc23_of_a_metric_tying_everything() -> None:
    rng = np.random.default_rng(3)
    items = [f"i{k // 6}" for k in range(60)]
    human = rng.integers(-2, 1, size=60).astype(float)  # many ties, as MQM's zeros
    floor = meta.tie_floor(items, human)
    assert floor == pytest.approx(_brute_floor(items, human))
    constant = np.zeros(60)  # ties every pair at any ε
    assert meta.acc23_samples(items, constant, human)[0] == pytest.approx(floor)
    # no metric goes below it: tying everything is always one of acc23's candidates
    for _ in range(5):
        assert meta.acc23_samples(items, rng.normal(size=60), human)[0] >= floor - 1e-12


def test_why_every_metric_showed_the_same_acc23() -> None:
    """On WMT21 TED en-de (13 systems, MQM: 59–61 % zeros) the floor is 0.4803, the value docs/calibration.md
    reports "for all" metrics: noise reaches it, a metric that knows the human scores clears it."""
    with (MQM_TED / "ted_ende.src_ref_hyp_mqm.tsv").open(encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE) if r["system"] != "ref-A"]
    items = [r["seg_id"] for r in rows]
    human = np.asarray([float(r["mqm_avg_score"]) for r in rows])
    floor = meta.tie_floor(items, human)
    assert floor == pytest.approx(0.4803, abs=5e-5)
    noise = np.random.default_rng(0).normal(size=len(human))
    assert meta.acc23_samples(items, noise, human)[0] == pytest.approx(floor, abs=1e-3)
    informed = human + np.random.default_rng(0).normal(scale=3, size=len(human))
    assert meta.acc23_samples(items, informed, human)[0] > floor + 0.05

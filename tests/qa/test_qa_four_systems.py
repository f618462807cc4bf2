"""A constructed direct / multi / cross / lbrag run whose numbers were worked out by hand.

Gold (en): q1 "Denver Broncos", q2 "308", q3 "Santa Clara, California", q4 "Peyton Manning".

| system | q1                  | q2            | q3                          | q4                    |
|--------|---------------------|---------------|-----------------------------|-----------------------|
| direct | Broncos  F1 2/3     | 300  F1 0     | California  F1 1/2          | Manning  F1 2/3       |
| multi  | Denver Broncos  1   | 308  1        | Santa Clara  F1 0.8         | 佩顿·曼宁  F1 0, RLC 0 |
| cross  | Denver Broncos  1   | 308  1        | Santa Clara California  1   | Manning  F1 2/3       |
|        | cost 300            | cost 200      | cost 400                    | cost 100              |
| lbrag  | Denver Broncos  1   | 308  1        | Levi's Stadium  0           | Peyton Manning  1     |
|        | cost 20 (15 + 5)    | cost 0        | cost 50                     | cost 10               |

CNBE per sample = (F1 − F1_direct) / cost, 0 where cost is 0:
  (direct F1: "Broncos" P 1 R 1/2 → 2/3; "California" P 1 R 1/3 → 1/2; mean 11/24)
  cross: (1−2/3)/300 = 1/900, (1−0)/200 = 1/200, (1−1/2)/400 = 1/800, 0/100 = 0
         in units of 1/7200: 8, 36, 9, 0 → mean 53/28800 = 0.0018403, std = √184.6875 / 7200 = 0.0018875
  lbrag: (1/3)/20 = 1/60, 0 (cost 0 although F1 rose), (0−1/2)/50 = −1/100, (1/3)/10 = 1/30
         in units of 1/300: 5, 0, −3, 10 → mean 12/1200 = 0.01, std = √24.5 / 300 = 0.0164992
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qa_helpers import write_jsonl
from typer.testing import CliRunner

from mt_eval.cli import app

GOLD = [
    {"id": "q1", "question": "Who won?", "answers": ["Denver Broncos"], "lang": "en"},
    {"id": "q2", "question": "Points?", "answers": ["308"], "lang": "en"},
    {"id": "q3", "question": "Where?", "answers": ["Santa Clara, California"], "lang": "en"},
    {"id": "q4", "question": "Quarterback?", "answers": ["Peyton Manning"], "lang": "en"},
]
SYSTEMS: dict[str, list[dict[str, object]]] = {
    "direct": [
        {"id": "q1", "prediction": "Broncos"},
        {"id": "q2", "prediction": "300"},
        {"id": "q3", "prediction": "California"},
        {"id": "q4", "prediction": "Manning"},
    ],
    "multi": [
        {"id": "q1", "prediction": "Denver Broncos", "token_count": 0},
        {"id": "q2", "prediction": "308"},
        {"id": "q3", "prediction": "Santa Clara"},
        {"id": "q4", "prediction": "佩顿·曼宁"},
    ],
    "cross": [
        {"id": "q1", "prediction": "Denver Broncos", "token_count": 300},
        {"id": "q2", "prediction": "308", "token_count": 200},
        {"id": "q3", "prediction": "Santa Clara California", "token_count": 400},
        {"id": "q4", "prediction": "Manning", "token_count": 100},
    ],
    "lbrag": [  # deliberately out of order: pairing with the baseline is by id
        {"id": "q4", "prediction": "Peyton Manning", "evidence": [{"metadata": {"token_count": 10}}]},
        {"id": "q3", "prediction": "Levi's Stadium", "evidence": [{"metadata": {"token_count": 50}}]},
        {"id": "q1", "prediction": "Denver Broncos",
         "evidence": [{"metadata": {"token_count": 15}}, {"metadata": {"lang": "en"}},
                      {"metadata": {"token_count": 5}}]},
        {"id": "q2", "prediction": "308", "evidence": []},
    ],
}  # fmt: skip

EXPECTED_CONSOLE = """\
================================================================================
Experiment Results Summary
================================================================================
direct   | EM=0.000±0.000 | F1=0.458±0.273 | RLC=1.000±0.000 | Cost=0.0±0.0 | CNBE=0.00000±0.00000
multi    | EM=0.500±0.500 | F1=0.700±0.412 | RLC=0.750±0.433 | Cost=0.0±0.0 | CNBE=0.00000±0.00000
cross    | EM=0.750±0.433 | F1=0.917±0.144 | RLC=1.000±0.000 | Cost=250.0±111.8 | CNBE=0.00184±0.00189
lbrag    | EM=0.750±0.433 | F1=0.750±0.433 | RLC=1.000±0.000 | Cost=20.0±18.7 | CNBE=0.01000±0.01650
================================================================================
"""


@pytest.fixture
def run(tmp_path: Path) -> tuple[str, dict[str, object], Path]:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    args = ["compare", "--gold", str(gold), "--baseline", "direct", "--out", str(tmp_path / "metrics.json"),
            "--per-sample", str(tmp_path / "samples.jsonl"), "--n-resamples", "200", "--spec-block"]  # fmt: skip
    for name, rows in SYSTEMS.items():
        args.append(f"{name}={write_jsonl(tmp_path / f'{name}.jsonl', rows)}")
    result = CliRunner().invoke(app, ["qa", *args])
    assert result.exit_code == 0, result.output
    return result.stdout, json.loads((tmp_path / "metrics.json").read_text("utf-8")), tmp_path


def test_console_summary_matches_hand_computed_values(run: tuple[str, dict[str, object], Path]) -> None:
    stdout, _, _ = run
    assert stdout.startswith(EXPECTED_CONSOLE)


def test_cnbe_matches_hand_computed_values(run: tuple[str, dict[str, object], Path]) -> None:
    _, doc, tmp_path = run
    metrics = doc["metrics"]
    assert isinstance(metrics, dict)
    assert metrics["cross"]["cnbe"] == pytest.approx(53 / 28800)
    assert metrics["cross"]["cnbe_std"] == pytest.approx(184.6875**0.5 / 7200)
    assert metrics["lbrag"]["cnbe"] == pytest.approx(0.01)
    assert metrics["lbrag"]["cnbe_std"] == pytest.approx(24.5**0.5 / 300)
    assert metrics["direct"]["f1"] == pytest.approx(11 / 24)
    assert metrics["direct"]["cnbe"] == metrics["multi"]["cnbe"] == 0.0
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text("utf-8").splitlines()]
    per = {(r["system"], r["id"]): r["cnbe"] for r in rows}
    assert [per["cross", q] for q in ("q1", "q2", "q3", "q4")] == pytest.approx([1 / 900, 1 / 200, 1 / 800, 0])
    assert [per["lbrag", q] for q in ("q1", "q2", "q3", "q4")] == pytest.approx([1 / 60, 0, -1 / 100, 1 / 30])
    assert [r["cost"] for r in rows if r["system"] == "lbrag"] == [20, 0, 50, 10]


def test_metrics_json_has_the_spec_structure(run: tuple[str, dict[str, object], Path]) -> None:
    _, doc, _ = run
    metrics = doc["metrics"]
    assert isinstance(metrics, dict)
    assert list(metrics) == ["direct", "multi", "cross", "lbrag"]
    assert list(metrics["lbrag"]) == [
        "em", "em_std", "f1", "f1_std", "rlc", "rlc_std", "rlc_ok", "rlc_ok_std",
        "cost", "cost_std", "cnbe", "cnbe_std", "n",
    ]  # fmt: skip
    assert metrics["lbrag"]["n"] == 4.0 and isinstance(metrics["lbrag"]["n"], float)
    assert metrics["multi"]["rlc_ok"] == 0.75 and metrics["multi"]["rlc_ok_std"] == pytest.approx(0.75**0.5 / 2)
    assert "semantic_score" not in metrics["lbrag"]  # no judge configured
    assert doc["config"]["std_ddof"] == 0  # type: ignore[index]


def test_bootstrap_cis_and_paired_tests(run: tuple[str, dict[str, object], Path]) -> None:
    stdout, doc, _ = run
    cis = doc["confidence_intervals"]
    assert isinstance(cis, dict)
    for name in SYSTEMS:
        for metric in ("em", "f1", "rlc"):
            ci = cis[name][metric]
            assert ci["ci_lower"] <= ci["point"] <= ci["ci_upper"]
    paired = doc["paired_tests"]
    assert isinstance(paired, dict)
    assert paired["baseline"] == "direct"
    assert set(paired["systems"]) == {"multi", "cross", "lbrag"}
    cross_f1 = paired["systems"]["cross"]["f1"]
    assert cross_f1["delta"] == pytest.approx(11 / 12 - 11 / 24)
    assert cross_f1["baseline"] == pytest.approx(11 / 24)
    assert {"ci_lower", "ci_upper", "p_value", "significant"} <= set(cross_f1)
    assert "Paired bootstrap vs direct" in stdout
    assert doc["coverage"] == {n: {"n": 4, "missing": 0, "failed": 0, "semantic_errors": 0} for n in SYSTEMS}

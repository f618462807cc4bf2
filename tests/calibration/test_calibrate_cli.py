"""``mt-eval calibrate`` end to end on a slice of the real WMT21 TED en-de MQM judgments: cards built from the
judgments, the report checked against scipy's Kendall τ on the cards' own per-entry values, the written profile
used by ``evaluate``, and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from data_paths import MQM_TED
from mt_eval.cli import app
from mt_eval.scoring.calibrated import load_profile

runner = CliRunner()
ITEMS = 40  # × 13 systems = 520 judged segments: above the 80-segment floor, quick to score


def _slice(path: Path, items: int) -> None:
    lines = (MQM_TED / "ted_ende.src_ref_hyp_mqm.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    keep = sorted({int(line.split("\t")[2]) for line in lines[1:]})[:items]
    path.write_text(lines[0] + "".join(r for r in lines[1:] if int(r.split("\t")[2]) in keep), encoding="utf-8")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("calibrate")
    judgments = tmp / "ende.tsv"
    _slice(judgments, ITEMS)
    result = runner.invoke(app, ["calibrate", "-j", str(judgments), "--from-judgments", "--cards-out",
                                 str(tmp / "cards"), "-o", str(tmp / "p.json"), "-b", "50", "--seeds", "1", "--json"])
    assert result.exit_code == 0, result.output
    return {"dir": tmp, "judgments": judgments, "report": json.loads(result.stdout)}


def test_report_and_profile(fitted: dict[str, object]) -> None:
    report, tmp = fitted["report"], fitted["dir"]
    assert isinstance(report, dict) and isinstance(tmp, Path)
    assert (report["segments"], report["items"], report["systems"]) == (ITEMS * 13, ITEMS, 13)
    profile = load_profile(tmp / "p.json")
    assert profile.id == report["profile"]["id"] and profile.id == f"cal-{profile.sha256[:12]}"
    assert 1 <= len(profile.weights) <= 5 and all(w > 0 for w in profile.weights.values())
    assert sum(profile.weights.values()) == pytest.approx(1.0, abs=1e-5)
    [held, cv] = report["blocks"]
    assert held["items"] == ITEMS // 2 and cv["items"] == ITEMS
    for block in (held, cv):
        assert {"learned", "spec composite", "chrf_plus_plus"} <= set(block["rows"])
        assert {"chrf_plus_plus", "spec composite"} <= set(block["learned_minus"])
        for row in block["rows"].values():
            assert row["tau"]["low"] <= row["tau"]["value"] <= row["tau"]["high"]
            assert 0.0 <= row["acc23"]["value"] <= 1.0
    assert isinstance(report["verdict"]["adopt"], bool) and len(report["verdict"]["lines"]) == 4
    assert profile.definition["trained_on"]["labels"] == "rank"  # the default within-item fit (decisions §43)


def test_raw_labels_are_the_papers_fit_and_recorded(fitted: dict[str, object]) -> None:
    tmp = fitted["dir"]
    assert isinstance(tmp, Path)
    result = runner.invoke(app, ["calibrate", "-j", str(fitted["judgments"]), "--cards", str(tmp / "cards"),
                                 "--labels", "raw", "-o", str(tmp / "raw.json"), "-b", "20", "--seeds", "0"])
    assert result.exit_code == 0, result.output
    raw, rank = load_profile(tmp / "raw.json"), load_profile(tmp / "p.json")
    assert raw.definition["trained_on"]["labels"] == "raw" and raw.id != rank.id


def test_chrf_tau_equals_scipy_on_the_cards(fitted: dict[str, object]) -> None:
    """The cross-validation block scores single metrics on every segment: chrF++'s τ is the mean over source
    items of scipy's τ_b between the cards' per-entry chrF++ and the MQM scores (0 where chrF++ ties all)."""
    tmp, report = fitted["dir"], fitted["report"]
    assert isinstance(tmp, Path) and isinstance(report, dict)
    mqm: dict[tuple[str, str], float] = {}
    for line in Path(str(fitted["judgments"])).read_text(encoding="utf-8").splitlines()[1:]:
        f = line.split("\t")
        mqm[(f[2], f[3])] = float(f[7])
    chrf: dict[str, dict[str, float]] = {}
    for card_path in sorted((tmp / "cards").glob("*.json")):
        card = json.loads(card_path.read_text(encoding="utf-8"))
        for r in card["results"]:
            chrf.setdefault(str(r["entry_id"]), {})[card["method"]["name"]] = r["entry_chrf"]
    taus = []
    for item, systems in chrf.items():
        m = np.array([systems[s] for s in sorted(systems)])
        h = np.array([mqm[(item, s)] for s in sorted(systems)])
        if np.ptp(h) > 0:
            taus.append(kendalltau(m, h).statistic if np.ptp(m) > 0 else 0.0)
    assert report["blocks"][1]["rows"]["chrf_plus_plus"]["tau"]["value"] == pytest.approx(np.mean(taus))


def test_evaluate_an_existing_profile_on_cards(fitted: dict[str, object]) -> None:
    tmp = fitted["dir"]
    assert isinstance(tmp, Path)
    result = runner.invoke(app, ["calibrate", "evaluate", "--profile", str(tmp / "p.json"), "-j",
                                 str(fitted["judgments"]), "--cards", str(tmp / "cards"), "-b", "30", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["mode"] == "evaluate" and report["first_stage"] == {} and len(report["blocks"]) == 1
    assert report["blocks"][0]["segments"] == ITEMS * 13
    table = runner.invoke(app, ["calibrate", "evaluate", "--profile", str(tmp / "p.json"), "-j",
                                str(fitted["judgments"]), "--cards", str(tmp / "cards"), "-b", "0"],
                          terminal_width=200)
    assert table.exit_code == 0 and "learned − chrF++" in table.stdout and "verdict:" in table.stdout


def test_refusals(tmp_path: Path, fitted: dict[str, object]) -> None:
    small = tmp_path / "small.tsv"
    _slice(small, 6)  # 6 × 13 = 78 judged segments
    cases = [
        (["calibrate", "-j", str(small), "--from-judgments"], "only 78 judged segments in en-de; calibration needs at "
         "least 80"),
        (["calibrate", "fit", "-j", str(fitted["judgments"])], "give either --cards CARD… or --from-judgments"),
        (["calibrate", "-j", str(fitted["judgments"]), "--from-judgments", "--top", "6"], "--top ≤ 5"),
        (["calibrate", "-j", str(fitted["judgments"]), "--dataset", "de-en", "--from-judgments"], "no judgments for"),
        (["calibrate", "-j", str(fitted["judgments"]), "--from-judgments", "--labels", "ranks"],
         "--labels 'ranks': choose rank or raw"),
        (["calibrate", "evaluate", "--profile", str(small), "-j", str(small), "--from-judgments"], "not JSON"),
    ]
    for args, says in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert says in result.output and len(result.output.strip().splitlines()) == 1, result.output

"""``calibrate --judge DIR``: generated judges (cards from ``metrics generate-judges``, served by the real local
OpenAI-protocol server) scored on the judged segments of a real MQM slice and reported beside every metric.

The server rates each translation 1 + 4 × word-set overlap with its reference (tests/judges/test_judges.py,
written independently of the metric), so the judge's item-grouped τ with MQM is recomputed here with scipy
from that rule alone; the profile never weights a judge; a re-run is answered from the response cache."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from data_paths import MQM_TED

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("providers", "judges")]
from fake_openai import FakeOpenAI  # noqa: E402
from test_judges import EXAMPLES, expected_score, respond  # noqa: E402

from mt_eval.cli import app  # noqa: E402
from mt_eval.scoring.calibrated import load_profile  # noqa: E402

runner = CliRunner()
ITEMS = 10  # × 13 systems = 130 judged segments, of items whose outputs people scored differently


def _slice(path: Path) -> list[list[str]]:
    lines = (MQM_TED / "ted_ende.src_ref_hyp_mqm.tsv").read_text(encoding="utf-8").splitlines(keepends=True)
    scores: dict[str, set[str]] = {}
    for line in lines[1:]:
        f = line.split("\t")
        scores.setdefault(f[2], set()).add(f[7].strip())
    keep = [item for item, values in scores.items() if len(values) > 2][:ITEMS]  # items people tell apart
    rows = [r for r in lines[1:] if r.split("\t")[2] in keep]
    path.write_text(lines[0] + "".join(rows), encoding="utf-8")
    return [r.rstrip("\n").split("\t") for r in rows]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    tmp = tmp_path_factory.mktemp("calibrate-judges")
    rows = _slice(tmp / "ende.tsv")
    examples = tmp / "examples.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLES), encoding="utf-8")
    cache = tmp / "cache.sqlite"
    with FakeOpenAI(responder=respond) as server:
        made = runner.invoke(app, ["metrics", "generate-judges", "--task", "English to German talks", "--examples",
                                   str(examples), "--model", "judge-m", "--base-url", server.base_url, "-o",
                                   str(tmp / "judges"), "--criteria", "1", "--rubrics", "0", "--cache", str(cache)])
        assert made.exit_code == 0, made.output
        before = len(server.requests)
        args = ["calibrate", "-j", str(tmp / "ende.tsv"), "--from-judgments", "--judge", str(tmp / "judges"),
                "--judge-cache", str(cache), "-o", str(tmp / "p.json"), "-b", "20", "--seeds", "1", "--global-fit",
                "--json"]  # --global-fit: within-item PLS finds no signal on half of so few items
        first = runner.invoke(app, args)
        assert first.exit_code == 0, first.output
        sent = len(server.requests) - before
        again = runner.invoke(app, args)
        assert again.exit_code == 0, again.output
        resent = len(server.requests) - before - sent
    return {"rows": rows, "report": json.loads(first.stdout), "sent": sent, "resent": resent, "dir": tmp}


def test_the_judge_is_reported_with_the_tau_its_rule_gives(run: dict[str, object]) -> None:
    report, rows = run["report"], run["rows"]
    assert isinstance(report, dict) and isinstance(rows, list)
    [judge] = [k for k in report["blocks"][1]["rows"] if k.startswith("judge")]
    judged = [r for r in rows if not r[3].startswith("ref")]
    assert len(judged) == report["segments"]
    assert run["sent"] == len({(r[4], r[5], r[6]) for r in judged})  # one request per distinct prompt (cached)
    taus = []
    for item in dict.fromkeys(r[2] for r in judged):
        mine = [r for r in judged if r[2] == item]
        m = np.array([expected_score(r[6], r[5]) for r in mine], dtype=float)
        h = np.array([float(r[7]) for r in mine])
        if np.ptp(h) > 0:
            taus.append(kendalltau(m, h).statistic if np.ptp(m) > 0 else 0.0)
    assert report["blocks"][1]["rows"][judge]["tau"]["value"] == pytest.approx(np.mean(taus))
    assert judge in report["blocks"][0]["rows"] and judge not in report["candidates"]
    weights = load_profile(Path(str(run["dir"])) / "p.json").weights
    assert weights and judge not in weights  # a profile weights only what a card can carry and verify recompute


def test_a_rerun_is_answered_from_the_cache(run: dict[str, object]) -> None:
    assert run["resent"] == 0


def test_a_missing_judge_folder_is_one_line(run: dict[str, object]) -> None:
    tmp = run["dir"]
    assert isinstance(tmp, Path)
    result = runner.invoke(app, ["calibrate", "-j", str(tmp / "ende.tsv"), "--from-judgments", "--judge",
                                 str(tmp / "no-such-dir"), "-b", "0", "--seeds", "0"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output

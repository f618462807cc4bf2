"""``calibrate --judge DIR``: generated judges (cards from ``metrics generate-judges``, served by the real local
OpenAI-protocol server) scored on the judged segments of a real MQM slice and reported beside every metric.

The server rates each translation 1 + 4 × word-set overlap with its reference (tests/judges/test_judges.py,
written independently of the metric), so the judge's item-grouped τ with MQM is recomputed here with scipy
from that rule alone; the judge is a candidate, and a profile names the judge card of each judge it weights; a
re-run is answered from the response cache. A judge whose answers follow the labels (a hidden quality only it
sees) is weighted, and its profile is used on cards: ``score --profile P --judge``, ``verify``, ``compare``."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import kendalltau
from typer.testing import CliRunner

from data_paths import MQM_TED, NTREX

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "judges"))
from test_judges import EXAMPLES, expected_score, respond

from mt_eval.cli import app
from mt_eval.metrics.judges import JudgeSpec, card_sha256
from mt_eval.metrics.judges.cards import write_cards
from mt_eval.scoring.calibrated import load_profile
from mt_eval.scoring.composite import normalise
from support.fake_openai import FakeOpenAI

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
    assert judge in report["blocks"][0]["rows"] and judge in report["candidates"]  # offered to the PLS
    profile = load_profile(Path(str(run["dir"])) / "p.json")
    assert profile.weights and set(profile.judges) == ({judge} if judge in profile.weights else set())


def test_a_rerun_is_answered_from_the_cache(run: dict[str, object]) -> None:
    assert run["resent"] == 0


def test_a_missing_judge_folder_is_one_line(run: dict[str, object]) -> None:
    tmp = run["dir"]
    assert isinstance(tmp, Path)
    result = runner.invoke(app, ["calibrate", "-j", str(tmp / "ende.tsv"), "--from-judgments", "--judge",
                                 str(tmp / "no-such-dir"), "-b", "0", "--seeds", "0"])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output


# --- a judge that carries the signal: weighted, named in the profile, and the profile used on cards ------------

SIGNAL = "judge_hidden_quality"
SYSTEMS = ("sys-a", "sys-b", "sys-c")
N_ITEMS = 30  # × 3 systems = 90 judged segments


def _signal_data(tmp: Path) -> dict[str, object]:
    """DA judgments whose labels follow a hidden quality q (1–5) that only the judge sees: each output drops one
    word of its reference (which word is the system's, not q's), so the surface metrics carry no signal."""
    rng = np.random.default_rng(7)
    src = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:N_ITEMS]
    ref = (NTREX / "newstest2019-ref.deu.txt").read_text(encoding="utf-8").splitlines()[:N_ITEMS]
    quality: dict[str, int] = {}
    rows = ["dataset\tentry\tsystem\tscore\tsource\treference\thypothesis"]
    outputs: dict[str, list[str]] = {s: [] for s in SYSTEMS}
    for i, (s, r) in enumerate(zip(src, ref, strict=True)):
        words = r.split()
        for k, system in enumerate(SYSTEMS):
            hyp = " ".join(words[:k + 1] + words[k + 2:])
            q = int(rng.integers(1, 6))
            quality[hyp] = q
            outputs[system].append(hyp)
            rows.append(f"en-de\t{i + 1}\t{system}\t{20 * q - rng.uniform(0, 5):.3f}\t{s}\t{r}\t{hyp}")
    (tmp / "da.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    (tmp / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp / "ref.txt").write_text("\n".join(ref) + "\n", encoding="utf-8")
    for system, hyps in outputs.items():
        (tmp / f"{system}.txt").write_text("\n".join(hyps) + "\n", encoding="utf-8")
    assert len(quality) == N_ITEMS * len(SYSTEMS)  # every output distinct: the judge's answer is q, unambiguously
    return quality


@pytest.fixture(scope="module")
def signal(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, object]]:
    tmp = tmp_path_factory.mktemp("judge-signal")
    quality = _signal_data(tmp)

    def answer(body: dict[str, object]) -> str:
        prompt = str(body["messages"][-1]["content"])  # type: ignore[index]
        out = re.search(r"Translation to rate[^\n]*\n(.*?)\n\nRate the translation", prompt, re.DOTALL)
        return json.dumps({"score": quality.get(out.group(1), 3) if out else 3, "explanation": "hidden"})

    with FakeOpenAI(responder=answer) as server:
        spec = JudgeSpec(id=SIGNAL, kind="single", criterion="Hidden quality", description="How good is it?",
                         task="English to German news", model="judge-m", base_url=server.base_url)
        [card] = write_cards([spec], tmp / "judges", "tests")
        fitted = runner.invoke(app, ["calibrate", "-j", str(tmp / "da.tsv"), "--from-judgments", "--judge", str(card),
                                     "--judge-cache", str(tmp / "cache.sqlite"), "-o", str(tmp / "p.json"),
                                     "-b", "20", "--seeds", "0", "--json"])
        assert fitted.exit_code == 0, fitted.output
        yield {"dir": tmp, "server": server, "card": card, "quality": quality, "report": json.loads(fitted.stdout),
               "after_fit": len(server.requests)}


def _score(signal: dict[str, object], system: str, *extra: str) -> Any:
    tmp = signal["dir"]
    assert isinstance(tmp, Path)
    return runner.invoke(app, ["score", "--source-file", str(tmp / "src.txt"), "--reference-file", str(tmp / "ref.txt"),
                               "-l", "en-de", "-p", str(tmp / f"{system}.txt"), "--system", system, "-b", "20",
                               "--runs-dir", str(tmp / "runs"), "--profile", str(tmp / "p.json"), *extra])


def test_a_judge_with_signal_is_weighted_and_named_by_the_profile(signal: dict[str, object]) -> None:
    report = signal["report"]
    assert isinstance(report, dict)
    assert SIGNAL in report["candidates"] and report["segments"] == N_ITEMS * len(SYSTEMS)
    profile = load_profile(Path(str(signal["dir"])) / "p.json")
    assert profile.weights.get(SIGNAL, 0.0) > 0  # weighted; profile weights are in each metric's own units, so
    first = report["first_stage"]  # compare on the standardised first stage: the judge carries the signal
    assert max(first, key=first.get) == SIGNAL and first[SIGNAL] > 2 * max(v for k, v in first.items() if k != SIGNAL)
    card = signal["card"]
    assert isinstance(card, Path)
    assert profile.judges == {SIGNAL: {"sha256": card_sha256(card.read_text(encoding="utf-8"))}}
    assert signal["after_fit"] == N_ITEMS * len(SYSTEMS)  # one request per distinct segment


def test_the_profile_needs_its_judge_card_on_score(signal: dict[str, object], tmp_path: Path) -> None:
    refused = _score(signal, "sys-a", "-o", str(tmp_path / "x.json"))
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1, refused.output
    assert SIGNAL in refused.output and "--judge" in refused.output and not (tmp_path / "x.json").exists()


def test_scored_verified_and_compared_under_the_judge_profile(signal: dict[str, object]) -> None:
    tmp, server, card, quality = signal["dir"], signal["server"], signal["card"], signal["quality"]
    assert isinstance(tmp, Path) and isinstance(server, FakeOpenAI) and isinstance(quality, dict)
    judge = ["--judge", str(card), "--judge-cache", str(tmp / "cache.sqlite")]
    before = len(server.requests)
    for system in ("sys-a", "sys-b"):
        result = _score(signal, system, "-o", str(tmp / f"{system}.json"), *judge)
        assert result.exit_code == 0, result.output
    weights = load_profile(tmp / "p.json").weights
    scored = json.loads((tmp / "sys-a.json").read_text(encoding="utf-8"))
    for r in scored["results"]:
        v = r["metrics"]
        assert v[SIGNAL] == (quality[r["predicted"]] - 1) / 4  # what the judge answered
        by_hand = sum(w * (v[m] if m == SIGNAL else float(normalise(m, v[m]))) for m, w in weights.items())
        assert v["composite"] == pytest.approx(by_hand)
    assert scored["metrics"][SIGNAL]["weight"] == pytest.approx(weights[SIGNAL])
    for system in ("sys-a", "sys-b"):
        assert runner.invoke(app, ["verify", str(tmp / f"{system}.json")]).exit_code == 2
        ok = runner.invoke(app, ["verify", str(tmp / f"{system}.json"), *judge])
        assert ok.exit_code == 0, ok.output
    assert len(server.requests) == before  # calibrate judged these very segments: score and verify sent nothing
    compared = runner.invoke(app, ["compare", str(tmp / "sys-a.json"), str(tmp / "sys-b.json"), "-b", "50",
                                   "--json"])
    assert compared.exit_code == 0, compared.output
    for row in json.loads(compared.stdout)["systems"]:  # read from the sidecars: the judge's stored statistics
        card = json.loads((tmp / f"{row['name']}.json").read_text(encoding="utf-8"))["scores"]
        assert row["scores"]["composite"]["point"] == pytest.approx(card["composite"])
        assert row["scores"][SIGNAL]["point"] == pytest.approx(card[SIGNAL])


def test_calibrate_evaluate_scores_the_profiles_judge(signal: dict[str, object]) -> None:
    tmp, card = signal["dir"], signal["card"]
    assert isinstance(tmp, Path)
    args = ["calibrate", "evaluate", "--profile", str(tmp / "p.json"), "-j", str(tmp / "da.tsv"), "--from-judgments",
            "-b", "20", "--json"]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and SIGNAL in refused.output and "--judge" in refused.output, refused.output
    result = runner.invoke(app, [*args, "--judge", str(card), "--judge-cache", str(tmp / "cache.sqlite")])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    rows = report["blocks"][0]["rows"]
    assert report["warnings"] == [] and rows["learned"]["tau"]["value"] > 0.8  # the judge's signal is scored
    assert rows["learned"]["tau"]["value"] > rows["chrf_plus_plus"]["tau"]["value"] + 0.5

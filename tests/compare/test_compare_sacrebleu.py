"""p-values agree with sacrebleu's own paired tests on the same outputs (Scoring Spec §8.2).

``compare`` rebuilds per-entry statistics from the cards, so agreement here covers the whole
card → rescore → resample path. Same seed (12345, sacrebleu's default): our resamples are
sacrebleu's, so p-values coincide up to one resample (sacrebleu sums in float32). Another seed:
independent Monte-Carlo estimates of the same p, so they must agree within Monte-Carlo error
(|Δp| ≤ 0.05; the binomial standard error of a difference at p ≈ 0.2 and B = 1000 is ≈ 0.018).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from compare_helpers import load
from sacrebleu.metrics import BLEU, CHRF
from sacrebleu.significance import PairedTest

from mt_eval.comparison import compare

B = 1000
ONE_COUNT = 1 / (B + 1) + 1e-12
MC_TOL = 0.05
SACRE_NAMES = {"chrf": "chrF2", "bleu": "BLEU"}


def sacrebleu_p(refs: list[str], systems: list[tuple[str, list[str]]], test: str, n: int) -> dict:
    """(system, metric) -> (score, p) from ``PairedTest``, what ``sacrebleu --paired-bs/-ar`` runs."""
    metrics = {"chrf": CHRF(), "bleu": BLEU()}
    _, scores = PairedTest(systems, metrics, [refs], test_type=test, n_samples=n)()
    out = {}
    for metric, name in SACRE_NAMES.items():
        for (sys_name, _), res in zip(systems[1:], scores[name][1:], strict=True):
            out[sys_name, metric] = (res.score, res.p_value)
    return out


@pytest.fixture(autouse=True)
def _default_seed(monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)  # sacrebleu then uses 12345


@pytest.fixture(scope="module")
def three(cards):
    return [load(cards[name]) for name in ("a", "b", "near_a")]


def test_paired_bootstrap_p_values_match_sacrebleu(ntrex_text, hyps, three) -> None:
    refs = ntrex_text[1]
    systems = [(n, hyps[n]) for n in ("a", "b", "near_a")]
    sacre = sacrebleu_p(refs, systems, "bs", B)
    ours = compare(three, metrics=["chrf", "bleu"], names=["a", "b", "near_a"], n_resamples=B)
    other = compare(three, metrics=["chrf", "bleu"], names=["a", "b", "near_a"], n_resamples=B, seed=2024)
    for (name, metric), (score, p) in sacre.items():
        row = ours.result(name, metric)
        assert row.score_b == pytest.approx(score, abs=1e-9)
        assert abs(row.p_value - p) <= ONE_COUNT, (name, metric, row.p_value, p)
        p_other = other.result(name, metric).p_value
        assert abs(p_other - p) <= MC_TOL or max(p, p_other) < 0.01
    # The close pair is a real check: its p-values are far from the 1/(B+1) floor.
    assert ours.result("near_a", "chrf").p_value > 0.05 and ours.result("near_a", "bleu").p_value > 0.05


def test_approximate_randomization_matches_sacrebleu(ntrex_text, hyps, three) -> None:
    refs = ntrex_text[1]
    n = 2000
    sacre = sacrebleu_p(refs, [(k, hyps[k]) for k in ("a", "b", "near_a")], "ar", n)
    ours = compare(three, metrics=["chrf", "bleu"], names=["a", "b", "near_a"], method="approx-rand", n_trials=n)
    for (name, metric), (_, p) in sacre.items():
        assert ours.result(name, metric).p_value == pytest.approx(p, abs=1e-12), (name, metric)
    assert ours.method == "approx-rand" and ours.n_trials == n


def test_sacrebleu_command_line_paired_bs_agrees(cards, ntrex_text, hyps, tmp_path: Path) -> None:
    """The same figures as the ``sacrebleu -i BASE SYS --paired-bs`` command prints."""
    ref = tmp_path / "ref.es"
    ref.write_text("\n".join(ntrex_text[1]) + "\n", encoding="utf-8")
    paths = []
    for name in ("a", "near_a"):
        paths.append(tmp_path / name)
        paths[-1].write_text("\n".join(hyps[name]) + "\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "sacrebleu", str(ref), "-i", *map(str, paths), "-m", "chrf", "bleu",
           "--paired-bs", "-f", "text", "-w", "4"]  # fmt: skip
    printed = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    p_chrf, p_bleu = (float(x) for x in re.findall(r"\(p = ([0-9.]+)\)", printed))
    ours = compare([load(cards["a"]), load(cards["near_a"])], metrics=["chrf", "bleu"])
    cand = ours.systems[1].name
    assert abs(ours.result(cand, "chrf").p_value - p_chrf) <= ONE_COUNT + 5e-5  # printed to 4 places
    assert abs(ours.result(cand, "bleu").p_value - p_bleu) <= ONE_COUNT + 5e-5


def test_real_apertium_output_against_degraded_copy(apertium_cards, ntrex_text) -> None:
    """Real engine output (Apertium eng-spa) against a copy missing every fourth word."""
    refs = ntrex_text[1]
    read = lambda p: p.read_text(encoding="utf-8").split("\n")[: len(refs)]  # noqa: E731
    systems = [("degraded", read(apertium_cards["degraded_txt"])), ("apertium", read(apertium_cards["apertium_txt"]))]
    sacre = sacrebleu_p(refs, systems, "bs", B)
    cards = [load(apertium_cards["apertium_degraded"]), load(apertium_cards["apertium"])]
    ours = compare(cards, metrics=["chrf", "bleu", "ter"], names=["degraded", "apertium"])
    for metric in ("chrf", "bleu"):
        score, p = sacre["apertium", metric]
        row = ours.result("apertium", metric)
        assert row.score_b == pytest.approx(score, abs=1e-9)
        assert abs(row.p_value - p) <= ONE_COUNT
        assert row.significant and row.verdict == "better"
    assert ours.result("apertium", "ter").verdict == "better"  # lower TER reads as better
    assert ours.result("apertium", "ter").delta < 0

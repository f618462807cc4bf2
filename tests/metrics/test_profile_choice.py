"""Profile A vs B for the same Spanish output (Scoring Spec §4.1–§4.3, docs/decisions.md §19 and §22).

The es card declares an Apertium analyser, so a run scores profile A with ``fst_acceptance_rate``;
``--skip-analyser`` (``skip_analyser=True``) scores the very same output with profile B. Both
composites are recomputed here by hand as Σ w·normalised(v) / Σ w over the metrics that have a
value, with the spec's weight tables typed in from §4.3 (not imported from the code under test), under
the default rule ``anchored-2`` as docs/decisions.md §22 and §67 state it: reference-free terms scaled by
adequacy × word order, near-miss credit for the matches, saturated FST and hallucination credit, and the
whole multiplied by 1 − critical_error_rate.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from mt_eval.analyzers.registry import analyser_status
from mt_eval.api import score_predictions
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.languages.card import language_card
from mt_eval.scoring.intervals import BootstrapConfig

# Scoring Spec §4.3, typed from the spec's tables.
SPEC_A = {"fst_acceptance_rate": 0.25, "morphological_accuracy": 0.15, "chrf_plus_plus": 0.15,
          "semantic_score": 0.15, "equivalent_match_rate": 0.10, "code_switching_rate": 0.05,
          "terminology_adherence": 0.05, "hallucination_rate": 0.05, "exact_match_rate": 0.05}
SPEC_B = {"semantic_score": 0.25, "chrf_plus_plus": 0.25, "equivalent_match_rate": 0.15, "exact_match_rate": 0.10,
          "code_switching_rate": 0.10, "terminology_adherence": 0.05, "hallucination_rate": 0.05,
          "orthographic_accuracy": 0.05}
# §4.2: chrF++ is divided by 100, the two "lower is better" rates are inverted.
DIV100 = {"chrf_plus_plus"}
INVERT = {"code_switching_rate", "hallucination_rate"}
# docs/decisions.md §22: these earn weight × adequacy, A = min(1, chrF++/52) · exp(1 − max(r, 1/r))
REFERENCE_FREE = {"fst_acceptance_rate", "code_switching_rate", "hallucination_rate", "terminology_adherence",
                  "orthographic_accuracy"}

N = 30


# docs/decisions.md §67 (anchored-2): word order O = min(1, (BLEU / chrF++) / 0.5) scales the reference-free
# terms (with adequacy) and semantic_score; exact/equivalent match earn at least chrF++/100 × O; FST acceptance
# earns full credit from 0.85, hallucination up to the human references' rate 0.05.
MATCHES = {"exact_match_rate", "equivalent_match_rate"}


def _normalised(metric_id: str, value: float, scores: dict[str, Any], order: float) -> float:
    if metric_id == "fst_acceptance_rate":
        return min(1.0, value / 0.85)
    if metric_id == "hallucination_rate":
        return min(1.0, (1 - value) / 0.95)
    if metric_id in MATCHES:
        return max(value, scores["chrf_plus_plus"] / 100 * order)
    if metric_id in DIV100:
        return value / 100
    if metric_id in INVERT:
        return 1 - value
    return value


def _by_hand(scores: dict[str, Any], weights: dict[str, float]) -> tuple[float, dict[str, float]]:
    available = {m: w for m, w in weights.items() if scores.get(m) is not None}
    total = sum(available.values())
    r = scores["length_ratio"]
    adequacy = min(1.0, scores["chrf_plus_plus"] / 52.0) * math.exp(1 - max(r, 1 / r))
    order = min(1.0, scores["bleu"] / scores["chrf_plus_plus"] / 0.5)
    scale = {m: adequacy * order for m in REFERENCE_FREE} | {"semantic_score": order}
    composite = sum(w * _normalised(m, scores[m], scores, order) * scale.get(m, 1.0)
                    for m, w in available.items()) / total
    return composite * (1 - scores["critical_error_rate"]), {m: w / total for m, w in available.items()}


def _degrade(i: int, reference: str) -> str:
    """A plausible MT output: most lines verbatim, some truncated, some with English left in."""
    if i % 3 == 1:
        return " ".join(reference.split()[:-3])
    if i % 3 == 2:
        return reference.rstrip(".") + " but nobody knows what happened."
    return reference


@pytest.fixture(scope="module")
def runs(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    if analyser_status(language_card("es")) is not None:
        pytest.skip("apertium-eng-spa is not installed")
    src = (ntrex_dir / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:N]
    ref = (ntrex_dir / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]
    dataset = Dataset(
        info=DatasetInfo(id="ntrex-en-es-30", source_language="en", target_language="es"),
        entries=[Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(src, ref, strict=True))],
        sha256="0" * 64,
    )
    tmp = tmp_path_factory.mktemp("profiles")
    hyp = tmp / "output.txt"
    hyp.write_text("\n".join(_degrade(i, r) for i, r in enumerate(ref)) + "\n", encoding="utf-8")
    out: dict[str, dict[str, Any]] = {}
    for name, skip in (("A", False), ("B", True)):
        out[name] = score_predictions(dataset, hyp, runs_dir=tmp / name, skip_analyser=skip,
                                      bootstrap=BootstrapConfig(n_resamples=0)).card
    return out


def test_es_card_scores_profile_a_with_fst(runs: dict[str, dict[str, Any]]) -> None:
    card = runs["A"]
    scores = card["scores"]
    assert card["profile"] == "A" and card["analyser_skipped"] is None
    assert card["fst_version"].startswith("lt-proc spa-eng.automorf.bin")
    assert 0.9 < scores["fst_acceptance_rate"] < 1.0  # real Spanish; a few names/English words rejected
    assert scores["fst_accepted"] > 0
    # Available here: FST, chrF++, EM, code-switching, hallucination (en→es lexicon). Not available:
    # morphology (no gold analyses), semantic (not implemented), equivalent match (no variants),
    # terminology (no file).
    for missing in ("morphological_accuracy", "semantic_score", "equivalent_match_rate", "terminology_adherence"):
        assert scores[missing] is None
    assert card["composite_rule"] == "anchored-2"  # the default (§67), the rule _by_hand types in
    composite, weights = _by_hand(scores, SPEC_A)
    assert set(weights) == {"fst_acceptance_rate", "chrf_plus_plus", "exact_match_rate", "code_switching_rate",
                            "hallucination_rate"}
    # Σw = 0.25 + 0.15 + 0.05 + 0.05 + 0.05 = 0.55 → FST 0.25/0.55 = 5/11, chrF++ 3/11, the others 1/11.
    assert weights["fst_acceptance_rate"] == pytest.approx(5 / 11)
    assert weights["chrf_plus_plus"] == pytest.approx(3 / 11)
    for m in ("exact_match_rate", "code_switching_rate", "hallucination_rate"):
        assert weights[m] == pytest.approx(1 / 11)
    assert scores["composite"] == pytest.approx(composite, abs=1e-12)
    for metric_id, w in weights.items():
        assert card["metrics"][metric_id]["weight"] == pytest.approx(w)
    # orthographic accuracy is computed but carries no weight in profile A
    assert scores["orthographic_accuracy"] is not None and card["metrics"]["orthographic_accuracy"]["weight"] is None


def test_skipped_analyser_scores_profile_b(runs: dict[str, dict[str, Any]]) -> None:
    card = runs["B"]
    scores = card["scores"]
    assert card["profile"] == "B"
    assert card["analyser_skipped"] == language_card("es").analyser
    assert card["fingerprint"]["components"]["analyser_skipped"] == card["analyser_skipped"]
    assert any("--skip-analyser" in w for w in card["warnings"])
    # Without the analyser: no FST metric at all; code-switching cannot tell English from Spanish
    # (same script) and hallucination has no analyses to look up, so both are null.
    assert "fst_acceptance_rate" not in card["metrics"] and scores["fst_acceptance_rate"] is None
    assert scores["code_switching_rate"] is None and scores["hallucination_rate"] is None
    composite, weights = _by_hand(scores, SPEC_B)
    # Σw = chrF++ 0.25 + EM 0.10 + orthography 0.05 = 0.40 → 0.625, 0.25, 0.125.
    assert weights == pytest.approx({"chrf_plus_plus": 0.625, "exact_match_rate": 0.25, "orthographic_accuracy": 0.125})
    assert scores["composite"] == pytest.approx(composite, abs=1e-12)
    for metric_id, w in weights.items():
        assert card["metrics"][metric_id]["weight"] == pytest.approx(w)


def test_same_output_different_composites(runs: dict[str, dict[str, Any]]) -> None:
    a, b = runs["A"]["scores"], runs["B"]["scores"]
    for shared in ("chrf_plus_plus", "exact_match_rate", "orthographic_accuracy"):
        assert a[shared] == pytest.approx(b[shared])  # the output and the surface metrics are identical
    assert a["composite"] != pytest.approx(b["composite"], abs=1e-3)
    assert runs["A"]["fingerprint"]["hash"] != runs["B"]["fingerprint"]["hash"]

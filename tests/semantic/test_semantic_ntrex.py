"""Issue 15's must-show for ``semantic_score`` on NTREX-128 eng→spa: an output scored against its true reference
beats the same output against a shuffled reference, and a right-language output beats a wrong-language one,
for ≥ 95 % of entries.

The outputs are real machine translations (Apertium eng→spa), not the reference itself (which would score 1
trivially). Wrong-language outputs: Apertium eng→cat of the same line (same system, same meaning, wrong
language) and the *human* Catalan, Portuguese, French and Italian references of the line — fluent, faithful
translations into a neighbouring language, the hardest case for a multilingual model, which maps translations
together whatever their language. Without the wrong-language check (decisions §40) the human ones beat
Apertium's Spanish for 10–15 % of lines (Spanish above them 85–90 %); with it, Spanish is above Catalan on
98.7 %, Portuguese 96.7 % (French and Italian 100 %, measured by benchmarks/bench_semantic.py).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.embeddings import SemanticConfig
from mt_eval.metrics.semantic import SemanticScore

# the slow stage (make test-slow, run by CI on every submission): ~45 s of embedding for one fixture
pytestmark = pytest.mark.slow
NTREX = Path(__file__).resolve().parents[1] / "data" / "ntrex128"
N = 150  # ~35 s of embedding on one loaded core (3 × 150 texts)
SHARE = 0.95
# human references in the languages of Spanish's script and family that are hardest to tell from it (French and
# Italian: 100 %, benchmarks/bench_semantic.py; each language costs 150 more embeddings)
WRONG = ("cat", "por")


def ntrex(name: str, n: int = N) -> list[str]:
    return (NTREX / f"newstest2019-{name}.txt").read_text(encoding="utf-8").splitlines()[:n]


def apertium(pair: str, lines: list[str]) -> list[str]:
    """One Apertium call for all lines (``-u``: no unknown-word marks); one output line per input line."""
    out = subprocess.run(["apertium", "-u", pair], input="\n".join(lines) + "\n", capture_output=True, text=True,
                         check=True, timeout=120).stdout.splitlines()
    assert len(out) == len(lines), (pair, len(out))
    return out


def rotated(items: list[str]) -> list[str]:
    """Each line with the next line's text: a derangement (no line keeps its own)."""
    return items[1:] + items[:1]


@pytest.fixture(scope="module")
def scores(e5: SemanticConfig) -> dict[str, np.ndarray]:
    if shutil.which("apertium") is None:
        pytest.skip("apertium is not installed")
    eng, spa = ntrex("src.eng"), ntrex("ref.spa")
    mt_spa, mt_cat = apertium("eng-spa", eng), apertium("eng-cat", eng)
    metric = SemanticScore(e5)  # one embedder: the Spanish references are embedded once for both pairings

    def score(outputs: list[str], refs: list[str]) -> np.ndarray:
        entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(eng, refs, strict=True))]
        ctx = MetricContext(entries=entries, target=language_card("es"), source=language_card("en"))
        metric.prepare(ctx)
        values = metric.entry_values(metric.statistics(outputs, ctx))
        assert values is not None
        return values

    human = {f"human-{lang}": score(ntrex(f"ref.{lang}"), spa) for lang in WRONG}
    return {"true": score(mt_spa, spa), "shuffled": score(mt_spa, rotated(spa)), "catalan": score(mt_cat, spa),
            **human}


def test_the_true_reference_scores_above_a_shuffled_one(scores: dict[str, np.ndarray]) -> None:
    share = float((scores["true"] > scores["shuffled"]).mean())
    assert share >= SHARE, share
    # the rescaling puts unrelated pairs near 0 and real translations well above (measured 0.19 vs 0.74)
    assert scores["shuffled"].mean() < 0.35 < 0.6 < scores["true"].mean()


def test_a_right_language_output_scores_above_a_wrong_language_one(scores: dict[str, np.ndarray]) -> None:
    share = float((scores["true"] > scores["catalan"]).mean())
    assert share >= SHARE, share
    assert scores["catalan"].mean() < scores["true"].mean() - 0.1  # measured 0.50 vs 0.74


@pytest.mark.parametrize("lang", WRONG)
def test_a_right_language_output_scores_above_a_human_translation_into_another_language(
        scores: dict[str, np.ndarray], lang: str) -> None:
    share = float((scores["true"] > scores[f"human-{lang}"]).mean())
    assert share >= SHARE, share
    assert scores[f"human-{lang}"].mean() < 0.1  # each is 0 unless too short to check


def test_the_wrong_language_check_spares_the_right_language(e5: SemanticConfig) -> None:
    """Spanish human references as outputs keep their full score (1.0 against themselves): the check never
    zeroes a right-language output here."""
    spa = ntrex("ref.spa", 60)
    metric = SemanticScore(e5)
    entries = [Entry(id=i + 1, source="x", reference=r) for i, r in enumerate(spa)]
    ctx = MetricContext(entries=entries, target=language_card("es"), source=language_card("en"))
    metric.prepare(ctx)
    assert metric.lid and "wrong-language-0:lingua-" in (metric.signature(ctx.target) or "")
    values = metric.entry_values(metric.statistics(spa, ctx))
    assert values is not None and float(values.min()) > 0.99


def test_the_inputs_are_what_they_claim() -> None:
    eng, spa, cat = ntrex("src.eng"), ntrex("ref.spa"), ntrex("ref.cat")
    assert len(eng) == len(spa) == len(cat) == N and len(set(spa)) == N  # rotation pairs distinct lines
    assert all(a != b for a, b in zip(spa, rotated(spa), strict=True))

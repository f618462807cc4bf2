"""Parallel statistics extraction gives exactly the serial statistics, in the metrics' order."""

from __future__ import annotations

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.languages import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.registry import metrics_for
from mt_eval.scoring.extraction import _bins, extract_statistics


def test_parallel_equals_serial(ntrex_dir):
    refs = (ntrex_dir / "newstest2019-ref.cat.txt").read_text(encoding="utf-8").splitlines()[:300]
    hyps = [" ".join(w for i, w in enumerate(r.split()) if i % 3) for r in refs]
    ctx = MetricContext([Entry(id=i + 1, source="-", reference=r) for i, r in enumerate(refs)],
                        language_card("ca"), language_card("en"))
    serial = extract_statistics(metrics_for(ctx.target), hyps, ctx, parallel=False)
    metrics = metrics_for(ctx.target)
    parallel = extract_statistics(metrics, hyps, ctx, parallel=True)
    assert list(parallel) == [m.id for m in metrics]
    for metric_id, stats in serial.items():
        np.testing.assert_array_equal(parallel[metric_id], stats)
    # the parent can aggregate what the worker extracted (metrics without gold data are NaN)
    surface = {"exact_match_rate", "chrf_plus_plus", "chrf", "bleu", "ter", "length_ratio"}
    for m in metrics:
        if m.id in surface:
            assert np.isfinite(float(m.aggregate(parallel[m.id].sum(axis=0))))


def test_parallel_equals_serial_with_the_spanish_card_on_critical_cases(ntrex_dir):
    """The bins now send the critical flags, BLEU and TER to the worker and chrF++ beside the analyses
    (decisions §86): every statistic must be what one process computes, on outputs built to be flagged
    (a changed number, a dropped name, a lost negation, an empty output, another line's text)."""
    src = (ntrex_dir / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:48]
    refs = (ntrex_dir / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:48]
    def attack(i: int, ref: str) -> str:
        words = ref.split()
        return [ref.replace("1", "7").replace("2", "9"),  # numbers changed
                " ".join(w for w in words if not w[:1].isupper()) or ref,  # capitalised names dropped
                ref.replace(" no ", " ").replace("No ", ""),  # negation lost
                "",  # no output
                refs[(i + 7) % len(refs)],  # another line: unsupported content
                ref][i % 6]
    hyps = [attack(i, r) for i, r in enumerate(refs)]
    entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(src, refs, strict=True))]
    ctx = MetricContext(entries, language_card("es"), language_card("en"))
    serial = extract_statistics(metrics_for(ctx.target), hyps, ctx, parallel=False)
    ctx = MetricContext(entries, language_card("es"), language_card("en"))  # a fresh run cache: nothing shared
    parallel = extract_statistics(metrics_for(ctx.target), hyps, ctx, parallel=True)
    assert list(parallel) == list(serial)
    for metric_id, stats in serial.items():
        np.testing.assert_array_equal(parallel[metric_id], stats, err_msg=metric_id)
    assert serial["critical_error_rate"][:, 0].sum() > 0 and serial["hallucination_rate"][:, 0].sum() > 0


def test_bins_balance_declared_costs():
    metrics = [m for m in metrics_for(language_card("es")) if m.derives_from is None]
    here, there = _bins(metrics)
    assert here and there
    ids = {m.id for m in there} | {m.id for m in here}
    assert ids == {m.id for m in metrics}
    # balanced: the two bins' declared seconds differ by no more than the heaviest metric that may move
    # (the greedy bound); with the Spanish card the analysis-sharing metrics and chrF++ keep one core busy,
    # TER and the rest the other
    movable = [m.cost for m in metrics if not m.shares_analyses]
    assert abs(sum(m.cost for m in here) - sum(m.cost for m in there)) <= max(movable)
    assert sum(m.cost for m in here) > sum(m.cost for m in here if not m.shares_analyses)


def test_the_two_heaviest_surface_metrics_run_on_different_cores():
    """TER and chrF++ are the two heaviest extractions (measured: 12.0 s and 10.1 s of a 9,985-line
    NTREX run's 38 s, hallucination 7.1 s with lt-proc's time, decisions §86): together in the worker they
    made it the run's critical path, 22 s against 15 s here."""
    metrics = [m for m in metrics_for(language_card("es")) if m.derives_from is None]
    here, there = _bins(metrics)
    by_bin = {m.id: side for side, ms in (("here", here), ("there", there)) for m in ms}
    assert by_bin["ter"] != by_bin["chrf_plus_plus"]


def test_metrics_sharing_analyses_stay_in_this_process():
    """FST acceptance, morphology, code-switching and hallucination read one memo of word analyses,
    which the run card's per-entry fst_analysis reuses afterwards: none of them may go to the worker."""
    metrics = [m for m in metrics_for(language_card("es")) if m.derives_from is None]
    here, there = _bins(metrics)
    sharing = {m.id for m in metrics if m.shares_analyses}
    assert sharing == {"fst_acceptance_rate", "morphological_accuracy", "code_switching_rate", "hallucination_rate"}
    assert sharing <= {m.id for m in here} and not sharing & {m.id for m in there}
    assert abs(sum(m.cost for m in here) - sum(m.cost for m in there)) < 1.0  # and the bins still balance


def test_never_forks_from_a_worker_thread():
    """Two runs scored at once in threads (a sweep's cells) would share the one ``_FORKED`` slot: a
    run scored on a worker thread is extracted in its own process, serially."""
    import threading

    from mt_eval.scoring import extraction

    seen: list[bool] = []
    worker = threading.Thread(target=lambda: seen.append(extraction._can_fork()))
    worker.start()
    worker.join()
    assert seen == [False]

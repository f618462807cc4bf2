"""Compute every metric's per-entry statistics once, using both cores on large runs.

Extraction dominates scoring time (sacrebleu's chrF++, TER and BLEU statistics are pure Python),
so on runs of ``PARALLEL_MIN`` entries or more the metrics are split by their declared ``cost``
into two bins and one bin runs in a forked worker (the metrics sharing the run's word analyses
stay in this process, which builds the run card's per-entry analyses from them). Forking shares
the hypotheses and metric objects without pickling them; only the statistics matrices travel
back. Metrics that can ``derive`` their statistics from another's (chrF from chrF++) do so
afterwards, in this process.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from mt_eval.metrics.base import Metric, MetricContext

PARALLEL_MIN = 1500  # below this the fork costs more than it saves (measured: ~0.1 s per fork)

_FORKED: dict[str, Any] = {}


def _bins(metrics: Sequence[Metric]) -> tuple[list[Metric], list[Metric]]:
    """Two-way partition by declared cost: (this process, the forked worker).

    Metrics that read the run's shared word analyses stay together in this process: they share one
    tokenisation and one analyser pass, and the run card's per-entry ``fst_analysis`` is built here
    afterwards from the same memo. The others go greedily, heaviest first, to the lighter bin.
    """
    here = [m for m in metrics if m.shares_analyses]
    there: list[Metric] = []
    for m in sorted((m for m in metrics if not m.shares_analyses), key=lambda m: m.cost, reverse=True):
        (here if sum(x.cost for x in here) <= sum(x.cost for x in there) else there).append(m)
    return here, there


def _extract_forked(ids: list[str]) -> dict[str, np.ndarray]:
    metrics, hyps, ctx = _FORKED["metrics"], _FORKED["hypotheses"], _FORKED["ctx"]
    return {i: metrics[i].statistics(hyps, ctx) for i in ids}


def _can_fork() -> bool:
    """Fork only from the main thread: ``_FORKED`` is one per process, so two runs scoring at once in
    worker threads (a sweep's cells) would hand each other's data to the worker; a run scored on a
    worker thread is extracted serially. (The progress display's refresh thread may be alive: it only
    holds the console's lock for a moment, which the child never takes.)"""
    return (
        threading.current_thread() is threading.main_thread()
        and (os.cpu_count() or 1) >= 2
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


def extract_statistics(
    metrics: Sequence[Metric], hypotheses: Sequence[str], ctx: MetricContext, *, parallel: bool | None = None
) -> dict[str, np.ndarray]:
    """``{metric id: (n, k) statistics}`` in the order of ``metrics``; identical whether parallel or not."""
    ids = {m.id for m in metrics}
    derived = [m for m in metrics if m.derives_from is not None and m.derives_from in ids]
    own = [m for m in metrics if m not in derived]
    for m in metrics:
        m.prepare(ctx)  # aggregate() and signature() need the scorer in this process too
    if parallel is None:
        parallel = len(hypotheses) >= PARALLEL_MIN and _can_fork()
    stats: dict[str, np.ndarray] = {}
    here, there = _bins(own) if parallel else (own, [])
    if there:
        _FORKED.update(metrics={m.id: m for m in there}, hypotheses=hypotheses, ctx=ctx)
        try:
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
                future = pool.submit(_extract_forked, [m.id for m in there])
                for m in here:
                    stats[m.id] = m.statistics(hypotheses, ctx)
                stats.update(future.result())
        finally:
            _FORKED.clear()
    else:
        for m in here:
            stats[m.id] = m.statistics(hypotheses, ctx)
    for m in derived:
        got = m.derive(stats, ctx)
        stats[m.id] = got if got is not None else m.statistics(hypotheses, ctx)
    return {m.id: stats[m.id] for m in metrics}

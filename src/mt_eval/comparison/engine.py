"""Compare several runs with a baseline: CIs per system, paired tests per metric, Holm per metric.

Everything is computed from per-entry sufficient statistics (``MetricTable``): those stored with
each card (its sealed sidecar, ``runcard/statistics.py``; read by ``comparison/loading.py``), or,
for a card without usable ones, rebuilt from its ``results[]`` by ``table_from_card``; either way
a comparison needs nothing but the cards, and gives the same numbers. One set of bootstrap
resamples (``seed``) serves every system, every metric and the composite; the composite of each
resample is ``mt_eval.scoring.composite`` itself, the function that produced the card's composite,
so its interval and p-value belong to the reported number.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from os import PathLike, fspath
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from mt_eval.comparison.changes import sealed_changes
from mt_eval.comparison.checks import UNDIRECTED, check_cards, resolve_metrics, system_names
from mt_eval.comparison.model import COMPOSITE, Comparison, MetricSpec, PairedComparison, SystemScores
from mt_eval.errors import UserError
from mt_eval.runcard.model import RunCard
from mt_eval.scoring.calibrated import card_profile, card_weights
from mt_eval.scoring.composite import DEFAULT_RULE, adequacy_inputs, composite, composite_rule
from mt_eval.scoring.profiles import Weights, weights_of
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats import (
    DEFAULT_SEED,
    Aggregate,
    Combine,
    PairedResult,
    approximate_randomization_many,
    bootstrap_many,
    holm,
    resample_counts,
)
from mt_eval.stats.systems import bootstrap_systems

if TYPE_CHECKING:
    from mt_eval.runcard.statistics import StoredStatistics

Method = Literal["bootstrap", "approx-rand"]
Correction = Literal["holm", "none"]


def composite_combine(profile: Weights, only: Collection[str] | None = None, rule: str = DEFAULT_RULE) -> Combine:
    """The composite over resampled metric values: exactly ``composite(values, profile, rule)``.

    ``only`` limits the metrics it may use (those with a value for every system), as the card's
    composite leaves out a metric without a value.
    """

    def combine(values: dict[str, np.ndarray]) -> np.ndarray:
        out = composite(values if only is None else {m: v for m, v in values.items() if m in only}, profile, rule)
        if out is None:
            raise ValueError(f"the profile weights none of {sorted(values)}")
        return np.asarray(out, dtype=np.float64)

    return combine


def compare(
    cards: Sequence[Mapping[str, Any] | str | PathLike[str]],
    *,
    metrics: list[str] | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    method: Method = "bootstrap",
    correction: Correction = "holm",
    n_trials: int = 10_000,
    names: Sequence[str] | None = None,
    sources: Sequence[str] | None = None,
    statistics: Sequence[StoredStatistics | None] | None = None,
) -> Comparison:
    """Compare run cards with the first one (the baseline) on the same entries.

    ``cards`` are card dicts (or ``RunCard`` models), or paths: a path's card is read with its
    stored statistics (``comparison.loading``), so no metric runs; where they cannot be used a
    ``StatisticsFallbackWarning`` says why and they are rebuilt from ``results[]``. ``statistics``
    passes stored statistics for dict cards (``None`` items: rebuild), as the CLI does.

    ``metrics`` restricts the report (run-card keys such as ``chrf_plus_plus``, ``bleu``, ``ter``,
    or ``composite``; default: every metric with a direction, plus the composite). ``method`` is
    sacrebleu's paired bootstrap (``n_resamples``) or approximate randomisation (``n_trials``, with
    ``n_resamples`` bootstrap resamples for the interval of the difference). ``correction="holm"``
    adjusts p-values across the systems compared with the baseline, separately for each metric.
    ``sources`` (e.g. file paths) name the cards in error messages; ``names`` overrides the system
    names (default: method name and condition, or file stems when those collide).

    Raises ``UserError`` when the cards are not comparable: different ``dataset.sha256``,
    different entry ids, or different profiles.
    """
    _check_options(n_resamples, alpha, method, correction, n_trials)
    loaded = [_load(card) for card in cards]
    dicts = [card for card, _ in loaded]
    stored = list(statistics) if statistics is not None else [s for _, s in loaded]
    if len(stored) != len(dicts):
        raise ValueError("statistics must have one item (or None) per card")
    srcs = list(sources) if sources is not None else [
        str(card) if isinstance(card, str | PathLike) else f"cards[{i}]" for i, card in enumerate(cards)
    ]  # fmt: skip
    from mt_eval.comparison.loading import require_valid

    for given, card, src in zip(cards, dicts, srcs, strict=False):
        if not isinstance(given, str | PathLike):  # a path's card was checked when it was read
            require_valid(card, src)
    labels = list(names) if names is not None else system_names(dicts, srcs)
    rule = _common_rule(dicts, srcs)
    only = _precheck_metrics(metrics, dicts[0], rule) if metrics and len(dicts) >= 2 else None
    tables = tables_from_cards(dicts, sources=srcs, only=only, statistics=stored)
    ds = dicts[0]["dataset"]
    dataset = {k: ds.get(k) for k in ("id", "sha256", "source_language", "target_language", "entry_count")}
    result = compare_tables(
        tables, profile=card_profile(dicts[0]), weights=card_weights(dicts[0]), names=labels, metrics=metrics,
        n_resamples=n_resamples,
        alpha=alpha, seed=seed, method=method, correction=correction, n_trials=n_trials, sources=srcs,
        run_ids=[str(c.get("run_id", "")) for c in dicts], dataset=dataset, rule=rule,
    )  # fmt: skip
    # a shown number that is not the sealed one is listed with its reason, never rewritten silently
    return replace(result, changes=sealed_changes(result, dicts, tables, [s is None for s in stored], rule))


def tables_from_cards(
    cards: Sequence[Mapping[str, Any]],
    *,
    sources: Sequence[str] | None = None,
    only: list[str] | None = None,
    statistics: Sequence[StoredStatistics | None] | None = None,
) -> list[MetricTable]:
    """Check that the cards are comparable, then each one's statistics in baseline entry order.

    A card with ``statistics`` (stored with it) gets them as they are, for the same metrics a rebuild
    would score; the others are rebuilt from ``results[]``, the slow part of a comparison (every
    metric runs again). ``compare_tables`` on the result takes well under a second.
    """
    dicts = [_as_dict(card) for card in cards]
    srcs = list(sources) if sources is not None else [f"cards[{i}]" for i in range(len(dicts))]
    stored = list(statistics) if statistics is not None else [None] * len(dicts)
    if len(srcs) != len(dicts) or len(stored) != len(dicts):
        raise ValueError("sources and statistics must name every card")
    base_ids = check_cards(dicts, srcs, [s.entry_ids if s is not None else None for s in stored])
    ids = [s.entry_ids if s is not None else [r["entry_id"] for r in card["results"]]
           for card, s in zip(dicts, stored, strict=True)]  # fmt: skip
    from mt_eval.runcard.rescore import table_from_card  # heavy (metrics, sacrebleu): import on use

    tables = [
        _stored_table(s, card, only) if s is not None else table_from_card(card, only=only)
        for card, s in zip(dicts, stored, strict=True)
    ]
    return [_aligned(table, card_ids, base_ids) for table, card_ids in zip(tables, ids, strict=True)]


def _stored_table(stored: StoredStatistics, card: Mapping[str, Any], only: list[str] | None) -> MetricTable:
    """Stored statistics as a table over exactly the metrics a rebuild would score (``only``)."""
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import configured_metrics, target_card

    target = target_card(card)
    return stored.table(metrics_for(target, only, configured_metrics(card)), target)


def compare_tables(
    tables: Sequence[MetricTable],
    *,
    profile: str,
    weights: Weights | None = None,
    names: Sequence[str],
    metrics: list[str] | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    method: Method = "bootstrap",
    correction: Correction = "holm",
    n_trials: int = 10_000,
    sources: Sequence[str] | None = None,
    run_ids: Sequence[str] | None = None,
    dataset: Mapping[str, Any] | None = None,
    rule: str = DEFAULT_RULE,
) -> Comparison:
    """The comparison itself, from metric tables whose rows are already the same entries in order.

    Separate from :func:`compare` so that callers holding statistics (a run in memory, the
    benchmarks) skip rebuilding them from cards. ``rule`` is the composite rule the cards were
    scored with (``scoring.composite.composite_rule``). ``profile`` is the key the result is labelled with;
    ``weights`` the composite's (default: the built-in profile ``profile``'s; a calibrated card passes its own).
    """
    _check_options(n_resamples, alpha, method, correction, n_trials)
    if len(tables) < 2 or len(names) != len(tables):
        raise ValueError("need at least two tables and one name per table")
    if weights is None:
        weights = weights_of(profile)
    # As on the card, a metric with no value (no gold analyses, no variants, no terminology…) is
    # left out, of the comparison and of the composite; it must have a value for every system, so
    # that one function scores all.
    values = [t.values() for t in tables]
    available = [
        m for m in tables[0].metrics
        if all(m in t.stats for t in tables[1:]) and all(v.get(m) is not None for v in values)
    ]  # fmt: skip
    weighted = [m for m in available if m in weights]
    inputs = composite_inputs(available, weights, rule)
    chosen = resolve_metrics(metrics, available, composite_ok=bool(weighted))
    want_composite = COMPOSITE in chosen
    computed = [m for m in chosen if m != COMPOSITE]
    computed += [m for m in inputs if want_composite and m not in computed]
    aggregates: dict[str, Aggregate] = {m: tables[0].metrics[m].aggregate for m in computed}
    combine = composite_combine(weights, inputs, rule) if want_composite else None
    stats = [{m: t.stats[m] for m in computed} for t in tables]
    n = _entry_count(stats)
    counts = resample_counts(n, n_resamples, seed)

    raw: list[dict[str, PairedResult]]
    if method == "bootstrap":  # each system's resampled sums once, for its CIs and its paired tests
        all_cis, raw = bootstrap_systems(stats, aggregates, combine, counts=counts, alpha=alpha, seed=seed)
    else:
        all_cis = [bootstrap_many(s, aggregates, combine, alpha=alpha, seed=seed, counts=counts) for s in stats]
        raw = [approximate_randomization_many(stats[0], cand, aggregates, combine, n_trials=n_trials, alpha=alpha,
                                              seed=seed, n_ci_resamples=n_resamples) for cand in stats[1:]]  # fmt: skip
    systems = [
        SystemScores(name=name, source=sources[i] if sources else name, run_id=run_ids[i] if run_ids else "",
                     scores={m: cis[m] for m in chosen})
        for i, (cis, name) in enumerate(zip(all_cis, names, strict=True))
    ]  # fmt: skip

    specs = tuple(_spec(m, tables[0]) for m in chosen)
    paired = _corrected(raw, specs, names, alpha, correction)
    return Comparison(
        baseline=names[0], systems=tuple(systems), metrics=specs, paired=tuple(paired), method=method,
        correction=correction, n_resamples=n_resamples, n_trials=n_trials if method == "approx-rand" else 0,
        alpha=alpha, seed=seed, profile=profile, dataset=dict(dataset or {}),
    )  # fmt: skip


def _corrected(
    raw: list[dict[str, PairedResult]], specs: Sequence[MetricSpec], names: Sequence[str], alpha: float,
    correction: str,
) -> list[PairedComparison]:
    """Holm across the candidate systems, one family per metric (the systems' tests on one metric
    answer one question: "which of these beat the baseline on it?")."""
    out: list[PairedComparison] = []
    for spec in specs:
        results = [r[spec.id] for r in raw]
        ps = [r.p_value for r in results]
        adjusted = list(ps)  # an undefined (NaN) p-value stays NaN and is never significant
        finite = [i for i, p in enumerate(ps) if not np.isnan(p)]
        if correction == "holm" and finite:
            for i, (p_adj, _) in zip(finite, holm([ps[i] for i in finite], alpha), strict=True):
                adjusted[i] = p_adj
        for result, name, p_adj in zip(results, names[1:], adjusted, strict=True):
            out.append(PairedComparison.from_result(
                result, system=name, baseline=names[0], p_adjusted=p_adj,
                correction=correction, higher_is_better=spec.higher_is_better,
            ))  # fmt: skip
    return out


def composite_inputs(available: Sequence[str], weights: Weights, rule: str) -> list[str]:
    """The metrics the composite reads: the profile's weighted ones and, under the anchored rule,
    what its adequacy factor reads (chrF++ and the length ratio, ``scoring.composite.adequacy``)
    even where they carry no weight, so the comparison's composite is the card's."""
    extra = adequacy_inputs(rule)
    return [m for m in available if m in weights or m in extra]


def _common_rule(cards: Sequence[Mapping[str, Any]], sources: Sequence[str]) -> str:
    """The cards' composite rule; composites scored under different rules are not comparable."""
    rules = [composite_rule(card) for card in cards]
    for rule, src in zip(rules[1:], sources[1:], strict=True):
        if rule != rules[0]:
            raise UserError(
                f"{src} was scored with composite rule {rule} but the baseline {sources[0]} with "
                f"{rules[0]}; their composites are not comparable (rescore the older card)"
            )
    return rules[0]


def _precheck_metrics(metrics: list[str] | None, card: Mapping[str, Any], rule: str) -> list[str] | None:
    """Reject an unknown ``--metric`` before the (slow) rescoring rather than after it, and say
    which metrics must be rebuilt: the requested ones, plus the composite's inputs."""
    target = (card.get("dataset") or {}).get("target_language")
    if not metrics or not target:
        return None
    from mt_eval.languages.card import language_card
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import configured_metrics

    available = [m.id for m in metrics_for(language_card(str(target)), None, configured_metrics(card))]
    weights = card_weights(card) if "profile" in card else {}
    weighted = any(m in weights for m in available)
    chosen = resolve_metrics(metrics, available, composite_ok=weighted)
    needed = {m for m in chosen if m in available}
    if COMPOSITE in chosen:
        needed |= set(composite_inputs(available, weights, rule))
    return [m for m in available if m in needed]


def _spec(metric_id: str, table: MetricTable) -> MetricSpec:
    if metric_id == COMPOSITE:
        return MetricSpec(COMPOSITE, True, 1.0)
    metric = table.metrics[metric_id]
    direction = None if metric_id in UNDIRECTED else bool(metric.higher_is_better)
    return MetricSpec(metric_id, direction, float(metric.scale))


def _aligned(table: MetricTable, ids: list[int], base_ids: list[int]) -> MetricTable:
    """The table's rows (entries ``ids``) put in the baseline's entry order (a no-op when the order
    already agrees). Stored statistics carry no entries; they stay empty."""
    if ids == base_ids:
        return table
    where = {entry_id: row for row, entry_id in enumerate(ids)}
    order = np.asarray([where[i] for i in base_ids])
    return MetricTable(
        table.metrics, {m: s[order] for m, s in table.stats.items()}, table.errors[order],
        [table.entries[i] for i in order] if table.entries else [],
    )


def _entry_count(stats: list[dict[str, np.ndarray]]) -> int:
    lengths = {s.shape[0] for table in stats for s in table.values()}
    if len(lengths) != 1:
        raise ValueError(f"tables disagree on the number of entries: {sorted(lengths)}")
    return lengths.pop()


class StatisticsFallbackWarning(UserWarning):
    """A card's stored statistics could not be used; they were rebuilt from ``results[]``."""


def _load(card: Any) -> tuple[dict[str, Any], StoredStatistics | None]:
    """A card given as a path is read with its stored statistics; any other card is used as it is."""
    if not isinstance(card, str | PathLike):
        return _as_dict(card), None
    from mt_eval.comparison.loading import load_for_compare

    loaded = load_for_compare(fspath(card))
    if loaded.fallback:
        warnings.warn(loaded.fallback, StatisticsFallbackWarning, stacklevel=3)
    return loaded.card, loaded.statistics


def _as_dict(card: Any) -> dict[str, Any]:
    if isinstance(card, RunCard):
        return dict(card.model_dump(mode="json"))
    if not isinstance(card, Mapping):
        raise UserError(f"a run card is a JSON object, got {type(card).__name__}")
    return dict(card)


def _check_options(n_resamples: int, alpha: float, method: str, correction: str, n_trials: int) -> None:
    if method not in ("bootstrap", "approx-rand"):
        raise UserError(f"unknown test method '{method}' (use 'bootstrap' or 'approx-rand')")
    if correction not in ("holm", "none"):
        raise UserError(f"unknown correction '{correction}' (use 'holm' or 'none')")
    if not 0 < alpha < 1:
        raise UserError(f"--alpha must lie strictly between 0 and 1, got {alpha}")
    if n_resamples < 1 or n_trials < 1:
        raise UserError(f"need at least one resample and trial, got {n_resamples} and {n_trials}")

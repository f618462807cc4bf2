"""Calibrate a profile and say whether to adopt it: cross-validation, a held-out split, the statistics.

Every comparison is paired: the learned composite, the card's own (spec) profile composite and every
single candidate metric are scored on the same items with the same bootstrap resamples, so the
differences (learned − chrF++, learned − spec, learned − best single metric) get their own intervals.

* **held-out**: half of the source items (seeded) train the two-stage PLS, the other half test it.
* **cross-validation**: 5 folds grouped by source item × 5 seeds; every segment is scored by a profile that
  never saw its item; the statistics of each seed's out-of-fold composite are averaged over seeds (values
  and resamples alike).
* the written profile is fitted on all the judgments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mt_eval.calibration import meta
from mt_eval.calibration.matrix import Matrix
from mt_eval.calibration.pls import MAX_SELECTED, PLSFit, two_stage
from mt_eval.scoring.calibrated import CalibratedProfile, make_profile

LEARNED = "learned"
SPEC = "spec composite"
CHRF_PP = "chrf_plus_plus"
TOLERANCE = 1e-9  # a difference of float round-off (two contenders that tie every pair) is no gain
# acc23 within this of the tie floor is the floor: a noise metric on WMT21 TED en-de reaches floor + 0.00002
FLOOR_MARGIN = 1e-3
ADOPT, NO_GAIN = "adopt", "no evidence of a gain"


@dataclass(frozen=True)
class Settings:
    top: int = MAX_SELECTED
    folds: int = 5
    seeds: int = 5
    n_resamples: int = 1000
    alpha: float = 0.05
    seed: int = 12345
    spa: bool = True
    within_items: bool = True  # fit PLS on within-item deviations (``pls.two_stage(groups=…)``)
    # "rank": within-item ranks of the human scores (``pls.within_ranks``); "raw": the scores as given (the
    # paper). Only with within_items: the global fit is the paper's plain PLS on raw values.
    labels: str = "rank"

    @property
    def fit_labels(self) -> str:
        return self.labels if self.within_items else "raw"


@dataclass
class Row:
    tau: meta.Estimate
    acc23: meta.Estimate
    epsilon: float
    spa: meta.Estimate | None = None
    at_floor: bool = False  # acc23 is the tie floor: the metric's ε ties (nearly) every pair, acc23 says nothing


@dataclass
class Block:
    """One evaluation setting: a statistics row per contender, and learned − X differences."""

    name: str
    n_items: int
    n_segments: int
    acc23_floor: float = float("nan")  # acc23 of a metric tying every pair: no contender can be below it
    rows: dict[str, Row] = field(default_factory=dict)
    diffs: dict[str, dict[str, meta.Estimate]] = field(default_factory=dict)

    def best_single(self, stat: str) -> str | None:
        singles = {k: getattr(r, stat).value for k, r in self.rows.items() if k not in (LEARNED, SPEC)}
        finite = {k: v for k, v in singles.items() if np.isfinite(v)}
        return max(finite, key=lambda k: finite[k]) if finite else None


@dataclass
class Report:
    mode: str  # "calibrate" or "evaluate"
    dataset: str
    scale: str
    n_segments: int
    n_items: int
    n_systems: int
    candidates: list[str]
    dropped: dict[str, str]
    profile: CalibratedProfile
    first_stage: dict[str, float]
    blocks: list[Block]
    verdict: dict[str, Any]
    warnings: list[str] = field(default_factory=list)


def _split(items: list[str], fraction: float, seed: int) -> np.ndarray:
    unique = list(dict.fromkeys(items))
    rng = np.random.default_rng(seed)
    chosen = set(rng.permutation(len(unique))[: round(len(unique) * fraction)].tolist())
    train_items = {unique[i] for i in chosen}
    return np.asarray([i in train_items for i in items])


def fit(m: Matrix, top: int, within_items: bool = True, labels: str = "raw") -> PLSFit:
    names = list(m.candidates)
    codes = {item: k for k, item in enumerate(dict.fromkeys(m.items))}
    groups = np.asarray([codes[i] for i in m.items]) if within_items else None
    try:
        return two_stage(m.x(names), m.human, names, top=top, groups=groups, labels=labels)
    except ValueError as exc:
        from mt_eval.errors import UserError

        raise UserError(f"cannot calibrate on {m.dataset}: {exc}") from None


def _composite(fitted: PLSFit, m: Matrix) -> np.ndarray:
    weights = fitted.profile_weights()
    return m.x(list(weights)) @ np.asarray(list(weights.values()))


def _system_matrix(m: Matrix, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(systems × items) metric and human matrices over the items every system was judged on."""
    systems = sorted(set(m.systems))
    per_item: dict[str, dict[str, int]] = {}
    for k, (item, system) in enumerate(zip(m.items, m.systems, strict=True)):
        per_item.setdefault(item, {})[system] = k
    complete = [rows for rows in per_item.values() if len(rows) == len(systems)]
    if len(systems) < 2 or len(complete) < 2:
        return None
    idx = np.asarray([[rows[s] for rows in complete] for s in systems])
    return scores[idx], m.human[idx]


def _evaluate(name: str, m: Matrix, contenders: Mapping[str, list[np.ndarray]], s: Settings) -> Block:
    """Statistics of each contender on ``m``; a contender given several score vectors (CV seeds) is averaged."""
    n_items = len(set(m.items))
    counts = meta.item_counts(n_items, s.n_resamples, s.seed)
    block = Block(name, n_items, len(m), meta.tie_floor(m.items, m.human))
    samples: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for key, vectors in contenders.items():
        taus = [meta.tau_samples(m.items, v, m.human, counts) for v in vectors]
        accs = [meta.acc23_samples(m.items, v, m.human, counts) for v in vectors]
        tau_v, tau_s = float(np.mean([t[0] for t in taus])), np.mean([t[1] for t in taus], axis=0)
        acc_v, acc_s = float(np.mean([a[0] for a in accs])), np.mean([a[2] for a in accs], axis=0)
        spa = None  # system level from the first vector only (CV: seed 0's out-of-fold composite): it is slow
        if s.spa and (sm := _system_matrix(m, vectors[0])) is not None:
            spa = meta.soft_pairwise_accuracy(*sm, n_resamples=min(100, s.n_resamples), alpha=s.alpha, seed=s.seed)
        block.rows[key] = Row(meta.interval(tau_s, tau_v, s.alpha), meta.interval(acc_s, acc_v, s.alpha),
                              float(np.mean([a[1] for a in accs])), spa, acc_v <= block.acc23_floor + FLOOR_MARGIN)
        samples[key] = (tau_s, acc_s)
    versus = [k for k in (CHRF_PP, SPEC) if k in block.rows]
    versus += [b for stat in ("tau", "acc23") if (b := block.best_single(stat)) and b not in versus]
    for other in versus:
        block.diffs[other] = {
            "tau": meta.interval(samples[LEARNED][0] - samples[other][0],
                                 block.rows[LEARNED].tau.value - block.rows[other].tau.value, s.alpha),
            "acc23": meta.interval(samples[LEARNED][1] - samples[other][1],
                                   block.rows[LEARNED].acc23.value - block.rows[other].acc23.value, s.alpha),
        }
    return block


def _baselines(m: Matrix) -> dict[str, list[np.ndarray]]:
    return {SPEC: [m.spec], **{k: [v] for k, v in m.candidates.items()}}


def cross_validate(m: Matrix, s: Settings) -> Block:
    unique = list(dict.fromkeys(m.items))
    position = {u: k for k, u in enumerate(unique)}
    item_index = np.asarray([position[i] for i in m.items])
    oof = []
    for seed in range(s.seeds):
        fold_of_item = np.empty(len(unique), dtype=int)
        for f, chunk in enumerate(np.array_split(np.random.default_rng(s.seed + seed).permutation(len(unique)),
                                                 s.folds)):
            fold_of_item[chunk] = f
        fold = fold_of_item[item_index]
        scores = np.zeros(len(m))
        for f in range(s.folds):
            test = fold == f
            trained = fit(m.take(np.flatnonzero(~test)), s.top, s.within_items, s.fit_labels)
            scores[test] = _composite(trained, m.take(np.flatnonzero(test)))
        oof.append(scores)
    return _evaluate(f"cross-validation ({s.folds} folds × {s.seeds} seeds, grouped by source item)", m,
                     {LEARNED: oof, **_baselines(m)}, s)


def _compared(d: meta.Estimate) -> str:
    word = "ahead" if d.value > TOLERANCE else "behind" if d.value < -TOLERANCE else "equal"
    sure = " (interval above 0)" if d.low > TOLERANCE else " (interval below 0)" if d.high < -TOLERANCE else ""
    return f"{word} {d.value:+.4f} [{d.low:+.4f}, {d.high:+.4f}]{sure}"


def _verdict(blocks: list[Block]) -> dict[str, Any]:
    """"adopt" only when, in every held-out setting, the paired interval of the learned profile's τ gain over
    chrF++ and over the spec composite excludes 0 (lies above it) and acc23 is not behind; otherwise "no
    evidence of a gain" and the first reason. A point gain whose interval crosses 0 is not evidence: the
    verdict printed "adopt" for en-de while every interval of the gain crossed 0 (issue 22). Each margin is
    said with its interval, and an acc23 at the tie floor is said to be uninformative."""
    lines, reasons = [], []
    for block in blocks:
        for other in (CHRF_PP, SPEC):
            if other not in block.diffs:
                continue
            d = block.diffs[other]
            tau, acc = d["tau"], d["acc23"]
            floor = " (both at the tie floor: acc23 cannot tell them apart)" if (
                block.rows[LEARNED].at_floor and block.rows[other].at_floor) else ""
            lines.append(f"{block.name}, learned vs {other}: τ {_compared(tau)}; acc23 {_compared(acc)}{floor}")
            if not tau.low > TOLERANCE:
                reasons.append(f"{block.name}: the τ gain over {other} is {tau.value:+.4f} and its interval "
                               f"[{tau.low:+.4f}, {tau.high:+.4f}] does not exclude 0")
            elif acc.value < -TOLERANCE:
                reasons.append(f"{block.name}: behind {other} on acc23 ({acc.value:+.4f})")
    if not lines:
        reasons.append("no held-out comparison with chrF++ or the spec composite")
    adopt = not reasons
    return {"adopt": adopt, "verdict": ADOPT if adopt else NO_GAIN, "reason": reasons[0] if reasons else None,
            "lines": lines}


def calibrate(m: Matrix, *, name: str, scale: str, s: Settings = Settings()) -> Report:
    """Fit on all judgments (the profile written), and measure how a profile fitted this way does held out."""
    train = _split(m.items, 0.5, s.seed)
    fitted_half = fit(m.take(np.flatnonzero(train)), s.top, s.within_items, s.fit_labels)
    test = m.take(np.flatnonzero(~train))
    held = _evaluate("held-out (trained on half of the source items, tested on the other half)", test,
                     {LEARNED: [_composite(fitted_half, test)], **_baselines(test)}, s)
    blocks = [held, cross_validate(m, s)] if s.seeds > 0 and s.folds > 1 else [held]
    final = fit(m, s.top, s.within_items, s.fit_labels)
    weights = final.profile_weights()
    semantic: dict[str, Any] | None = {k: m.semantic[k] for k in ("backend", "model") if k in m.semantic} \
        if "semantic_score" in weights and m.semantic else None
    trained_on = {"dataset": m.dataset, "scale": scale,
                  "fit": "within-item" if s.within_items else "global", "labels": s.fit_labels,
                  "segments": len(m), "items": len(set(m.items)),
                  "systems": sorted(set(m.systems)), "candidates": list(m.candidates),
                  "heldout_tau": round(held.rows[LEARNED].tau.value, 6),
                  "heldout_acc23": round(held.rows[LEARNED].acc23.value, 6)}
    profile = make_profile(name, weights, semantic=semantic, trained_on=trained_on, judges=m.judge_cards)
    return Report("calibrate", m.dataset, scale, len(m), len(set(m.items)), len(set(m.systems)), list(m.candidates),
                  m.dropped, profile, final.first_stage, blocks, _verdict(blocks))


def evaluate_profile(m: Matrix, profile: CalibratedProfile, *, scale: str, s: Settings = Settings()) -> Report:
    """An existing profile on other judgments: nothing is trained; all of them are held out."""
    warnings = [f"the profile weights {k} but the cards have no value for it: the composite re-normalises over "
                "the rest" for k in profile.weights if k not in m.candidates and k not in m.dropped]
    block = _evaluate("held-out (every judged segment; nothing trained)", m,
                      {LEARNED: [np.nan_to_num(m.under(profile))], **_baselines(m)}, s)
    return Report("evaluate", m.dataset, scale, len(m), len(set(m.items)), len(set(m.systems)), list(m.candidates),
                  m.dropped, profile, {}, [block], _verdict([block]), warnings)


def report_dict(report: Report) -> dict[str, Any]:
    """The report as JSON-safe data (``--json``)."""
    def row(r: Row) -> dict[str, Any]:
        return {"tau": r.tau.as_dict(), "acc23": r.acc23.as_dict(), "acc23_epsilon": r.epsilon,
                "acc23_at_floor": r.at_floor, "spa": r.spa.as_dict() if r.spa else None}

    return {
        "mode": report.mode, "dataset": report.dataset, "scale": report.scale, "segments": report.n_segments,
        "items": report.n_items, "systems": report.n_systems, "candidates": report.candidates,
        "dropped": report.dropped, "profile": report.profile.card_block, "first_stage": report.first_stage,
        "blocks": [{"name": b.name, "items": b.n_items, "segments": b.n_segments, "acc23_floor": b.acc23_floor,
                    "rows": {k: row(r) for k, r in b.rows.items()},
                    "learned_minus": {k: {s: e.as_dict() for s, e in d.items()} for k, d in b.diffs.items()}}
                   for b in report.blocks],
        "verdict": report.verdict, "warnings": report.warnings,
    }

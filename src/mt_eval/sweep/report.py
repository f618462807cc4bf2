"""``mt-eval sweep report``: what a sweep's matrix of cards says (Benchmark Spec §6.1, §6.3).

* **Best configuration per model**: for each model (the card's ``model_slug``; Apertium is
  ``apertium/eng-spa``), the cell with the highest composite, with its bootstrap CI from its card.
* **Effect of each axis**: for an axis with values v0 (the first in the file: the baseline), v1, …,
  every pair of cells that differ *only* in that axis (v0 against vk) gives Δ = composite(vk) −
  composite(v0). The effect is the mean Δ over those pairs, with a percentile bootstrap CI over
  the pairs (``stats.bootstrap``: the pairs are resampled, the other axes' levels held as they were).
* **Entries no cell gets right** (§6.3: where all models fail uniformly). An output is *right*
  when it is an exact match (after NFC and whitespace collapsing, as on the card) or its entry
  chrF++ (the card's ``entry_chrf``: sacrebleu's sentence chrF++) is at least ``right_chrf``
  (default 50: docs/decisions.md §22 measures 52 for a second human translation of a text).
  An entry is listed when no cell's output for it is right.

Only cards that verify are read (``execute.finished_card``); a cell without one is listed as missing.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from mt_eval.stats.bootstrap import DEFAULT_SEED, percentile_interval, resample_counts
from mt_eval.sweep.execute import Settings, finished_card
from mt_eval.sweep.plan import CARD_NAME, Cell, shown
from mt_eval.sweep.spec import SweepSpec

RIGHT_CHRF = 50.0


@dataclass(frozen=True)
class CellScore:
    cell: Cell
    model: str
    composite: float
    ci: tuple[float | None, float | None]
    tier: str
    cost_usd: float | None


@dataclass(frozen=True)
class AxisEffect:
    axis: str
    baseline: str
    value: str
    pairs: int
    mean_delta: float
    ci: tuple[float, float]


@dataclass(frozen=True)
class HardEntry:
    entry_id: int
    source: str
    reference: str
    best_chrf: float
    best_cell: str


@dataclass(frozen=True)
class SweepReport:
    name: str
    cells: list[CellScore]
    missing: list[Cell]
    best: list[CellScore]
    effects: list[AxisEffect]
    hard: list[HardEntry]
    entries: int
    right_chrf: float


def _score(cell: Cell, card: dict[str, Any]) -> CellScore:
    scores = card["scores"]
    ci = (scores.get("confidence_intervals") or {}).get("composite") or {}
    return CellScore(cell, str(card.get("model_slug") or card["method"]["name"]), float(scores["composite"]),
                     (ci.get("ci_lower"), ci.get("ci_upper")), str(scores.get("quality_tier")),
                     (card.get("cost") or {}).get("total_cost_usd"))


def axis_effects(spec: SweepSpec, scored: list[CellScore], *, n_resamples: int = 1000, alpha: float = 0.05,
                 seed: int = DEFAULT_SEED) -> list[AxisEffect]:
    """Mean Δ composite of each axis value against the axis's first value, over cells alike otherwise."""
    effects = []
    for axis, values in spec.axes.items():
        rest: dict[tuple[Any, ...], dict[str, float]] = defaultdict(dict)
        for s in scored:
            if axis in s.cell.params:
                others = tuple(sorted((k, repr(v)) for k, v in s.cell.params.items() if k != axis))
                rest[(s.cell.corpus, others)][repr(s.cell.params[axis])] = s.composite
        for value in values[1:]:
            deltas = np.array([got[repr(value)] - got[repr(values[0])] for got in rest.values()
                               if repr(value) in got and repr(values[0]) in got])
            if deltas.size == 0:
                continue
            counts = resample_counts(deltas.size, n_resamples, seed)
            means = counts @ deltas / deltas.size
            effects.append(AxisEffect(axis, shown(axis, values[0]), shown(axis, value), int(deltas.size),
                                      float(deltas.mean()), percentile_interval(means, alpha)))
    return effects


def hard_entries(cards: list[tuple[Cell, dict[str, Any]]], right_chrf: float) -> tuple[list[HardEntry], int]:
    """Entries that every cell on their corpus got wrong (of the entries all those cards share), hardest
    first; and how many entries were looked at."""
    by_corpus: dict[Any, list[tuple[Cell, dict[str, Any]]]] = defaultdict(list)
    for cell, card in cards:
        by_corpus[cell.corpus].append((cell, card))
    hard, looked = [], 0
    for group in by_corpus.values():
        rows: dict[int, list[tuple[Cell, dict[str, Any]]]] = defaultdict(list)
        for cell, card in group:
            for r in card["results"]:
                rows[int(r["entry_id"])].append((cell, r))
        shared = {i: rs for i, rs in rows.items() if len(rs) == len(group)}
        looked += len(shared)
        for entry_id, rs in shared.items():
            if any(r.get("exact_match") or (r.get("entry_chrf") or 0.0) >= right_chrf for _, r in rs):
                continue
            cell, best = max(rs, key=lambda cr: cr[1].get("entry_chrf") or 0.0)
            hard.append(HardEntry(entry_id, str(best.get("source", "")), str(best.get("reference", "")),
                                  float(best.get("entry_chrf") or 0.0), cell.key))
    return sorted(hard, key=lambda h: (h.best_chrf, h.entry_id)), looked


def build_report(spec: SweepSpec, cells: list[Cell], settings: Settings, *,
                 right_chrf: float = RIGHT_CHRF) -> SweepReport:
    """Read every cell's verified card and compute the report (nothing is re-run or re-scored)."""
    cards: list[tuple[Cell, dict[str, Any]]] = []
    missing = []
    for cell in cells:
        card = finished_card(settings.cell_dir(cell) / CARD_NAME)
        if card is None:
            missing.append(cell)
        else:
            cards.append((cell, card))
    scored = sorted((_score(c, card) for c, card in cards), key=lambda s: -s.composite)
    best: dict[str, CellScore] = {}
    for s in scored:
        best.setdefault(s.model, s)
    hard, shared = hard_entries(cards, right_chrf) if cards else ([], 0)
    return SweepReport(spec.name, scored, missing, list(best.values()), axis_effects(spec, scored), hard, shared,
                       right_chrf)

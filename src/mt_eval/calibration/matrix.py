"""The per-segment matrix calibration learns from: human scores joined with cards' per-entry metric values.

A card is one system's run over one dataset; its ``results[i]`` is the segment (entry, system). The card's
system is the first of its ``method.name``, ``model_slug`` or ``run_id`` that the judgments name (the
review's judgments name cards by ``run_card_hash``). An entry is matched by its id (``str(entry_id)``),
or through ``entry_keys`` when the cards were built from the judgments. Candidate metrics are those a
calibrated profile may weight (``scoring.profiles.CALIBRATION_NORMALISATION``), mapped to 0–1 with higher
better, with a value on every matched segment and not constant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mt_eval.errors import UserError
from mt_eval.judgments.table import JudgmentTable
from mt_eval.metrics.judges.cards import is_judge_id
from mt_eval.scoring.calibrated import RULE as CALIBRATED_RULE
from mt_eval.scoring.calibrated import CalibratedProfile
from mt_eval.scoring.composite import composite, composite_rule, normalise
from mt_eval.scoring.profiles import CALIBRATION_NORMALISATION, weights_of

MIN_SEGMENTS = 80  # AutoMetrics §4.6: performance levels off at about 80 labels; below, it is mostly noise


@dataclass
class Matrix:
    dataset: str
    items: list[str]
    systems: list[str]
    human: np.ndarray
    raw: list[dict[str, float | None]]  # each segment's per-entry metric values, as on its card
    candidates: dict[str, np.ndarray] = field(default_factory=dict)  # normalised, higher is better
    spec: np.ndarray = field(default_factory=lambda: np.zeros(0))  # the card's own profile composite
    profile: str = "B"
    rule: str = ""
    semantic: dict[str, Any] | None = None
    dropped: dict[str, str] = field(default_factory=dict)
    judge_cards: dict[str, str] = field(default_factory=dict)  # candidate judge id → its judge card's sha256

    def __len__(self) -> int:
        return len(self.items)

    def take(self, rows: np.ndarray) -> Matrix:
        return Matrix(self.dataset, [self.items[i] for i in rows], [self.systems[i] for i in rows], self.human[rows],
                      [self.raw[i] for i in rows], {m: v[rows] for m, v in self.candidates.items()},
                      self.spec[rows], self.profile, self.rule, self.semantic, self.dropped,
                      self.judge_cards)

    def x(self, names: Sequence[str]) -> np.ndarray:
        return np.column_stack([self.candidates[m] for m in names])

    def under(self, profile: CalibratedProfile) -> np.ndarray:
        """Each segment's composite under a calibrated profile (exactly what its cards would carry)."""
        return np.asarray([_number(composite(v, profile.weights, CALIBRATED_RULE)) for v in self.raw])


def _number(value: object) -> float:
    return float("nan") if value is None else float(value)  # type: ignore[arg-type]


def system_of(card: Mapping[str, Any], systems: set[str], where: str) -> str:
    names = [(card.get("method") or {}).get("name"), card.get("model_slug"), card.get("run_id"),
             card.get("run_card_hash")]
    for name in names:
        if isinstance(name, str) and name in systems:
            return name
    shown = ", ".join(str(n) for n in names[:3] if n)
    raise UserError(f"the card names no judged system (it is {shown}; judged: {', '.join(sorted(systems)[:8])}…)",
                    file=where)


def build_matrix(judgments: JudgmentTable, cards: Sequence[tuple[str, Mapping[str, Any]]], dataset: str,
                 entry_keys: Mapping[int, str] | None = None, *, minimum: int = MIN_SEGMENTS) -> Matrix:
    """Join (``where``, card) pairs with the judgments of ``dataset``; refuses fewer than ``minimum`` segments."""
    segments = {(s.entry, s.system): s.score for s in judgments.subset(dataset).segments()}
    systems = {system for _, system in segments}
    items: list[str] = []
    names: list[str] = []
    human: list[float] = []
    raw: list[dict[str, float | None]] = []
    profiles, rules, semantics = set(), set(), []
    spec: list[float] = []
    for where, card in cards:
        system = system_of(card, systems, where)
        profile, rule = str(card["profile"]), composite_rule(card)
        profiles.add(profile)
        rules.add(rule)
        semantics.append(card.get("semantic"))
        for r in card["results"]:
            key = entry_keys.get(int(r["entry_id"]), str(r["entry_id"])) if entry_keys else str(r["entry_id"])
            if (key, system) not in segments:
                continue
            values = dict(r.get("metrics") or {})
            items.append(key)
            names.append(system)
            human.append(segments[(key, system)])
            raw.append(values)
            spec.append(_number(composite(values, weights_of(profile), rule)))
    n = len(items)
    if n < minimum:
        raise UserError(f"only {n} judged segments match the cards; calibration needs at least {minimum} "
                        "(AutoMetrics §4.6: below about 80 labels the fit is mostly noise)",
                        hint="add judgments or cards of more systems")
    if len(profiles) > 1 or len(rules) > 1:
        raise UserError(f"the cards were scored under different profiles/rules ({sorted(profiles)}, {sorted(rules)})")
    semantic = next((s for s in semantics if s), None)
    m = Matrix(dataset, items, names, np.asarray(human), raw, profile=profiles.pop(), rule=rules.pop(),
               semantic=semantic, spec=np.nan_to_num(np.asarray(spec), nan=0.0))
    for metric in [k for k in CALIBRATION_NORMALISATION if not is_judge_id(k)]:  # judges: only with --judge
        column = [v.get(metric) for v in raw]
        missing = sum(c is None for c in column)
        if missing == n:
            continue
        if missing:
            m.dropped[metric] = f"null on {missing} of {n} segments"
            continue
        normalised = np.asarray(normalise(metric, np.asarray(column, dtype=np.float64)), dtype=np.float64)
        if float(normalised.max() - normalised.min()) == 0.0:
            m.dropped[metric] = "constant"
            continue
        m.candidates[metric] = normalised
    if not m.candidates:
        raise UserError("no candidate metric has a value on every judged segment")
    return m

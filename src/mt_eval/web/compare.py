"""Side by side: 2–8 stored runs on the same entries, the first the baseline.

The numbers are ``mt_eval.comparison.compare`` on the statistics stored with each card (no metric
runs), so they equal ``mt-eval compare`` on the same cards; the entries where the runs disagree most
are taken from the public segments only.

The disagreement lens (``review.lens.human_lens``) sets the runs' per-entry chrF++ against the median
human rating from review campaigns: outputs the metrics like and people reject, and the reverse. It is
read afresh on every request (ratings keep arriving), unlike the comparison, which a card's hash pins.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse

from mt_eval.errors import UserError
from mt_eval.review.lens import human_lens
from mt_eval.store.pages import MAX_COMPARED, compare_runs, load_card
from mt_eval.web.common import HASH_PATTERN, memo, not_found, page, resamples_of, store_of

router = APIRouter()
Runs = Annotated[list[str], Query(alias="run", min_length=2, max_length=MAX_COMPARED,
                                  description="run_card_hash of each run, the baseline first (2–8).")]


def _compare(request: Request, runs: list[str]) -> dict[str, Any]:
    bad = [r for r in runs if not re.fullmatch(HASH_PATTERN, r)]
    if bad:
        raise UserError(f"not a run_card_hash (64 hex digits): {bad[0][:80]!r}")
    try:
        n_resamples = resamples_of(request)  # cards never change under their hashes: a comparison neither
        return memo(request, "comparisons").get(
            (tuple(runs), n_resamples), lambda: compare_runs(store_of(request), runs, n_resamples=n_resamples))
    except LookupError as missing:
        raise not_found(f"run {str(missing.args[0])[:12]}") from None


def _lens(request: Request, runs: list[str]) -> dict[str, Any]:
    """The disagreement lens over the compared runs (each card's JSON parsed once, kept by its hash)."""
    def read(run: str) -> dict[str, Any]:
        stored = load_card(store_of(request), run)
        if stored is None:  # raised, so an unknown hash is never remembered
            raise not_found(f"run {run[:12]}")
        return stored.card

    cards = {run: memo(request, "cards").get(run, partial(read, run)) for run in dict.fromkeys(runs)}
    return human_lens(store_of(request), cards)


TEST_NAMES = {"bootstrap": "paired bootstrap", "approx-rand": "approximate randomisation"}


def rule_of(comparison: dict[str, Any]) -> dict[str, str]:
    """The decision rule in words (Scoring Spec §8.2, as ``mt-eval compare`` prints it): which test, which
    p-value (Holm-adjusted across the candidates of one metric, or not), α and the interval's level."""
    family = len(comparison["systems"]) - 1
    holm = comparison["correction"] == "holm" and family > 1
    count = (f"{comparison['n_trials']} trials" if comparison["method"] == "approx-rand"
             else f"{comparison['n_resamples']} resamples")
    return {"test": f"two-sided {TEST_NAMES.get(comparison['method'], comparison['method'])} ({count})",
            "p": "Holm-adjusted p" if holm else "p",
            "family": (f"Holm-adjusted across the {family} systems compared with the baseline, per metric" if holm
                       else "one comparison per metric: nothing to adjust" if family == 1
                       else "not corrected for multiple comparisons"),
            "alpha": f"{comparison['alpha']:g}", "level": f"{100 * (1 - comparison['alpha']):g}%"}


def why(row: dict[str, Any], rule: dict[str, str]) -> str:
    """The verdict with its reason: a p of 0.032 is "not significant" only for a stated reason (here: the
    adjusted p, or an interval of Δ that includes 0), and the page says which."""
    p, alpha = row["p_adjusted"], row["alpha"]
    if row["significant"]:
        return f"significant: {rule['p']} {p:.3f} < α {rule['alpha']}, {rule['level']} CI of Δ excludes 0"
    if not row["delta"]:
        return "not significant: Δ = 0"
    if p is None:
        return "not significant: p undefined (no variation to test)"
    if p >= alpha:
        raw = f" (unadjusted p {row['p_value']:.3f})" if row["p_value"] is not None and row["p_value"] != p else ""
        return f"not significant: {rule['p']} {p:.3f} ≥ α {rule['alpha']}{raw}"
    return f"not significant: {rule['p']} {p:.3f} < α {rule['alpha']} but the {rule['level']} CI of Δ includes 0"


@router.get("/compare", response_class=HTMLResponse, summary="Compare runs (page)")
def compare_page(request: Request, runs: Runs) -> HTMLResponse:
    data = {**_compare(request, runs), "lens": _lens(request, runs)}
    comparison = data["comparison"]
    rule = rule_of(comparison)
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in comparison["paired"]:  # a copy with its reason: the remembered comparison stays as the API gives it
        by_metric.setdefault(row["metric"], []).append({**row, "why": why(row, rule)})
    return page(request, "compare.html", data=data, comparison=comparison, by_metric=by_metric, rule=rule,
                title=f"Compare {len(data['runs'])} runs")  # fmt: skip


@router.get("/api/compare", summary="Compare runs: scores with CIs, paired tests per metric, disagreements")
def compare_api(request: Request, runs: Runs) -> dict[str, Any]:
    return {**_compare(request, runs), "lens": _lens(request, runs)}

"""Side by side: 2–8 stored runs on the same entries, the first the baseline.

The numbers are ``mt_eval.comparison.compare`` on the statistics stored with each card (no metric
runs), so they equal ``mt-eval compare`` on the same cards; the entries where the runs disagree most
are taken from the public segments only.

The disagreement lens (``store.pages.human_lens``) sets the runs' per-entry chrF++ against the median
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
from mt_eval.store.pages import MAX_COMPARED, compare_runs, human_lens, load_card
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


@router.get("/compare", response_class=HTMLResponse, summary="Compare runs (page)")
def compare_page(request: Request, runs: Runs) -> HTMLResponse:
    data = {**_compare(request, runs), "lens": _lens(request, runs)}
    comparison = data["comparison"]
    by_metric: dict[str, list[dict[str, Any]]] = {}
    for row in comparison["paired"]:
        by_metric.setdefault(row["metric"], []).append(row)
    return page(request, "compare.html", data=data, comparison=comparison, by_metric=by_metric,
                title=f"Compare {len(data['runs'])} runs")  # fmt: skip


@router.get("/api/compare", summary="Compare runs: scores with CIs, paired tests per metric, disagreements")
def compare_api(request: Request, runs: Runs) -> dict[str, Any]:
    return {**_compare(request, runs), "lens": _lens(request, runs)}

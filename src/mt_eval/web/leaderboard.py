"""The leaderboard: one ranked table per dataset (Benchmark Spec §9.7), its Pareto charts, and the API.

``/api/leaderboard`` returns exactly what ``mt-eval leaderboard --json`` prints for the same store and
filters (``store.board.as_json``'s rows); the page shows the same rows. The web adds two filters the
command line lacks, a model and "complete coverage only", applied before ranking.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from mt_eval.review.gate import accepted_in
from mt_eval.scoring.profiles import TIERS
from mt_eval.store.board import DEFAULT_LIMIT, RANK, as_json
from mt_eval.store.pages import BoardQuery, board_page, facets, pareto, store_stamp
from mt_eval.store.query import BoardRow, Filters
from mt_eval.store.ranking import RankedBoard
from mt_eval.web.charts import AXES, pareto_svg
from mt_eval.web.common import blank, memo, page, resamples_of, store_of

router = APIRouter()
SPEC_METRICS = ("chrf_plus_plus", "fst_acceptance_rate", "exact_match_rate", "semantic_score")
"""The metric columns of Benchmark Spec §9.7, beside the composite."""
OPTIONAL = ("cost_per_entry", "avg_latency", "cost_adjusted")
"""Columns shown only when some row of the board has a value (an unknown cost is never drawn as 0)."""


def board_columns(board: RankedBoard) -> dict[str, Any]:
    """Which columns a board's table shows, so that it fits a 1400 px window: the ranking key's metric first
    (``th.key``), then each §9.7 metric and each of cost, latency and cost-adjusted score only when a row of
    the board has a value for it. The composite and tier are always shown (the spec's view of a card)."""
    rows = board.rows
    key = board.key.metric
    metrics = [m for m in SPEC_METRICS if m != key and any((r.scores.get(m) or {}).get("value") is not None
                                                         for r in rows)]  # fmt: skip
    return {"key": None if key == "composite" else key, "metrics": metrics,
            "optional": [c for c in OPTIONAL if any(getattr(r, c) is not None for r in rows)],
            "key_label": board.key.label, "registered": board.key.registered}


def board_query(
    dataset: Annotated[str | None, Query(max_length=300, description="Dataset id, sha256 or 8+ prefix.")] = None,
    method_class: Annotated[str | None, Query(max_length=100)] = None,
    tier: Annotated[str | None, Query(max_length=50, description="The tier that counts (§20).")] = None,
    verification: Annotated[str | None, Query(max_length=50)] = None,
    model: Annotated[str | None, Query(max_length=300)] = None,
    complete: Annotated[bool, Query(description="Only cards that scored every entry without an error.")] = False,
    limit: Annotated[int, Query(ge=1, le=1000, description="Rank the top N cards of each dataset by its "
                                                           "ranking key.")] = DEFAULT_LIMIT,
    sort: Annotated[str, Query(max_length=100, description="rank (the ranking's order), composite, cost_adjusted, "
                                                          "cost_per_entry, latency or a metric id.")] = RANK,
) -> BoardQuery:
    """The filters of the page and of the API, from the query string (empty menu values mean "any")."""
    filters = Filters(dataset=blank(dataset), method_class=blank(method_class), tier=blank(tier),
                      verification=blank(verification))  # fmt: skip
    return BoardQuery(filters=filters, model=blank(model), complete_only=complete, limit=limit, sort=sort or RANK)


Board = Annotated[BoardQuery, Depends(board_query)]


def _boards(request: Request, query: BoardQuery) -> list[RankedBoard]:
    """The boards for ``query``, computed once per state of the store.

    Ranking runs a 1,000-resample paired bootstrap between neighbours: about 3 s for a 50-card board on
    two cores, fine for a command, too slow for every page view and filter change. A publish changes
    the store's stamp, so a remembered board is never stale. (Stored reviews, once they change the tier
    shown, must be part of the stamp too.)"""
    store, n_resamples = store_of(request), resamples_of(request)
    return memo(request, "boards").get((query, n_resamples, store_stamp(store)),
                                       lambda: board_page(store, query, n_resamples=n_resamples, gate=accepted_in))


def pareto_data(boards: list[RankedBoard]) -> list[dict[str, Any]]:
    """Per board and axis: every ranked card's point and whether it is on the frontier (the cards set apart
    have composites that are not comparable with these, so they are not drawn)."""
    return [{"dataset_id": b.dataset_id, "dataset_sha256": b.dataset_sha256,
             **{axis: [vars(p) for p in pareto(b.rows, axis)] for axis in AXES}}
            for b in boards]  # fmt: skip


def _not_drawn(rows: list[BoardRow], axis: str) -> list[str]:
    """The cards a chart leaves out: a composite, and no measured figure on ``axis`` (the store keeps only
    measured cost and latency in those columns)."""
    return [r.method for r in rows if r.composite is not None
            and (r.cost_per_entry if axis == "cost_per_entry" else r.avg_latency) is None]


@router.get("/", response_class=HTMLResponse, summary="Leaderboard page")
def leaderboard_page(request: Request, query: Board) -> HTMLResponse:
    boards = _boards(request, query)
    charts = [{axis: pareto_svg(pareto(b.rows, axis), axis, _not_drawn(b.rows, axis)) for axis in AXES}
              for b in boards]
    columns = [board_columns(b) for b in boards]
    return page(request, "leaderboard.html", boards=list(zip(boards, charts, columns, strict=True)), query=query,
                facets=facets(store_of(request)), metrics=SPEC_METRICS, tiers=[t for _, t in TIERS],
                title="Leaderboard")  # fmt: skip


@router.get("/api/leaderboard", summary="Leaderboard rows (as `mt-eval leaderboard --json`)")
def leaderboard_api(request: Request, query: Board) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(as_json(_boards(request, query)))
    return rows


@router.get("/api/pareto", summary="Pareto points and frontiers (composite vs cost, vs latency)")
def pareto_api(request: Request, query: Board) -> list[dict[str, Any]]:
    return pareto_data(_boards(request, query))


@router.get("/api/facets", summary="The values each leaderboard filter can take")
def facets_api(request: Request) -> dict[str, list[str]]:
    return facets(store_of(request))

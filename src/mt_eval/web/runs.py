"""One run: scores with intervals, breakdowns, cost, speed, fingerprint, environment, signatures, and
its entries (filters, search, a character diff of each output against its reference).

Entries of the secret segments (gold_standard, held_out) are counted, never shown
(``store.pages.public_entries``); the stored card itself is never sent.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse

from mt_eval.render.card_data import summary
from mt_eval.review.gate import card_review
from mt_eval.store.pages import EntryFilter, StoredCard, load_card, public_entries, run_view
from mt_eval.web.common import RunHash, blank, memo, not_found, page, store_of

router = APIRouter()
PAGE_SIZE = 100


def entry_filter(
    segment: Annotated[str | None, Query(max_length=50)] = None,
    # a digit 1-5, or "" (a menu's "any" option): not an int parameter, which would refuse ""
    difficulty: Annotated[str | None, Query(pattern="^[1-5]?$", description="Difficulty 1-5.")] = None,
    provenance: Annotated[str | None, Query(max_length=50)] = None,
    register: Annotated[str | None, Query(max_length=50)] = None,
    q: Annotated[str | None, Query(max_length=200, description="Text in the source, reference or output.")] = None,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=1000)] = PAGE_SIZE,
) -> EntryFilter:
    """The entry table's filters from the query string (empty menu values mean "any")."""
    return EntryFilter(segment=blank(segment), difficulty=int(difficulty) if difficulty else None,
                       provenance=blank(provenance), register=blank(register), q=blank(q), offset=offset,
                       limit=limit)  # fmt: skip


Entries = Annotated[EntryFilter, Depends(entry_filter)]


def _stored(request: Request, run_card_hash: str) -> StoredCard:
    """The card and what the store records beside it. The card's JSON (megabytes for a large run) is
    parsed once and remembered: it never changes under its hash; the tier and signatures are read anew."""
    cards = memo(request, "cards")

    def read() -> dict[str, Any]:
        stored = load_card(store_of(request), run_card_hash)
        if stored is None:  # raised, so an unknown hash is never remembered
            raise not_found(f"run {run_card_hash[:12]}")
        return stored.card

    stored = load_card(store_of(request), run_card_hash, cards.get(run_card_hash, read), review=card_review)
    if stored is None:
        raise not_found(f"run {run_card_hash[:12]}")
    return stored


def view(stored: StoredCard) -> dict[str, Any]:
    """The card's summary (as ``show --json``) and the run page's blocks."""
    return {**summary(stored.card), **run_view(stored)}


@router.get("/runs/{run_card_hash}", response_class=HTMLResponse, summary="Run page")
def run_page(request: Request, run_card_hash: RunHash, where: Entries) -> HTMLResponse:
    stored = _stored(request, run_card_hash)
    card = stored.card
    metrics = {m: info for m, info in (card.get("metrics") or {}).items() if isinstance(info, dict)}
    cis = (card.get("scores") or {}).get("confidence_intervals") or {}
    return page(request, "run.html", run=view(stored), card_metrics=metrics, cis=cis, where=where,
                entries=public_entries(card, where), title=f"Run {run_card_hash[:12]}")  # fmt: skip


@router.get("/api/runs/{run_card_hash}", summary="A run: summary, breakdowns, cost, speed, fingerprint, …")
def run_api(request: Request, run_card_hash: RunHash) -> dict[str, Any]:
    return view(_stored(request, run_card_hash))


@router.get("/api/runs/{run_card_hash}/entries", summary="A run's entries outside the secret segments")
def entries_api(request: Request, run_card_hash: RunHash, where: Entries) -> dict[str, Any]:
    return public_entries(_stored(request, run_card_hash).card, where)

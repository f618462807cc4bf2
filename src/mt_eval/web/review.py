"""Rating on the web (Benchmark Spec §7.3): a reviewer's campaigns, one item at a time, blind.

A reviewer sees only the campaigns they are assigned to, in their batch's blind order
(``review.campaign.batch_groups``, the order of the offline file): the source, one output, never a
method name. The 0–3 scale (reject, gist, acceptable, excellent) with an optional comment; the keys
0–3 rate and send (``static/review.js``, which also records the seconds spent on the item). The
reference follows the campaign's policy: hidden until every item of the entry is rated
(``OnlineBatch.reference_shown``: another item of the entry may be a control), or never shown. Ratings
are written by ``review.online.record_rating`` into the tables the offline import fills.

An item of a campaign the reviewer is not assigned to is a 404, the same as an item that does not exist.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, HTTPException, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from mt_eval.review.offline import MAX_COMMENT, SCALE_LABELS, direction
from mt_eval.review.online import OnlineBatch, assigned_campaigns, online_batch, record_rating
from mt_eval.web.auth import Checked, Reviewer, with_role
from mt_eval.web.common import HASH_PATTERN, page, store_of

router = APIRouter(include_in_schema=False)
Uid = Annotated[str, Path(pattern="^[0-9a-f]{16}$", description="The campaign's uid.")]
Item = Annotated[str, Path(pattern=HASH_PATTERN, description="The item's hash.")]
NOT_YOURS = "no such item among your assignments"


def _batch(request: Request, uid: str, reviewer: str) -> OnlineBatch:
    try:
        return online_batch(store_of(request), uid, reviewer)
    except LookupError:
        raise HTTPException(status_code=404, detail=NOT_YOURS) from None


@router.get("/review", response_class=HTMLResponse)
def my_campaigns(request: Request, reviewer: Reviewer) -> HTMLResponse:
    assert reviewer.account is not None
    return page(request, "review_list.html", visitor=reviewer, campaigns=assigned_campaigns(store_of(request),
                reviewer.account), title="Your reviews")  # fmt: skip


@router.get("/review/{uid}", response_class=HTMLResponse)
def next_item(request: Request, uid: Uid, reviewer: Reviewer) -> Response:
    assert reviewer.account is not None
    batch = _batch(request, uid, reviewer.account)
    item = batch.next_unrated()
    if item is None:
        return page(request, "review_done.html", visitor=reviewer, batch=batch, title="All rated")
    return RedirectResponse(f"/review/{uid}/{item}", status_code=303)


@router.get("/review/{uid}/{item}", response_class=HTMLResponse)
def item_page(request: Request, uid: Uid, item: Item, reviewer: Reviewer) -> HTMLResponse:
    assert reviewer.account is not None
    batch = _batch(request, uid, reviewer.account)
    found = batch.locate(item)
    if found is None:
        raise HTTPException(status_code=404, detail=NOT_YOURS)
    group, position = found
    text = next(i.text for i in group.items if i.hash == item)
    rated = batch.rated.get(item)
    show_reference = batch.reference_shown(group)
    return page(request, "review_item.html", visitor=reviewer, batch=batch, group=group, item=item, text=text,
                position=position, rated=rated, show_reference=show_reference, scale=SCALE_LABELS,
                next_item=batch.next_unrated(), max_comment=MAX_COMMENT,
                dir=direction(batch.campaign.target_language), source_dir=direction(batch.campaign.source_language),
                title=f"Item {position} of {batch.total}")  # fmt: skip


@router.post("/review/{uid}/{item}")
def rate(request: Request, uid: Uid, item: Item, visitor: Checked,
         value: Annotated[int, Form(ge=0, le=3)],
         comment: Annotated[str, Form(max_length=MAX_COMMENT)] = "",
         seconds: Annotated[str, Form(max_length=30)] = "") -> Response:
    reviewer = with_role(visitor, "reviewer")
    assert reviewer.account is not None
    try:
        timing = float(seconds) if seconds else None
    except ValueError:
        timing = None  # timing is a nicety of the script; a rating never fails over it
    try:
        record_rating(store_of(request), uid, reviewer.account, item, value, comment=comment.strip() or None,
                      seconds=timing)  # fmt: skip
    except LookupError:
        raise HTTPException(status_code=404, detail=NOT_YOURS) from None
    return RedirectResponse(f"/review/{uid}/{item}", status_code=303)

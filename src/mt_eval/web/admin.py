"""The admin's pages: campaigns (create one from published runs of one dataset, read its report) and
the invitation form.

A campaign is made by ``review.campaign.create_campaign`` (stratified sample, controls, item hashes), the
report is ``review.report.campaign_report`` (quality control, agreement, adjudication, the §7.2 verdict
per method). **Secret segments:** a campaign's items carry their texts, and reviewers see them; so a
card with gold_standard or held_out entries is refused here unless the store was declared a governance
store (``store_settings``: ``review_secret_segments`` = ``allow``), where reviewers are vetted people
of the governance organisation (Benchmark Spec §8). Texts are never on a public page either way.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from mt_eval.accounts import ROLES
from mt_eval.accounts.users import list_accounts
from mt_eval.errors import UserError
from mt_eval.review.campaign import REFERENCE_POLICIES, assign, create_campaign
from mt_eval.review.report import campaign_report, report_json
from mt_eval.store.review_pages import campaign_list, review_choices, secret_entry_count, secret_review_allowed
from mt_eval.web.auth import Admin, Checked, with_role
from mt_eval.web.common import HASH_PATTERN, page, store_of

router = APIRouter()
Campaign = Annotated[str, Path(max_length=200, description="The campaign's name or uid.")]


def _home(request: Request, admin: Any, status_code: int = 200, error: str | None = None) -> HTMLResponse:
    store = store_of(request)
    return page(request, "admin.html", status_code=status_code, visitor=admin, campaigns=campaign_list(store),
                choices=review_choices(store), roles=ROLES, policies=REFERENCE_POLICIES, error=error,
                title="Admin")  # fmt: skip


@router.get("/admin", response_class=HTMLResponse, include_in_schema=False)
def admin_home(request: Request, admin: Admin) -> HTMLResponse:
    return _home(request, admin)


@router.post("/admin/campaigns", include_in_schema=False)
def new_campaign(request: Request, visitor: Checked,
                 run: Annotated[list[str], Form(max_length=8)],
                 size: Annotated[int, Form(ge=1, le=10_000)] = 100,
                 seed: Annotated[int, Form(ge=0, le=2**31)] = 0,
                 name: Annotated[str, Form(max_length=200)] = "",
                 reference: Annotated[str, Form(max_length=20)] = "after") -> Response:
    admin = with_role(visitor, "admin")
    store = store_of(request)
    try:
        if any(not re.fullmatch(HASH_PATTERN, r) for r in run):
            raise UserError("choose runs by their run_card_hash")
        if not secret_review_allowed(store) and secret_entry_count(store, run):
            raise UserError("refused: these runs hold gold_standard or held_out entries, whose texts reviewers "
                            "would see; only a governance store (review_secret_segments = allow) reviews them")
        summary = create_campaign(store, run, size=size, seed=seed, name=name.strip() or None,
                                  reference_policy=reference)
    except UserError as problem:
        return _home(request, admin, 400, problem.one_line())
    return RedirectResponse(f"/admin/campaigns/{summary.name}", status_code=303)


def _report(request: Request, campaign: str) -> dict[str, object]:
    return report_json(campaign_report(store_of(request), campaign, n_resamples=request.app.state.n_resamples))


@router.get("/admin/campaigns/{campaign}", response_class=HTMLResponse, include_in_schema=False)
def campaign_page(request: Request, campaign: Campaign, admin: Admin) -> HTMLResponse:
    report = _report(request, campaign)
    assigned = {r["name"] for r in report["status"]["reviewers"]}  # type: ignore[index]
    available = [a.name for a in list_accounts(store_of(request))
                 if a.role == "reviewer" and not a.disabled and a.name not in assigned]
    return page(request, "campaign.html", visitor=admin, report=report, available=available,
                title=f"Campaign {report['status']['name']}")  # type: ignore[index]


@router.post("/admin/campaigns/{campaign}/reviewers", include_in_schema=False)
def add_reviewer(request: Request, campaign: Campaign, visitor: Checked,
                 reviewer: Annotated[str, Form(max_length=200)]) -> Response:
    """Assign an existing reviewer account to this campaign (a new person gets an invitation instead)."""
    with_role(visitor, "admin")
    store = store_of(request)
    if not any(a.name == reviewer and a.role == "reviewer" and not a.disabled for a in list_accounts(store)):
        raise UserError(f"no active reviewer account named {reviewer[:60]!r}")
    name = assign(store, campaign, reviewer).campaign
    return RedirectResponse(f"/admin/campaigns/{name}", status_code=303)


@router.get("/api/admin/campaigns/{campaign}", summary="A review campaign's report (admins only)")
def campaign_api(request: Request, campaign: Campaign, admin: Admin) -> dict[str, object]:
    return _report(request, campaign)

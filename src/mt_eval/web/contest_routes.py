"""Contests on the web: the list, one contest, the self-serve submission form, an entrant's own entry,
the organiser's page, and their JSON twin under ``/api/contests``.

``serve --contests DIR`` names a folder of contest roots (``create_app(contests=…)``); a contest's id is its
folder's name, which must be its manifest's id. Every page reads the contest through the contest package's one
reader (``contest.state.contest_state``) and shows its public ``contest_view``: before close, with results
hidden, no secret-split score, rank or per-entry value is in it, and entrants are "Entrant 1..N" when the
manifest anonymises them. The JSON twin serves the same view, so the hidden rules cannot differ between them.
The web never shows hidden results to anyone, the organiser included (``contest show --organiser`` on the
organiser's machine does): a stolen session must not open them early.

Who sees what: ``ContestManifest.visible_to`` (a private contest only to its organiser and members; to anyone
else it is the same 404 as a contest that does not exist). On the web the organiser is an admin account or the
account named as the manifest's organiser. Submitting needs a signed-in account allowed by
``ContestManifest.may_submit``; the account's name is the entrant (``contest.entries``: the per-entrant budget
and key count per account, so a free-text entrant would let one account submit under names it invents). The
upload is bounded while it streams (``contest_upload``) and handed to the same ``submit_entry`` the command
line calls. An entry's page is its entrant's (and the organiser's); to anyone else a 404. Qualifying,
approving, executing, ranking and closing are the organiser's commands; the organiser's page lists them.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path as FilePath
from typing import Annotated, Any, Literal

from fastapi import APIRouter, HTTPException, Path, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.datastructures import UploadFile

from mt_eval.accounts import sessions
from mt_eval.accounts.sessions import Visitor
from mt_eval.contest.entries import KINDS, check_may_submit, submit_entry
from mt_eval.contest.manifest import DEV, MANIFEST
from mt_eval.contest.state import ContestState, ContestView, contest_state, contest_view, list_contests
from mt_eval.errors import UserError
from mt_eval.web.auth import visitor
from mt_eval.web.common import page
from mt_eval.web.contest_upload import FORM_OVERHEAD, bounded_form, field, saved_archive

router = APIRouter()
ContestId = Annotated[str, Path(max_length=64, description="The contest's id (its folder's name).")]
EntryNumber = Annotated[int, Path(ge=1, le=1_000_000, description="The entry's number, in order of submission.")]
NO_CONTEST = "no such contest here"
NO_ENTRY = "no such entry among yours"
BROKEN = "this contest's record failed verification; the organiser has been told by the command line"
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-")


def contests_root(request: Request) -> FilePath:
    """The folder of contest roots ``create_app`` was given; 404 when the server runs no contests."""
    root: FilePath | None = request.app.state.contests
    if root is None:
        raise HTTPException(status_code=404, detail="this server runs no contests (serve --contests DIR)")
    return root


def _account(found: Visitor | None) -> str | None:
    return found.account if found is not None else None


def _is_organiser(state: ContestState, found: Visitor | None) -> bool:
    """The server's admins (who run ``serve --contests`` on the organiser's machine) and an account named as
    the manifest's organiser (an organiser is often a council, a name no account can have)."""
    if found is None or found.account is None:
        return False
    return found.role == "admin" or found.account == state.manifest.organiser


def _visible(state: ContestState, found: Visitor | None) -> bool:
    return _is_organiser(state, found) or state.manifest.visible_to(_account(found))


def _load(request: Request, contest_id: str) -> ContestState:
    """The contest ``contest_id`` if the visitor may see it; the one 404 for a bad id, a missing or a hidden
    contest (a path in the id never reaches the file system: only a manifest id's characters pass)."""
    if not contest_id or contest_id[0] == "-" or not set(contest_id) <= _ID_CHARS:
        raise HTTPException(status_code=404, detail=NO_CONTEST)
    root = contests_root(request) / contest_id
    if not (root / MANIFEST).is_file():
        raise HTTPException(status_code=404, detail=NO_CONTEST)
    try:
        state = contest_state(root)
    except UserError:
        raise HTTPException(status_code=503, detail=BROKEN) from None
    if state.manifest.id != contest_id or not _visible(state, visitor(request)):
        raise HTTPException(status_code=404, detail=NO_CONTEST)
    return state


def _all(request: Request) -> tuple[list[ContestState], int]:
    """The contests the visitor may see, by id, and how many of the folder's could not be read."""
    found, refused = list_contests(contests_root(request))
    who = visitor(request)
    return [s for s in found if s.root.name == s.manifest.id and _visible(s, who)], len(refused)


def _view(state: ContestState, found: Visitor | None) -> ContestView:
    """The public view (hidden results stay hidden for everyone); the organiser also sees entrants' names."""
    view = contest_view(state)
    if view.anonymise and _is_organiser(state, found):
        names = {e.number: e.entrant for e in state.entries}
        view = replace(view, entries=tuple(replace(e, entrant=names[e.number]) for e in view.entries))
    return view


def upload_limit(state: ContestState) -> int:
    """The largest archive this contest takes: its manifest's artefact limit (the unpacked limit bounds the
    packed size too: an archive never unpacks smaller than its members)."""
    return state.manifest.max_artefact_mb << 20


def require_account(request: Request) -> Visitor:
    """The signed-in visitor (any role: an entrant needs only an account); 401, or the sign-in page on a GET."""
    found = visitor(request)
    if found is None or found.account is None:
        if request.method == "GET":
            raise HTTPException(status_code=303, detail="sign in first", headers={"Location": "/login"})
        raise HTTPException(status_code=401, detail="sign in first")
    return found


# ------------------------------------------------------------------ pages


@router.get("/contests", response_class=HTMLResponse, summary="Contests (page)")
def contests_page(request: Request) -> HTMLResponse:
    found = visitor(request)
    states, refused = _all(request)
    return page(request, "contest_list.html", visitor=found, contests=[_view(s, found) for s in states],
                refused=refused, title="Contests")  # fmt: skip


@router.get("/contests/{contest_id}", response_class=HTMLResponse, summary="One contest (page)")
def contest_page(request: Request, contest_id: ContestId) -> HTMLResponse:
    found = visitor(request)
    state = _load(request, contest_id)
    account = _account(found)
    mine = [e.number for e in state.entries if account is not None and e.entrant == account]
    return page(request, "contest.html", visitor=found, contest=_view(state, found), mine=mine,
                may_submit=state.manifest.may_submit(account) and not state.closed,
                organiser=_is_organiser(state, found), title=state.manifest.title)  # fmt: skip


@router.get("/contests/{contest_id}/dev.json", summary="The contest's public development split")
def dev_split(request: Request, contest_id: ContestId) -> Response:
    """The public dev split, by its one fixed name: nothing from the request names the file."""
    state = _load(request, contest_id)
    data = (state.root / DEV).read_bytes()  # small (a dev split); checked against the manifest, as qualify does
    if hashlib.sha256(data).hexdigest() != state.manifest.dev_sha256:
        raise HTTPException(status_code=503, detail=BROKEN)
    return Response(data, media_type="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{state.manifest.id}-dev.json"'})


@router.get("/contests/{contest_id}/submit", response_class=HTMLResponse, summary="The submission form")
def submit_form(request: Request, contest_id: ContestId) -> Response:
    signed_in = require_account(request)
    return _form(request, _may_submit(request, contest_id, signed_in), signed_in)


@router.post("/contests/{contest_id}/submit", summary="Submit an entry (multipart form)")
async def submit(request: Request, contest_id: ContestId) -> Response:
    # who and where first, from the headers alone: no byte of the body is read for one who may not submit
    signed_in = require_account(request)
    state = await run_in_threadpool(_may_submit, request, contest_id, signed_in)  # reads and verifies the log
    limit = upload_limit(state)
    form = await bounded_form(request, limit + FORM_OVERHEAD)
    if not sessions.csrf_ok(signed_in.session_id, field(form, "csrf")):
        raise HTTPException(status_code=403, detail="refused: the form's CSRF token is missing or not this "
                                                    "session's (reload the page and try again)")
    kind, upload = field(form, "kind", 20), form.get("archive")
    if not isinstance(upload, UploadFile) or not upload.filename:
        return _form(request, state, signed_in, 400, "choose the archive to upload (a .tar.gz or .zip of the "
                                                     "bundle or model folder)", kind)
    if kind not in KINDS:
        return _form(request, state, signed_in, 400, f"kind must be one of {', '.join(KINDS)}", kind)
    entrant = str(signed_in.account)
    checked_kind: Literal["bundle", "model"] = "model" if kind == "model" else "bundle"
    # the copy to disk (up to the limit) and the checks run off the event loop: other requests are not held up
    number = await run_in_threadpool(_save_and_submit, upload, limit, state, entrant, checked_kind)
    if isinstance(number, str):
        return _form(request, state, signed_in, 400, number, kind)
    return RedirectResponse(f"/contests/{state.manifest.id}/entries/{number}", status_code=303)


def _save_and_submit(upload: UploadFile, limit: int, state: ContestState, entrant: str,
                     kind: Literal["bundle", "model"]) -> int | str:
    """The entry's number, or submit_entry's one-line refusal as the entrant may read it."""
    with saved_archive(upload, limit) as archive:
        try:
            return submit_entry(state.root, archive, entrant=entrant, kind=kind)
        except UserError as refused:
            # the one line names our temporary file and the server's folders: the entrant reads names of theirs
            return refused.one_line().replace(str(archive), "the archive").replace(str(state.root), state.manifest.id)


def _may_submit(request: Request, contest_id: str, signed_in: Visitor) -> ContestState:
    state = _load(request, contest_id)
    if state.closed:
        raise HTTPException(status_code=409, detail=f"refused: contest {state.manifest.id} is closed")
    if not state.manifest.may_submit(signed_in.account):
        raise HTTPException(status_code=403, detail=f"refused: this {state.manifest.visibility} contest takes "
                                                    "entries from its members only")
    try:  # deadline, a required signature (the form carries none), the budget: refused before the body is read
        check_may_submit(state, signed_in.account or "", signed=False)
    except UserError as refused:
        raise HTTPException(status_code=403, detail=f"refused: {refused.one_line()}") from None
    return state


def _form(request: Request, state: ContestState, signed_in: Visitor, status: int = 200, error: str | None = None,
          kind: str = "bundle") -> HTMLResponse:
    return page(request, "contest_submit.html", status_code=status, visitor=signed_in, contest=_view(state, signed_in),
                kinds=KINDS, kind=kind, limit_mb=state.manifest.max_artefact_mb, error=error,
                title=f"Submit to {state.manifest.title}")  # fmt: skip


@router.get("/contests/{contest_id}/entries/{number}", response_class=HTMLResponse, summary="An entry (page)")
def entry_page(request: Request, contest_id: ContestId, number: EntryNumber) -> HTMLResponse:
    signed_in = require_account(request)
    state = _load(request, contest_id)
    entry = next((e for e in state.entries if e.number == number), None)
    if entry is None or not (entry.entrant == signed_in.account or _is_organiser(state, signed_in)):
        raise HTTPException(status_code=404, detail=NO_ENTRY)
    view = _view(state, signed_in)
    shown = next(e for e in view.entries if e.number == number)
    return page(request, "contest_entry.html", visitor=signed_in, contest=view, entry=replace(shown,
                entrant=entry.entrant), title=f"Entry {number} · {state.manifest.title}")  # fmt: skip


@router.get("/contests/{contest_id}/organiser", response_class=HTMLResponse, summary="The organiser's page")
def organiser_page(request: Request, contest_id: ContestId) -> HTMLResponse:
    signed_in = require_account(request)
    state = _load(request, contest_id)
    if not _is_organiser(state, signed_in):
        raise HTTPException(status_code=403, detail="this page is the contest organiser's")
    approvals = {e.number: e.approvals for e in state.entries}
    return page(request, "contest_organiser.html", visitor=signed_in, contest=_view(state, signed_in),
                approvals=approvals, quorum=state.manifest.quorum, root=str(state.root),
                title=f"Organise {state.manifest.title}")  # fmt: skip


# ------------------------------------------------------------------ JSON


@router.get("/api/contests", summary="Every contest the visitor may see (the public view, without entries)")
def contests_api(request: Request) -> list[dict[str, Any]]:
    found = visitor(request)
    listed = []
    for state in _all(request)[0]:
        summary = _view(state, found).as_json()
        summary["entries"] = len(summary["entries"])
        listed.append(summary)
    return listed


@router.get("/api/contests/{contest_id}", summary="One contest: rules, entrants, results once shown")
def contest_api(request: Request, contest_id: ContestId) -> dict[str, Any]:
    return _view(_load(request, contest_id), visitor(request)).as_json()

"""Signing in and out, accepting an invitation, and the admin's accounts and invitations.

Sign-in answers an unknown name and a wrong password with the same status and page (``accounts.login``),
and a locked name or address with 429 whether or not the name exists. A successful sign-in (or an
accepted invitation) ends the form's session and starts a new one: the session id changes at sign-in.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Path, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from mt_eval.accounts import ROLES, sessions
from mt_eval.accounts.invitations import REFUSED, accept, invitation, invite
from mt_eval.accounts.links import invitation_link
from mt_eval.accounts.login import Outcome, sign_in
from mt_eval.accounts.users import list_accounts
from mt_eval.errors import UserError
from mt_eval.web.auth import COOKIE, Admin, Checked, finish, form_session, set_cookie, with_role
from mt_eval.web.common import page, store_of

router = APIRouter(include_in_schema=False)
Token = Annotated[str, Path(max_length=100, pattern="^[A-Za-z0-9_-]+$")]
Name = Annotated[str, Form(max_length=200)]
Password = Annotated[str, Form(max_length=1024)]


def home_of(role: str | None) -> str:
    return "/admin" if role == "admin" else "/review"


def _signed_in(request: Request, old_session: str, account_id: int, role: str | None) -> Response:
    """End the form's session, start the account's: a new id (no fixation), and go to the role's home."""
    store = store_of(request)
    sessions.end(store, old_session)
    response = RedirectResponse(home_of(role), status_code=303)
    set_cookie(request, response, sessions.start(store, account_id))
    return response


@router.get("/login", response_class=HTMLResponse)
def login_form(request: Request) -> Response:
    found = form_session(request)
    if found.account:
        return RedirectResponse(home_of(found.role), status_code=303)
    return finish(request, page(request, "login.html", visitor=found, title="Sign in"))


@router.post("/login")
def login(request: Request, visitor: Checked, name: Name, password: Password) -> Response:
    address = request.client.host if request.client else "unknown"
    outcome, account = sign_in(store_of(request), name, password, address)
    if outcome is Outcome.OK and account is not None:
        return _signed_in(request, visitor.session_id, account.id, account.role)
    status = 429 if outcome is Outcome.LOCKED else 401
    return page(request, "login.html", status_code=status, visitor=visitor, error=outcome.value, account_name=name,
                title="Sign in")  # fmt: skip


@router.post("/logout")
def logout(request: Request, visitor: Checked) -> Response:
    sessions.end(store_of(request), visitor.session_id)
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


@router.get("/invite/{token}", response_class=HTMLResponse)
def invitation_form(request: Request, token: Token) -> Response:
    found = invitation(store_of(request), token)
    if found is None:
        return page(request, "error.html", status_code=404, status=404, message=REFUSED, title="Invitation")
    return finish(request, page(request, "invite.html", visitor=form_session(request), invited=found, token=token,
                                title="Accept the invitation"))  # fmt: skip


@router.post("/invite/{token}")
def accept_invitation(request: Request, visitor: Checked, token: Token, password: Password,
                      repeat: Password) -> Response:
    found = invitation(store_of(request), token)
    if found is None:
        return page(request, "error.html", status_code=404, status=404, message=REFUSED, title="Invitation")
    try:
        if password != repeat:
            raise UserError("the two passwords differ")
        account_id = accept(store_of(request), token, password)
    except UserError as problem:
        return page(request, "invite.html", status_code=400, visitor=visitor, invited=found, token=token,
                    error=problem.one_line(), title="Accept the invitation")  # fmt: skip
    except LookupError:
        return page(request, "error.html", status_code=404, status=404, message=REFUSED, title="Invitation")
    return _signed_in(request, visitor.session_id, account_id, found.role)


@router.post("/admin/invitations", response_class=HTMLResponse)
def new_invitation(request: Request, visitor: Checked, name: Name, role: Annotated[str, Form(max_length=20)],
                   campaign: Annotated[str, Form(max_length=200)] = "",
                   identity: Annotated[str, Form(max_length=320)] = "") -> HTMLResponse:
    admin = with_role(visitor, "admin")
    # the admin is recorded as the inviter; the identity is where the link goes (a reviewer counts with one)
    token = invite(store_of(request), name, role, campaign=campaign or None, by=admin.account,
                   identity=identity.strip() or None)
    # where this admin reached the server (its port, whatever ``serve --port`` was), unless a public URL is set
    link = invitation_link(request.app.state.public_url or str(request.base_url), token)
    return page(request, "invited.html", visitor=admin, link=link, invitee=name, role=role, campaign=campaign,
                identity=identity.strip(), title="Invitation made")  # fmt: skip


@router.get("/admin/accounts", response_class=HTMLResponse)
def accounts_page(request: Request, admin: Admin) -> HTMLResponse:
    return page(request, "accounts.html", visitor=admin, accounts=list_accounts(store_of(request)), roles=ROLES,
                title="Accounts")  # fmt: skip

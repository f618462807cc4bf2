"""Sessions, roles and CSRF on requests: ``mt_eval.accounts`` bound to cookies and forms.

The session cookie is HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it)
and Secure when the request came over https (``create_app(cookie_secure=…)`` forces either way: a
server behind a TLS proxy on 127.0.0.1 sees http). Every form carries the session's synchronizer token
(``accounts.sessions.csrf_token``) in a field named ``csrf``; a POST without it, or with another
session's, is a 403 before anything else runs.

Who may do what: anonymous visitors read the public pages only; ``require("reviewer")`` and
``require("admin")`` are dependencies that answer 401 to a visitor who is not signed in (a page GET
is sent to /login instead) and 403 to one with another role.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends, Form, HTTPException, Request, Response

from mt_eval.accounts import sessions
from mt_eval.accounts.sessions import Visitor
from mt_eval.web.common import store_of

COOKIE = "mt_eval_session"


def visitor(request: Request) -> Visitor | None:
    """The request's live session, if any (looked up once per request)."""
    if not hasattr(request.state, "visitor"):
        request.state.visitor = sessions.visitor(store_of(request), request.cookies.get(COOKIE))
    found: Visitor | None = request.state.visitor
    return found


def form_session(request: Request) -> Visitor:
    """The session a form is rendered in: the visitor's, or a new anonymous one (``set_cookie`` it)."""
    found = visitor(request)
    if found is None:
        found = Visitor(sessions.start(store_of(request)), None, None)
        request.state.visitor = found
        request.state.new_session = found.session_id
    return found


def set_cookie(request: Request, response: Response, session_id: str) -> None:
    forced: bool | None = request.app.state.cookie_secure
    secure = request.url.scheme == "https" if forced is None else forced
    response.set_cookie(COOKIE, session_id, httponly=True, samesite="strict", secure=secure, path="/",
                        max_age=int(sessions.SIGNED_IN.total_seconds()))  # fmt: skip


def finish(request: Request, response: Response) -> Response:
    """Set the cookie of a session this request started (``form_session``)."""
    new = getattr(request.state, "new_session", None)
    if new:
        set_cookie(request, response, new)
    return response


def checked(request: Request, csrf: Annotated[str | None, Form(max_length=200)] = None) -> Visitor:
    """The visitor of a form POST whose CSRF token is this session's; 403 otherwise."""
    found = visitor(request)
    if found is None or not sessions.csrf_ok(found.session_id, csrf):
        raise HTTPException(status_code=403, detail="refused: the form's CSRF token is missing or not this "
                                                    "session's (reload the page and try again)")
    return found


Checked = Annotated[Visitor, Depends(checked)]


def require(role: str) -> Callable[[Request], Visitor]:
    """A dependency: the signed-in visitor if they have ``role`` (401 if not signed in, 403 if not theirs)."""

    def dependency(request: Request) -> Visitor:
        found = visitor(request)
        if found is None or found.account is None:
            if request.method == "GET" and not request.url.path.startswith("/api/"):
                raise HTTPException(status_code=303, detail="sign in first", headers={"Location": "/login"})
            raise HTTPException(status_code=401, detail="sign in first")
        if found.role != role:
            raise HTTPException(status_code=403, detail=f"this page is for the {role} role")
        return found

    return dependency


Admin = Annotated[Visitor, Depends(require("admin"))]
Reviewer = Annotated[Visitor, Depends(require("reviewer"))]


def with_role(visitor_: Visitor, role: str) -> Visitor:
    """A checked form visitor who must also hold ``role`` (a form POST needs both checks)."""
    if visitor_.account is None:
        raise HTTPException(status_code=401, detail="sign in first")
    if visitor_.role != role:
        raise HTTPException(status_code=403, detail=f"this action is for the {role} role")
    return visitor_

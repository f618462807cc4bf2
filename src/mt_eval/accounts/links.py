"""Where an invitation link points: the address the server is reached at, never a guessed port.

The web page builds the link from the request's own base URL (the host and port the admin's browser
used), or from the public URL the operator configured (``serve --public-url``, for a server behind a
proxy). ``serve`` records the address it serves in the store (``store_settings``: ``public_url``: the
configured public URL, else ``http://HOST:PORT`` it listens on), so ``accounts invite`` on the command
line, which has no request, prints a link to that same server; ``--base-url`` overrides it. A server
listening on every interface (``0.0.0.0``) has no single address: nothing is recorded, and the command
line asks for ``--base-url`` rather than print a link nobody can follow.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from mt_eval.errors import UserError
from mt_eval.store.db import Store
from mt_eval.store.models import StoreSetting

PUBLIC_URL = "public_url"
_WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def check_base_url(url: str, option: str = "--public-url") -> str:
    """``url`` as a link prefix (``http(s)://host[:port][/path]``, no trailing slash); anything else is one
    line naming ``option``."""
    parts = urlsplit(url.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.query or parts.fragment:
        raise UserError(f"{option} {url!r}: give the address the server is reached at, such as "
                        "https://review.example.org or http://127.0.0.1:8080", field=option.lstrip("-"))
    try:
        parts.port  # noqa: B018 - a bad port (":99999", ":x") raises here
    except ValueError:
        raise UserError(f"{option} {url!r}: the port is not a number from 1 to 65535",
                        field=option.lstrip("-")) from None
    return url.strip().rstrip("/")


def served_url(host: str, port: int) -> str | None:
    """The address a server listening on ``host``:``port`` is reached at; None for every interface."""
    if host in _WILDCARDS:
        return None
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def record_public_url(store: Store, url: str | None) -> None:
    """Record (or, with None, forget) the address ``serve`` is reached at, for ``accounts invite``."""
    with store.session() as session:
        row = session.get(StoreSetting, PUBLIC_URL)
        if url is None:
            if row is not None:
                session.delete(row)
        elif row is None:
            session.add(StoreSetting(name=PUBLIC_URL, value=url))
        else:
            row.value = url


def recorded_public_url(store: Store) -> str | None:
    with store.session() as session:
        row = session.get(StoreSetting, PUBLIC_URL)
        return row.value if row is not None else None


def invitation_link(base: str, token: str) -> str:
    """The link an invitee opens: ``base`` (a server address, with or without a trailing slash) + the token."""
    return f"{base.rstrip('/')}/invite/{token}"

"""Web accounts: ``add`` one (the first admin is made here), ``invite`` someone, ``list``, ``disable``.
The work is in ``mt_eval.accounts``; ``mt-eval serve`` signs people in with these accounts."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import err, opt, out
from mt_eval.cli.store import DbOpt
from mt_eval.errors import UserError

accounts_app = typer.Typer(help="Web accounts: admins and reviewers, invitations.", no_args_is_help=True)
NameArg = Annotated[str, typer.Argument(help="The account name (letters, digits, . _ @ + -).")]
RoleOpt = Annotated[str, opt("admin (campaigns, invitations, accounts) or reviewer (rates assigned items).",
                             "--role")]


def _password(from_stdin: bool) -> str:
    """The new password: the first line of standard input, or asked twice without echo."""
    if from_stdin:
        line = sys.stdin.readline().rstrip("\r\n")
        if not line:
            raise UserError("--password-stdin: standard input holds no password")
        return line
    if not sys.stdin.isatty():
        raise UserError("no terminal to ask for a password: pipe it with --password-stdin")
    first: str = typer.prompt("Password (12 characters or more)", hide_input=True)
    if typer.prompt("Repeat it", hide_input=True) != first:
        raise UserError("the two passwords differ")
    return first


@accounts_app.command("add")
def add(
    name: NameArg,
    role: RoleOpt = "reviewer",
    db: DbOpt = None,
    password_stdin: Annotated[bool, opt("Read the password from standard input (first line).",
                                        "--password-stdin")] = False,
) -> None:
    """Make an account with a password (asked twice, not echoed). The first admin is made this way.

    Example: mt-eval accounts add ana --role admin --db mt-eval.db
    """
    from mt_eval.accounts.users import add_account, check_name, check_role
    from mt_eval.store import open_store

    check_name(name), check_role(role)
    password = _password(password_stdin)
    with open_store(db) as store:
        made = add_account(store, name, role, password)
    err.print(f"account {escape(made.name)} ({made.role}) made", highlight=False)


@accounts_app.command("invite")
def invite(
    name: NameArg,
    role: RoleOpt = "reviewer",
    db: DbOpt = None,
    campaign: Annotated[str | None, opt("Assign the reviewer to this campaign (name or uid) on acceptance.",
                                        "--campaign")] = None,
    identity: Annotated[str | None, opt("The e-mail address or ORCID iD the link is sent to; accepting verifies it "
                                        "(a reviewer counts toward the review gate only with one).",
                                        "--identity")] = None,
    days: Annotated[float, opt("Days the invitation stays valid.", "--days")] = 7.0,
    base_url: Annotated[str | None, opt("Where the server is reached, for the link (default: the address "
                                        "`mt-eval serve` recorded in this store: its --public-url, else "
                                        "http://HOST:PORT).", "--base-url")] = None,
) -> None:
    """Make a single-use invitation link (printed once; the store keeps only its hash).

    Example: mt-eval accounts invite ben --role reviewer --campaign es-oct --identity ben@uni.example --base-url https://review.example.org
    """
    from mt_eval.accounts.invitations import invite as make_invitation
    from mt_eval.accounts.links import check_base_url, invitation_link, recorded_public_url
    from mt_eval.store import open_store

    if not 0 < days <= 90:
        raise UserError(f"--days must be more than 0 and at most 90, not {days}")
    given = check_base_url(base_url, "--base-url") if base_url is not None else None
    with open_store(db) as store:
        base = given or recorded_public_url(store)
        if base is None:  # checked before the invitation exists: its token is shown only once
            raise UserError("no server address for the link: this store was never served with an address "
                            "(`mt-eval serve --host 0.0.0.0` records none)",
                            hint="give --base-url http://HOST:PORT, where `mt-eval serve` is reached")
        token = make_invitation(store, name, role, campaign=campaign, by="command line", identity=identity,
                                lifetime=timedelta(days=days))
    out.print(invitation_link(base, token), highlight=False, soft_wrap=True)


@accounts_app.command("list")
def list_(db: DbOpt = None) -> None:
    """List the accounts: name, role, since, state.

    Example: mt-eval accounts list --db mt-eval.db
    """
    from mt_eval.accounts.users import list_accounts
    from mt_eval.store import open_store

    with open_store(db) as store:
        accounts = list_accounts(store)
    for a in accounts:
        out.print(f"{escape(a.name)}\t{a.role}\t{a.created_at:%Y-%m-%d}\t{'disabled' if a.disabled else 'active'}",
                  highlight=False)
    if not accounts:
        err.print("no accounts yet: mt-eval accounts add NAME --role admin", highlight=False)


@accounts_app.command("disable")
def disable(name: NameArg, db: DbOpt = None) -> None:
    """Disable an account: it can no longer sign in and its sessions end now (its ratings stay).

    Example: mt-eval accounts disable ben --db mt-eval.db
    """
    from mt_eval.accounts.users import disable_account
    from mt_eval.store import open_store

    with open_store(db) as store:
        disable_account(store, name)
    err.print(f"account {escape(name)} disabled", highlight=False)

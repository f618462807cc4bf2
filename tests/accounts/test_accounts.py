"""The accounts domain on real stores (SQLite and a real PostgreSQL): argon2 hashes checked with
argon2-cffi itself, nothing secret stored in clear, sessions and invitations expiring, the sign-in rate
limit per name and per address, migration 0004 up and down, and ``mt-eval accounts`` with bad input."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from argon2 import PasswordHasher
from sqlalchemy import select, update
from typer.testing import CliRunner

from mt_eval.accounts import invitations, passwords, sessions
from mt_eval.accounts.login import ACCOUNT_LIMIT, ADDRESS_LIMIT, Outcome, sign_in
from mt_eval.accounts.tokens import digest
from mt_eval.accounts.users import add_account, disable_account, list_accounts
from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.store import open_store
from mt_eval.store.db import downgrade, table_names, upgrade
from mt_eval.store.models import Account, AccountSession, Invitation, LoginAttempt

PASSWORD = "correct horse battery staple"
TABLES = {"accounts", "account_sessions", "invitations", "login_attempts"}
runner = CliRunner()


def test_passwords_sessions_and_invitations_keep_no_secret_in_clear(db_url: str) -> None:
    with open_store(db_url) as store:
        made = add_account(store, "ana", "admin", PASSWORD)
        session_id = sessions.start(store, made.id)
        token = invitations.invite(store, "ben", "reviewer")
        with store.session() as session:
            stored = session.scalars(select(Account.password_hash)).one()
            ids = session.scalars(select(AccountSession.id_sha256)).all()
            tokens = session.scalars(select(Invitation.token_sha256)).all()
        assert stored.startswith("$argon2id$") and PasswordHasher().verify(stored, PASSWORD)  # the library's own
        assert ids == [digest(session_id)] and tokens == [digest(token)]
        seen = sessions.visitor(store, session_id)
        assert seen is not None and (seen.account, seen.role) == ("ana", "admin")
        assert sessions.visitor(store, digest(session_id)) is None  # the stored hash is no key
        assert sessions.csrf_ok(session_id, seen.csrf) and not sessions.csrf_ok(sessions.start(store), seen.csrf)
        with pytest.raises(UserError, match="at least 12"):
            add_account(store, "eve", "admin", "short")
        with pytest.raises(UserError, match="already exists"):
            add_account(store, "ana", "reviewer", PASSWORD)
        with pytest.raises(UserError, match="choose one of"):
            add_account(store, "eve", "root", PASSWORD)
        disable_account(store, "ana")  # its sessions end at once and it cannot sign in
        assert sessions.visitor(store, session_id) is None
        assert sign_in(store, "ana", PASSWORD, "10.0.0.1") == (Outcome.WRONG, None)


def test_sessions_and_invitations_expire_and_invitations_are_single_use(tmp_path: object) -> None:
    with open_store(f"{tmp_path}/s.db") as store:
        made = add_account(store, "ana", "reviewer", PASSWORD)
        live, old = sessions.start(store, made.id), sessions.start(store, made.id)
        token = invitations.invite(store, "ben", "reviewer")
        stale = invitations.invite(store, "cem", "reviewer")
        past = datetime.now(UTC) - timedelta(seconds=1)
        with store.session() as session:
            session.execute(update(AccountSession).where(AccountSession.id_sha256 == digest(old))
                            .values(expires_at=past))
            session.execute(update(Invitation).where(Invitation.name == "cem").values(expires_at=past))
        assert sessions.visitor(store, live) is not None and sessions.visitor(store, old) is None
        assert invitations.invitation(store, stale) is None
        with pytest.raises(LookupError):
            invitations.accept(store, stale, PASSWORD)
        with pytest.raises(UserError, match="at least 12"):  # a refused password does not spend it
            invitations.accept(store, token, "short")
        invitations.accept(store, token, PASSWORD)
        with pytest.raises(LookupError):
            invitations.accept(store, token, PASSWORD)
        assert {a.name for a in list_accounts(store)} == {"ana", "ben"}
        assert sign_in(store, "ben", PASSWORD, "10.0.0.2")[0] is Outcome.OK
        with pytest.raises(UserError, match="only a reviewer"):
            invitations.invite(store, "dan", "admin", campaign="x")


def test_rate_limit_per_name_and_per_address(tmp_path: object) -> None:
    with open_store(f"{tmp_path}/r.db") as store:
        add_account(store, "ana", "admin", PASSWORD)
        for _ in range(ACCOUNT_LIMIT):
            assert sign_in(store, "ana", "wrong password!", "10.0.0.1")[0] is Outcome.WRONG
        assert sign_in(store, "ana", PASSWORD, "10.0.0.9")[0] is Outcome.LOCKED  # the right password, too late
        with store.session() as session:  # each failure counted under its name and its address
            keys = session.scalars(select(LoginAttempt.key)).all()
        # each failure counted under its name and its address; the refused attempt is counted too
        assert sorted(set(keys)) == ["account:ana", "address:10.0.0.1", "address:10.0.0.9"]
        assert len(keys) == 2 * ACCOUNT_LIMIT + 2
        assert sign_in(store, "user0", "wrong password!", "10.0.0.7")[0] is Outcome.WRONG
        with store.session() as session:  # that address's other failures (argon2 is slow on purpose)
            moment = datetime.now(UTC)
            session.add_all(LoginAttempt(key="address:10.0.0.7", at=moment) for _ in range(ADDRESS_LIMIT - 1))
        assert sign_in(store, "someone-else", "x", "10.0.0.7")[0] is Outcome.LOCKED
        assert sign_in(store, "someone-else", "x", "10.0.0.8")[0] is Outcome.WRONG  # another address is not
        with store.session() as session:  # the window passes
            session.execute(update(LoginAttempt).values(at=datetime.now(UTC) - timedelta(hours=1)))
        assert sign_in(store, "ana", PASSWORD, "10.0.0.7")[0] is Outcome.OK


def test_guesses_sent_at_once_cannot_pass_the_limit_together(db_url: str) -> None:
    """Every attempt is written before its password is checked, so twelve guesses in parallel threads
    (as a web server runs them) get at most ACCOUNT_LIMIT checks: the rest are locked out."""
    import threading
    import time

    from mt_eval.accounts import login

    real_verify = login.verify

    def slow_verify(stored: str | None, password: str) -> bool:  # argon2 at its real cost takes this long
        time.sleep(0.3)
        return real_verify(stored, password)

    with pytest.MonkeyPatch.context() as patch, open_store(db_url) as store:
        patch.setattr(login, "verify", slow_verify)
        add_account(store, "ana", "admin", PASSWORD)
        outcomes: list[Outcome] = []
        gate = threading.Barrier(12)

        def guess(i: int) -> None:
            gate.wait()
            outcomes.append(sign_in(store, "ana", f"guess {i}", f"10.1.0.{i}")[0])

        threads = [threading.Thread(target=guess, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert len(outcomes) == 12 and outcomes.count(Outcome.WRONG) <= ACCOUNT_LIMIT
    assert outcomes.count(Outcome.LOCKED) >= 12 - ACCOUNT_LIMIT


def test_migration_0004_up_and_down(db_url: str) -> None:
    store = open_store(db_url)
    assert table_names(store.engine) >= TABLES
    downgrade(store.engine, "0003")
    names = table_names(store.engine)
    assert not TABLES & names and {"review_ratings", "run_cards"} <= names
    upgrade(store.engine)
    assert table_names(store.engine) >= TABLES
    store.close()


def test_the_accounts_commands(tmp_path: object) -> None:
    db = f"{tmp_path}/c.db"

    def run(*args: str, stdin: str | None = None) -> object:
        return runner.invoke(app, ["accounts", *args, "--db", db], input=stdin)

    with pytest.MonkeyPatch.context() as patch:  # the first admin, with the hasher a user gets
        patch.setattr(passwords, "HASHER", PasswordHasher())
        made = run("add", "root", "--role", "admin", "--password-stdin", stdin=PASSWORD + "\n")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    with open_store(db) as store, store.session() as session:  # argon2id, RFC 9106's second recommendation
        assert session.scalars(select(Account.password_hash)).one().startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    link = run("invite", "ben", "--base-url", "https://review.example.org/")
    assert link.exit_code == 0 and link.stdout.startswith("https://review.example.org/invite/")  # type: ignore[attr-defined]
    with open_store(db) as store:
        assert invitations.invitation(store, link.stdout.strip().rsplit("/", 1)[1]) is not None  # type: ignore[attr-defined]
    for args, stdin, needle in ((("add", "x y", "--password-stdin"), PASSWORD, "account name"),
                                (("add", "eve", "--role", "god", "--password-stdin"), PASSWORD, "choose one of"),
                                (("add", "eve", "--password-stdin"), "short\n", "at least 12"),
                                (("add", "eve", "--password-stdin"), "", "no password"),
                                (("add", "eve"), "", "--password-stdin"),
                                (("invite", "dan", "--campaign", "nope", "--base-url", "http://127.0.0.1:8000"), None,
                                 "no review campaign"),
                                (("invite", "dan", "--days", "0"), None, "--days"),
                                (("disable", "nobody"), None, "no account")):
        result = run(*args, stdin=stdin)
        lines = result.output.strip().splitlines()  # type: ignore[attr-defined]
        assert result.exit_code == 2 and len(lines) == 1 and needle in lines[0], (args, result.output)  # type: ignore[attr-defined]
    assert run("disable", "root").exit_code == 0  # type: ignore[attr-defined]
    listed = run("list")
    assert listed.exit_code == 0 and listed.stdout.split()[:2] == ["root", "admin"] and "disabled" in listed.stdout  # type: ignore[attr-defined]

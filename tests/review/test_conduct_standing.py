"""Reviewer conduct (straight-lining, speed, identical timings, one script under several names) on simulated
people and scripts, and standing (identities, who invited whom) through the real commands and store."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from review_helpers import PASSWORD, cli

from mt_eval.errors import UserError
from mt_eval.review.conduct import SPEED_FLOOR, conduct_flags
from mt_eval.review.identity import normal_identity
from mt_eval.store import open_store
from mt_eval.store.models import Account

START = datetime(2026, 11, 23, 9, tzinfo=UTC)


@dataclass(frozen=True)
class Row:
    reviewer: str
    item_id: int
    kind: str
    value: int
    seconds: float | None
    rated_at: datetime | None


def person(name: str, seed: int, items: int = 120, *, pace: float = 12.0) -> list[Row]:
    """A person: ratings spread over the scale (controls low), log-normal seconds around ``pace``, stamps
    that follow them, items met in their own order."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(items)
    at, rows = START + timedelta(minutes=float(rng.uniform(0, 300))), []
    for item in order:
        kind = "control_bad" if item % 10 == 0 else "output"
        value = int(rng.choice([0, 1])) if kind == "control_bad" else int(rng.choice(4, p=[0.1, 0.2, 0.35, 0.35]))
        seconds = round(float(rng.lognormal(np.log(pace), 0.5)), 3)
        at += timedelta(seconds=seconds)
        rows.append(Row(name, int(item), kind, value, seconds, at))
    return rows


def script(name: str, items: int = 120, *, seconds: float | None = 6.0, jitter: int = 0) -> list[Row]:
    """The sybil script: 0 for the controls it found, 3 for the rest, one timing for all, stamps 1 s apart."""
    return [Row(name, i, "control_bad" if i % 10 == 0 else "output", 0 if i % 10 == 0 else 3, seconds,
                START + timedelta(seconds=i + jitter)) for i in range(items)]


def test_people_raise_no_flag() -> None:
    for trial in range(20):
        rows = [r for k in range(4) for r in person(f"p{k}", 100 * trial + k)]
        assert conduct_flags(rows) == {f"p{k}": [] for k in range(4)}, trial


def test_each_pattern_is_flagged() -> None:
    flags = conduct_flags(script("s1") + script("s2", jitter=0) + person("ana", 1))
    assert flags["ana"] == []
    for name, other in (("s1", "s2"), ("s2", "s1")):
        text = "; ".join(flags[name])
        assert "straight-lining: 100% of real outputs rated 3" in text
        assert "identical timings: 100% of items took exactly 6.0 s" in text
        assert f"timing pattern identical to {other}'s" in text and f"rated at the same moments as {other}" in text
        assert f"identical ratings to {other}'s on all 120 common items" in text
        assert "implausible speed" not in text  # the script claims 6 s an item
    fast = person("fast", 2, pace=1.0)
    assert any(f.startswith("implausible speed") and f"floor {SPEED_FLOOR:g} s" in f
               for f in conduct_flags(fast)["fast"])
    untimed = [Row(r.reviewer, r.item_id, r.kind, r.value, None, None) for r in person("quiet", 3)]
    assert conduct_flags(untimed)["quiet"] == ["no timing recorded for most items"]
    # web ratings without the page's timer: the server's stamps time them (here 1 s apart: too fast)
    stamped = [Row(r.reviewer, r.item_id, r.kind, r.value, None, r.rated_at) for r in script("web", seconds=None)]
    assert any("implausible speed: median 1.0 s" in f for f in conduct_flags(stamped)["web"])


def test_a_script_replaying_one_timing_list_in_another_order_is_caught() -> None:
    """Per item the two accounts' timings differ (each met the items in its own order); sorted, they are
    one list: the same script."""
    base = person("ana", 7)
    seconds = [r.seconds for r in base]
    other = [Row("bot", r.item_id, r.kind, (r.value + 1) % 4, seconds[(n + 17) % len(seconds)],
                 r.rated_at + timedelta(hours=3) if r.rated_at else None) for n, r in enumerate(base)]
    flags = conduct_flags(base + other)
    assert "timing pattern identical to bot's" in flags["ana"] and "timing pattern identical to ana's" in flags["bot"]


@pytest.mark.parametrize(("raw", "normal"), [
    ("Ana.Ruiz+mt@Uni.ES", "ana.ruiz@uni.es"),
    ("ana.ruiz@uni.es", "ana.ruiz@uni.es"),
    ("0000-0002-1825-0097", "orcid:0000-0002-1825-0097"),  # ORCID's own example iD
    ("https://orcid.org/0000-0001-5109-3700", "orcid:0000-0001-5109-3700"),
    ("orcid:0000-0002-1694-233x", "orcid:0000-0002-1694-233X"),  # check digit X (ORCID's example)
])
def test_identities_have_one_normal_form(raw: str, normal: str) -> None:
    assert normal_identity(raw) == normal


@pytest.mark.parametrize("raw", ["ana", "0000-0002-1825-0098", "ana@", "@uni.es", "a b@uni.es", ""])
def test_not_an_identity(raw: str) -> None:
    with pytest.raises(UserError):
        normal_identity(raw)


BASE = "http://127.0.0.1:8000"  # where the link points (accounts invite asks when serve never recorded one)


def test_who_invited_whom_is_recorded_and_one_identity_is_one_account(sqlite_db: str) -> None:
    from mt_eval.accounts.invitations import accept

    made = cli("accounts", "invite", "ben", "--identity", "Ben+x@Uni.example", "--db", sqlite_db, "--base-url", BASE)
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    token = made.stdout.strip().rsplit("/", 1)[1]  # type: ignore[attr-defined]
    twin = cli("accounts", "invite", "ben2", "--identity", "ben@uni.example", "--db", sqlite_db, "--base-url", BASE)
    assert twin.exit_code == 2 and "one person, one account" in twin.output  # type: ignore[attr-defined]
    with open_store(sqlite_db) as store:
        accept(store, token, PASSWORD)
        with store.session() as session:
            ben = session.query(Account).filter_by(name="ben").one()
            assert (ben.identity, ben.invited_by, ben.verified_at is not None) == ("ben@uni.example",
                                                                                  "command line", True)
    again = cli("accounts", "invite", "ben3", "--identity", "BEN@uni.example", "--db", sqlite_db, "--base-url", BASE)
    assert again.exit_code == 2 and "one person, one account" in again.output  # type: ignore[attr-defined]


def test_a_submitter_assigned_before_is_not_counted_and_a_disabled_account_stops_counting(
        published: tuple[str, dict[str, str]]) -> None:
    """``assign`` refuses a submitter; one assigned before the card named them (here: its submitter field
    set to the reviewer's identity afterwards) is still not counted, nor an account an admin disabled."""
    from review_helpers import invited
    from sqlalchemy import update

    from mt_eval.accounts.users import disable_account
    from mt_eval.review.campaign import assign, find_campaign
    from mt_eval.review.standing import campaign_standing
    from mt_eval.store.models import Card

    sqlite_db, hashes = published
    made = cli("review", "create", "--db", sqlite_db, "--card", hashes["near"], "--size", 12, "--name", "es-own")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    for name in ("ana", "ben", "cem"):
        invited(sqlite_db, name, campaign="es-own")
    with open_store(sqlite_db) as store:
        with store.session() as session:
            session.execute(update(Card).values(submitter="ANA+runs@example.org"))
        disable_account(store, "cem")
        with pytest.raises(UserError, match="cannot review a card they submitted"):
            assign(store, "es-own", "ana")
        with store.session() as session:
            standing = campaign_standing(session, find_campaign(session, "es-own").id)
    assert standing == {"ana": "submitted a card of this campaign", "ben": None, "cem": "account disabled"}

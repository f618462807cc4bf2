"""The contest state read from its audit log: entry states, the quorum of approvals, hidden results in the public
view (asserted on the serialised view: no secret-split number in any form), pseudonyms, a tampered log refused
in one line, a closed contest frozen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.contest.state import contest_state, contest_view, list_contests, require_open
from mt_eval.errors import UserError
from support.contest import Made, make_contest, record, submitted

SECRET_VALUE, SECRET_CI, COMPOSITE = 43.2178, (41.0093, 45.5521), 0.61937
NAMES = ["Alice Translator", "Bob Models", "Carol Rules"]


@pytest.fixture
def made(tmp_path: Path) -> Made:
    made = make_contest(tmp_path)
    submitted(made.root, NAMES)
    record(made.root, "contest.qualify", entry=1, passed=True, score=35.5, reason=None)
    record(made.root, "contest.qualify", entry=2, passed=False, score=3.25, reason="chrF++ 3.25 < 20")
    record(made.root, "contest.qualify", entry=3, passed=True, score=30.0, reason=None)
    record(made.root, "contest.approve", entry=1, custodian="custodian-1")
    record(made.root, "contest.execute", entry=1, value=SECRET_VALUE, ci=list(SECRET_CI), composite=COMPOSITE,
           full_run_card_hash="ab" * 32)
    record(made.root, "contest.rank", ranking_sha256="cd" * 32, metric="chrf_plus_plus",
           ranks=[{"entry": 1, "rank": 1, "cluster": 1}])
    return made


def _numbers(value: float) -> list[str]:
    return [repr(value), f"{value:.2f}", f"{value:.1f}", f"{value:.3f}", str(round(value, 2))]


def test_entry_states_from_the_log(made: Made) -> None:
    state = contest_state(made.root)
    assert [e.state for e in state.entries] == ["executed", "not-qualified", "qualified"]
    assert state.entry(1).value == SECRET_VALUE and state.entry(1).ci == SECRET_CI and state.entry(1).rank == 1
    assert state.entry(2).qualify_reason == "chrF++ 3.25 < 20" and state.state == "open"
    with pytest.raises(UserError, match="has no entry 9"):
        state.entry(9)


def test_public_view_hides_results_and_names_before_close(made: Made) -> None:
    view = contest_view(contest_state(made.root))
    text = json.dumps(view.as_json())
    assert view.results_hidden and [e.state for e in view.entries] == ["executed", "not-qualified", "qualified"]
    leaked = [n for v in (SECRET_VALUE, *SECRET_CI, COMPOSITE) for n in _numbers(v) if n in text]
    assert not leaked and "cd" * 32 not in text and '"rank": 1' not in text
    assert not [n for n in NAMES if n in text]
    assert [e.entrant for e in view.entries] == ["Entrant 1", "Entrant 2", "Entrant 3"]
    assert view.entries[0].dev_score == 35.5  # the dev split is public: its score is too
    organiser = json.dumps(contest_view(contest_state(made.root), organiser=True).as_json())
    assert all(n in organiser for n in ("43.2178", "41.0093", "0.61937", "Alice Translator", "cd" * 32))


def test_results_shown_after_close_or_when_not_hidden(made: Made, tmp_path: Path) -> None:
    record(made.root, "contest.close", ranking_sha256="cd" * 32)
    view = contest_view(contest_state(made.root))
    assert not view.results_hidden and view.state == "closed"
    assert (view.entries[0].value, view.entries[0].rank, view.ranking_sha256) == (SECRET_VALUE, 1, "cd" * 32)
    assert view.entries[0].entrant == "Entrant 1"  # anonymised still: close publishes results, not names
    shown = make_contest(tmp_path, name="open-results", results_hidden_until_close=False, anonymise=False)
    submitted(shown.root, ["Dana"])
    record(shown.root, "contest.qualify", entry=1, passed=True, score=30.0)
    record(shown.root, "contest.approve", entry=1, custodian="c1")
    record(shown.root, "contest.execute", entry=1, value=12.5, ci=[10.0, 15.0], composite=0.3)
    one = contest_view(contest_state(shown.root)).entries[0]
    assert (one.entrant, one.value) == ("Dana", 12.5)


def test_closed_contest_is_frozen(made: Made) -> None:
    require_open(contest_state(made.root), "submit")
    record(made.root, "contest.close", ranking_sha256="cd" * 32)
    with pytest.raises(UserError, match=r"was closed on .*; submit refused") as info:
        require_open(contest_state(made.root), "submit")
    assert "\n" not in info.value.one_line()


def test_quorum_of_approvals(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    submitted(made.root, ["x"])
    record(made.root, "contest.qualify", entry=1, passed=True, score=30.0)
    state = contest_state(made.root)
    assert state.manifest.quorum == 1 and state.entry(1).state == "qualified"
    record(made.root, "contest.approve", entry=1, custodian="c1")
    assert contest_state(made.root).entry(1).state == "approved"


def test_tampered_log_is_refused_in_one_line(made: Made) -> None:
    log = made.root / "governance" / "audit.jsonl"
    lines = log.read_bytes().splitlines()
    at = next(i for i, line in enumerate(lines) if b"43.2178" in line)
    lines[at] = lines[at].replace(b"43.2178", b"93.2178")  # someone raises entry 1's score in place
    log.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(UserError, match="audit log fails verification") as info:
        contest_state(made.root)
    assert "\n" not in info.value.one_line()
    found, refused = list_contests(made.root.parent)
    assert not found and len(refused) == 1 and "fails verification" in refused[0]


def test_illegal_transitions_and_changes_after_close_do_not_count(tmp_path: Path) -> None:
    """Events someone logs around the writers' checks: an execute without the custodians' approval, a second
    qualify that would turn a failed entry into a qualified one, anything but publish after close."""
    made = make_contest(tmp_path)
    submitted(made.root, ["a", "b"])
    record(made.root, "contest.qualify", entry=1, passed=True, score=30.0)
    record(made.root, "contest.execute", entry=1, value=88.0, ci=[80.0, 90.0], composite=0.8,
           full_run_card_hash="ab" * 32)  # no approval: the custodians never let it near the vault
    record(made.root, "contest.qualify", entry=2, passed=False, score=1.0, reason="below")
    record(made.root, "contest.qualify", entry=2, passed=True, score=99.0)  # qualified again, by hand
    record(made.root, "contest.close", ranking_sha256=None)
    record(made.root, "contest.submit", entry=3, entrant="late", entry_kind="bundle", sha256="cc" * 32)
    state = contest_state(made.root)
    assert [(e.number, e.state, e.value) for e in state.entries] == [(1, "qualified", None),
                                                                     (2, "not-qualified", None)]
    assert len(state.problems) == 3 and "entry 1: contest.execute while qualified" in state.problems[0]
    assert "after close" in state.problems[2]


def test_cli_show_hides_results_from_the_public(made: Made) -> None:
    from typer.testing import CliRunner

    from mt_eval.cli import app

    public = CliRunner().invoke(app, ["contest", "show", str(made.root)])
    assert public.exit_code == 0 and "hidden until close" in public.output and "Entrant 1" in public.output
    assert not [n for v in (SECRET_VALUE, *SECRET_CI) for n in _numbers(v)[1:] if n in public.output]
    assert "Alice" not in public.output
    inside = CliRunner().invoke(app, ["contest", "show", str(made.root), "--organiser"])
    assert inside.exit_code == 0 and "43.22" in inside.output and "Alice Translator" in inside.output

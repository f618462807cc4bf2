"""Ranking, closing and exporting a contest. Ranks are checked against a hand-worked example (competition
numbering) and against sacrebleu's own paired bootstrap (``sacrebleu.significance.PairedTest``, same seed) on
the same outputs and references, with Holm's step-down computed here by hand. Executed entries are written by
``support.contest.execute_scored`` (cards scored here with the sovereign runner's scoring, marked as a stand-in
for entries.py)."""

from __future__ import annotations

import csv
import io
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sacrebleu.metrics import CHRF
from sacrebleu.significance import PairedTest

from mt_eval.contest.lifecycle import close_contest, export_contest, export_text, publish_contest
from mt_eval.contest.manifest import SECRET_SEGMENT
from mt_eval.contest.ranking import CONTEXT, competition_ranks, rank_contest, read_contest_ranking
from mt_eval.contest.state import contest_state, contest_view
from mt_eval.errors import UserError
from mt_eval.runcard.signing import Signature, new_key, signature_path
from mt_eval.sovereign.vault import open_segment
from mt_eval.store.ranking import clusters
from support.contest import Made, execute_scored, make_contest, record, reference_outputs, submitted

KINDS = {1: "half", 2: "drop_odd", 3: "perfect", 4: "drop_even"}  # submitted worst first: order is not rank


@pytest.fixture(scope="module")
def ranked(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("ranked")
    made = make_contest(tmp)
    outputs = {n: reference_outputs(made, kind) for n, kind in KINDS.items()}
    for n in KINDS:
        execute_scored(made, n, outputs[n], entrant=f"team-{KINDS[n]}")
    key, _, _ = new_key(tmp / "organiser.key", signer="organiser")
    document, placed = rank_contest(made.root, made.key, key)
    return {"made": made, "key": key, "document": document, "placed": placed, "outputs": outputs}


def test_competition_numbering_hand_worked() -> None:
    # four entries, steps significant / not / significant: clusters 1, 2, 2, 3 -> ranks 1, 2, 2, 4
    placed = clusters(4, [True, False, True])
    assert [c for c, _ in placed] == [1, 2, 2, 3]
    assert competition_ranks([c for c, _ in placed]) == [1, 2, 2, 4]
    assert competition_ranks([1, 1, 1, 2]) == [1, 1, 1, 4] and competition_ranks([1, 2, 3]) == [1, 2, 3]
    assert competition_ranks([1, 1, 2, 2, 3]) == [1, 1, 3, 3, 5]


def _holm(ps: list[float], alpha: float = 0.05) -> list[bool]:
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    significant, m = [False] * len(ps), len(ps)
    for k, i in enumerate(order):
        if ps[i] > alpha / (m - k):
            break
        significant[i] = True
    return significant


def test_ranks_equal_sacrebleu_paired_bootstrap(ranked: dict[str, Any]) -> None:
    made: Made = ranked["made"]
    document, outputs = ranked["document"], ranked["outputs"]
    secret = open_segment(made.root / "vault", made.key, SECRET_SEGMENT).entries
    refs = [e.reference for e in secret]
    order = [d["entry"] for d in document["entries"]]
    chrf = {n: CHRF(word_order=2).corpus_score([outputs[n][e.id] for e in secret], [refs]).score for n in KINDS}
    assert order == sorted(KINDS, key=lambda n: -chrf[n])
    assert [d["value"] for d in document["entries"]] == pytest.approx([chrf[n] for n in order], abs=1e-9)
    ps = []
    for better, worse in pairwise(order):
        _, scores = PairedTest([(str(better), [outputs[better][e.id] for e in secret]),
                                (str(worse), [outputs[worse][e.id] for e in secret])],
                               {"chrF2++": CHRF(word_order=2)}, [refs], test_type="bs", n_samples=1000)()
        result = scores["chrF2++"][1]
        assert not isinstance(result, str) and result.p_value is not None
        ps.append(float(result.p_value))
    steps = document["steps"]
    assert [s["p_value"] for s in steps] == pytest.approx(ps, abs=2 / 1001)
    significant = _holm(ps)
    assert [s["significant"] for s in steps] == significant
    expected = competition_ranks([c for c, _ in clusters(len(order), significant)])
    assert [d["rank"] for d in document["entries"]] == expected
    assert {KINDS[d["entry"]]: d["rank"] for d in document["entries"]} == {"perfect": 1, "drop_even": 2,
                                                                           "drop_odd": 2, "half": 4}


def test_ranking_is_signed_and_an_edit_is_refused(ranked: dict[str, Any], tmp_path: Path) -> None:
    made: Made = ranked["made"]
    document, signature = read_contest_ranking(made.root / "ranking.json")
    assert document == ranked["document"] and signature.key_id == document["organiser_key_id"]
    state = contest_state(made.root)
    assert state.ranking is not None and state.ranking.sha256 == document["ranking_sha256"]
    assert {n: e.rank for n, e in ((e.number, e) for e in state.entries)} == {3: 1, 2: 2, 4: 2, 1: 4}
    copy = tmp_path / "ranking.json"
    edited = json.loads((made.root / "ranking.json").read_text())
    edited["entries"][3]["rank"] = 3  # the last entry claims a better place
    copy.write_text(json.dumps(edited))
    signature_path(copy).write_bytes(signature_path(made.root / "ranking.json").read_bytes())
    with pytest.raises(UserError, match="seal does not hold"):
        read_contest_ranking(copy)


def test_export_refused_before_close_unless_organiser(ranked: dict[str, Any], tmp_path: Path) -> None:
    made: Made = ranked["made"]
    with pytest.raises(UserError, match="results are hidden until close; export refused") as info:
        export_contest(made.root, tmp_path / "out.json")
    assert "\n" not in info.value.one_line() and not (tmp_path / "out.json").exists()
    organiser = json.loads(export_text(contest_state(made.root), "json", organiser=True))
    assert [r["rank"] for r in organiser["entries"]] == [1, 2, 2, 4] and organiser["state"] == "open"
    assert organiser["entries"][0]["entrant"] == "team-perfect"
    from typer.testing import CliRunner

    from mt_eval.cli import app

    public = CliRunner().invoke(app, ["contest", "export", str(made.root), "--format", "csv"])
    assert public.exit_code == 2 and len(public.output.strip().splitlines()) == 1 and "100.0" not in public.output
    inside = CliRunner().invoke(app, ["contest", "export", str(made.root), "--format", "csv", "--organiser"])
    assert inside.exit_code == 0 and inside.output.splitlines()[1].startswith("3,team-perfect,bundle,executed,1,1,")



def _copy(made: Made, tmp_path: Path) -> Made:
    """A copy of the ranked contest to attack (the module's contest stays as it is)."""
    import shutil

    return Made(Path(shutil.copytree(made.root, tmp_path / "copy")), made.key, made.recipient, made.manifest)


def test_one_full_card_claimed_by_two_entries_is_refused(ranked: dict[str, Any], tmp_path: Path) -> None:
    """An insider logs a second entry's execute pointing at the winner's full card: it would rank twice."""
    made = _copy(ranked["made"], tmp_path)
    winner = contest_state(made.root).entry(3)
    record(made.root, "contest.submit", entry=5, entrant="copycat", entry_kind="bundle", sha256="ee" * 32)
    record(made.root, "contest.qualify", entry=5, passed=True, score=50.0)
    record(made.root, "contest.approve", entry=5, custodian="c1")
    record(made.root, "contest.execute", entry=5, value=winner.value, ci=list(winner.ci or ()),
           composite=winner.composite, full_run_card_hash=winner.full_run_card_hash)
    with pytest.raises(UserError, match="entries 3 and 5 name the same full card"):
        rank_contest(made.root, made.key, ranked["key"])


def test_a_logged_value_that_is_not_the_cards_is_refused(ranked: dict[str, Any], tmp_path: Path) -> None:
    made = _copy(ranked["made"], tmp_path)
    loser = contest_state(made.root).entry(1)
    record(made.root, "contest.execute", entry=1, value=99.0, ci=[98.0, 100.0], composite=0.9,
           full_run_card_hash=loser.full_run_card_hash)  # entry 1 "executed" again, with a winner's number
    again = contest_state(made.root)
    assert again.entry(1).value == loser.value and "entry 1: contest.execute while executed" in again.problems[0]
    record(made.root, "contest.submit", entry=5, entrant="x", entry_kind="bundle", sha256="ee" * 32)
    record(made.root, "contest.qualify", entry=5, passed=True, score=50.0)
    record(made.root, "contest.approve", entry=5, custodian="c1")
    record(made.root, "contest.execute", entry=5, value=99.0, ci=[98.0, 100.0], composite=0.9,
           full_run_card_hash=loser.full_run_card_hash)  # the loser's card under a new entry and number
    with pytest.raises(UserError, match=r"entry 5: the log says 99\.0 but its full card 50\.4"):
        rank_contest(made.root, made.key, ranked["key"])


def test_close_refuses_a_ranking_file_the_log_did_not_record(ranked: dict[str, Any], tmp_path: Path) -> None:
    made = _copy(ranked["made"], tmp_path)
    record(made.root, "contest.rank", ranking_sha256="ab" * 32, metric="chrf_plus_plus",
           ranks=[{"entry": n, "rank": 1, "cluster": 1} for n in KINDS])  # everyone first, says the log
    with pytest.raises(UserError, match=r"not the ranking the log's last contest\.rank recorded"):
        close_contest(made.root, ranked["key"])


def test_close_freezes_and_export_has_ranks(ranked: dict[str, Any], tmp_path: Path) -> None:
    made: Made = ranked["made"]
    other, _, _ = new_key(tmp_path / "other.key", signer="someone")
    with pytest.raises(UserError, match="not this key; close refused"):
        close_contest(made.root, other)
    state = close_contest(made.root, ranked["key"])
    assert state.closed and contest_view(state).results_hidden is False
    with pytest.raises(UserError, match=r"was closed on .*; rank refused"):
        rank_contest(made.root, made.key, ranked["key"])
    with pytest.raises(UserError, match=r"was closed on .*; close refused"):
        close_contest(made.root, ranked["key"])
    out = export_contest(made.root, tmp_path / "results.json")
    exported = json.loads(out.read_text())
    assert [(r["entry"], r["rank"], r["cluster"]) for r in exported["entries"]] == [(3, 1, 1), (2, 2, 2), (4, 2, 2),
                                                                                    (1, 4, 3)]
    assert [r["entrant"] for r in exported["entries"]] == ["Entrant 3", "Entrant 2", "Entrant 4", "Entrant 1"]
    ranking = exported["ranking"]
    assert ranking["ranking_sha256"] == ranked["document"]["ranking_sha256"] and exported["results_complete"]
    check = Signature(ranking["key_id"], ranking["public_key"], ranking["signature"], None, "")
    assert check.check(CONTEXT + ranking["ranking_sha256"].encode()) is None  # verifiable from the export alone
    assert check.check(CONTEXT + ("0" * 64).encode()) is not None
    rows = list(csv.DictReader(io.StringIO(export_contest(made.root, tmp_path / "r.csv", "csv").read_text())))
    assert [r["rank"] for r in rows] == ["1", "2", "2", "4"] and rows[0]["signature"] == ranking["signature"]
    assert float(rows[0]["value"]) == pytest.approx(100.0)



def test_publish_after_close(ranked: dict[str, Any], tmp_path: Path) -> None:
    """After close (test_close_freezes_and_export_has_ranks, or here when run alone): the executed entries go to
    a store as public sovereign cards signed by the organiser's key, with no entry results."""
    from mt_eval.runcard.signing import read_public_key
    from mt_eval.store import open_store
    from mt_eval.store.keys import register_key

    made: Made = ranked["made"]
    if not contest_state(made.root).closed:  # run alone (-k): close it here
        close_contest(made.root, ranked["key"])
    db = str(tmp_path / "board.db")
    with open_store(db) as store:
        register_key(store, read_public_key(ranked["key"].with_suffix(".pub")), "organiser")
    results = publish_contest(made.root, db, ranked["key"], made.key)
    assert [r.status for r in results] == ["inserted"] * 4
    cards = [json.loads(p.read_text()) for p in sorted((made.root / "public").glob("entry-*.json"))]
    assert len(cards) == 4 and all(c["results"] == [] and c["sovereign"]["contest"] == "contest" for c in cards)
    assert contest_state(made.root).closed  # publishing is no change to a closed contest
    assert json.loads(export_text(contest_state(made.root)))["entries"][0]["rank"] == 1


def test_close_needs_every_approved_entry_run_and_a_ranking(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    submitted(made.root, ["a", "b"])
    for n in (1, 2):
        record(made.root, "contest.qualify", entry=n, passed=True, score=40.0)
        record(made.root, "contest.approve", entry=n, custodian="c1")
    key, _, _ = new_key(tmp_path / "organiser.key", signer="organiser")
    with pytest.raises(UserError, match="entries 1, 2 are approved but neither executed nor failed"):
        close_contest(made.root, key)
    record(made.root, "contest.fail", entry=1, reason="timeout")
    record(made.root, "contest.execute", entry=2, value=10.0, ci=[9.0, 11.0], composite=0.2,
           full_run_card_hash="ab" * 32)
    with pytest.raises(UserError, match="never ranked; close refused"):
        close_contest(made.root, key)


def test_closed_contest_refuses_every_change(tmp_path: Path) -> None:
    from mt_eval.contest.entries import approve_entry, submit_entry
    from mt_eval.contest.execution import execute_entry, qualify_entry

    made = make_contest(tmp_path)
    submitted(made.root, ["a"])
    record(made.root, "contest.qualify", entry=1, passed=True, score=40.0)
    record(made.root, "contest.approve", entry=1, custodian="c1")
    record(made.root, "contest.fail", entry=1, reason="timeout")
    key, _, _ = new_key(tmp_path / "organiser.key", signer="organiser")
    close_contest(made.root, key)  # nothing executed: no ranking needed
    attempts = {"submission": lambda: submit_entry(made.root, tmp_path, entrant="late", kind="bundle"),
                "qualifying": lambda: qualify_entry(made.root, 1),
                "approval": lambda: approve_entry(made.root, 1, custodian="c1"),
                "execution": lambda: execute_entry(made.root, 1, made.key),
                "rank": lambda: rank_contest(made.root, made.key, key)}
    for doing, attempt in attempts.items():
        with pytest.raises(UserError, match=f"was closed on .*; {doing} refused") as info:
            attempt()
        assert "\n" not in info.value.one_line()
    assert len(contest_state(made.root).entries) == 1

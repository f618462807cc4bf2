"""Contest entries (``contest/entries.py``, ``contest/execution.py``): submission, qualification on the public
dev split, custodian approval and execution on the sealed secret split, against the real parts: bubblewrap,
Apertium eng-spa, a real transformers tiny checkpoint, age vaults, the hash-chained log.

References: chrF++ of the executed entry is recomputed with sacrebleu (``CHRF(word_order=2)``) on the outputs
and references of its decrypted full card; the entry states are read back with C1's ``contest_state``.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
from pathlib import Path

import pytest

from mt_eval.contest.entries import ARTEFACT, SIGNATURE, SUBMISSION, approve_entry, entry_dir, submit_entry
from mt_eval.contest.execution import execute_entry, qualify_entry
from mt_eval.contest.manifest import GOVERNANCE, governance
from mt_eval.contest.state import APPROVED, EXECUTED, NOT_QUALIFIED, QUALIFIED, SUBMITTED, contest_state
from mt_eval.errors import UserError
from mt_eval.runcard.signing import new_key
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.submitters import add_submitter, sign_submission
from support.contest import apertium_bundle, hostile_bundle, make_contest, record, tiny_model
from support.sovereign import TINY


def _events(root: Path, kind: str) -> list[dict[str, object]]:
    return [e for e in governance(root).events() if e["kind"] == kind]


def test_a_bundle_is_checked_copied_signed_by_the_harness_and_logged(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    n = submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    assert n == 1
    folder = entry_dir(made.root, 1)
    bundle = load_bundle(folder / ARTEFACT)
    submission = json.loads((folder / SUBMISSION).read_text())
    assert submission["sha256"] == bundle.sha256 == load_bundle(apertium_bundle(tmp_path / "again")).sha256
    assert submission["signed_by"] == "contest-harness" and (folder / SIGNATURE).is_file()
    (ev,) = _events(made.root, "contest.submit")
    assert (ev["entry"], ev["entrant"], ev["entry_kind"], ev["sha256"]) == (1, "alice", "bundle", bundle.sha256)
    entry = contest_state(made.root).entry(1)
    assert (entry.state, entry.entrant, entry.kind) == (SUBMITTED, "alice", "bundle")
    key = made.root / GOVERNANCE / "entrant-keys" / "alice.key"
    assert key.stat().st_mode & 0o077 == 0  # the harness's key for alice is owner-only


def test_the_same_artefact_twice_from_one_entrant_is_refused(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    bundle = apertium_bundle(tmp_path)
    submit_entry(made.root, bundle, entrant="alice", kind="bundle")
    with pytest.raises(UserError, match=r"already submitted this artefact .* as entry 1"):
        submit_entry(made.root, bundle, entrant="alice", kind="bundle")
    assert not entry_dir(made.root, 2).exists()  # a refusal leaves no entry folder
    with pytest.raises(UserError, match=r"is already entry 1 of contest 'contest'; a method is entered once"):
        submit_entry(made.root, bundle, entrant="bob", kind="bundle")  # another entrant's copy: refused too


def test_the_policy_budget_counts_submissions_per_entrant(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    governance(made.root).set_policy(submissions=1)
    bundle = apertium_bundle(tmp_path)
    submit_entry(made.root, bundle, entrant="alice", kind="bundle")
    (bundle / "README.md").write_text("# changed: a new sha256\n")
    with pytest.raises(UserError, match=r"'alice' has made 1 submissions .*at most 1"):
        submit_entry(made.root, bundle, entrant="alice", kind="bundle")


def test_submission_after_close_is_refused(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    record(made.root, "contest.close", ranking_sha256="0" * 64)
    with pytest.raises(UserError, match=r"was closed on .* submission refused"):
        submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")


def test_a_signed_submission_is_verified_and_must_be_the_entrants(tmp_path: Path) -> None:
    made = make_contest(tmp_path, require_signatures=True)
    bundle = apertium_bundle(tmp_path)
    with pytest.raises(UserError, match="requires a signed submission"):
        submit_entry(made.root, bundle, entrant="carol", kind="bundle")
    key, _, public = new_key(tmp_path / "carol.key", "carol")
    add_submitter(governance(made.root), "carol", public)
    sig, _ = sign_submission(load_bundle(bundle), bundle, key, tmp_path / "carol.sig")
    with pytest.raises(UserError, match="submitter 'carol''s, not entrant 'mallory''s"):
        submit_entry(made.root, bundle, entrant="mallory", kind="bundle", signature=sig)
    assert submit_entry(made.root, bundle, entrant="carol", kind="bundle", signature=sig) == 1
    (bundle / "README.md").write_text("# changed after signing\n")
    with pytest.raises(UserError, match="the signature is for bundle"):
        submit_entry(made.root, bundle, entrant="carol", kind="bundle", signature=sig)


def _model(root: Path) -> Path:
    """A checker-valid weights-only folder (not loadable: enough for submit)."""
    root.mkdir()
    (root / "config.json").write_text(json.dumps({"model_type": "m2m_100"}))
    blob = json.dumps({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    (root / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * 4)
    return root


def test_a_signed_model_is_verified_like_a_bundle(tmp_path: Path) -> None:
    from mt_eval.contest.entries import sign_model

    made = make_contest(tmp_path, require_signatures=True)
    model = _model(tmp_path / "m")
    with pytest.raises(UserError, match="requires a signed submission"):
        submit_entry(made.root, model, entrant="dana", kind="model")
    key, _, public = new_key(tmp_path / "dana.key", "dana")
    sig = sign_model(model, key)
    with pytest.raises(UserError, match="not an active registered submitter key"):
        submit_entry(made.root, model, entrant="dana", kind="model", signature=sig)
    add_submitter(governance(made.root), "dana", public)
    assert submit_entry(made.root, model, entrant="dana", kind="model", signature=sig) == 1
    assert (entry_dir(made.root, 1) / SIGNATURE).read_bytes() == sig.read_bytes()
    (model / "vocab.json").write_text("{}")  # a new file: a new sha256, the old signature no longer fits
    with pytest.raises(UserError, match=r"the signature is for .*, not this artefact"):
        submit_entry(made.root, model, entrant="dana", kind="model", signature=sig)


def test_a_model_with_code_or_a_pickle_is_refused_at_submit_and_leaves_nothing(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "m2m_100", "auto_map": {"AutoModel": "x.Y"}}))
    (model / "x.py").write_text("import os; os.system('id')\n")
    (model / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    blob = json.dumps({"w": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}).encode()
    (model / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0")
    with pytest.raises(UserError, match="not a file a weights-only model bundle may hold"):
        submit_entry(made.root, model, entrant="eve", kind="model")
    assert contest_state(made.root).entries == ()
    assert [p.name for p in (made.root / "entries").iterdir()] == []


def test_an_archived_bundle_is_unpacked_under_the_contest_and_a_dotdot_member_refused(tmp_path: Path) -> None:
    import io
    import tarfile

    made = make_contest(tmp_path)
    folder = apertium_bundle(tmp_path)
    packed = tmp_path / "apertium.tar.gz"
    with tarfile.open(packed, "w:gz") as tf:
        tf.add(folder, arcname="apertium")
    submit_entry(made.root, packed, entrant="alice", kind="bundle")
    assert contest_state(made.root).entry(1).sha256 == load_bundle(folder).sha256
    evil = tmp_path / "evil.tar.gz"
    with tarfile.open(evil, "w:gz") as tf:
        tf.add(folder, arcname="apertium")
        info = tarfile.TarInfo("../../escaped.py")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"#\n"))
    with pytest.raises(UserError, match=re.escape("archive member '../../escaped.py' points outside the bundle")):
        submit_entry(made.root, evil, entrant="bob", kind="bundle")
    assert not (made.root / "escaped.py").exists() and not (made.root / "entries" / "escaped.py").exists()
    assert sorted(p.name for p in (made.root / "entries").iterdir()) == ["1"]  # no scratch folder left


def test_after_the_deadline_or_outside_a_team_submission_is_refused(tmp_path: Path) -> None:
    late = make_contest(tmp_path, name="late", deadline="2020-01-31")
    with pytest.raises(UserError, match="took entries until 2020-01-31"):
        submit_entry(late.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    team = make_contest(tmp_path, name="team", visibility="team", members=["alice"])
    with pytest.raises(UserError, match="'bob' is not a member of team contest 'team'"):
        submit_entry(team.root, apertium_bundle(tmp_path / "b"), entrant="bob", kind="bundle")
    assert submit_entry(team.root, apertium_bundle(tmp_path / "a"), entrant="alice", kind="bundle") == 1


def test_a_withdrawn_consent_stops_a_model_qualifying_before_it_loads(tmp_path: Path) -> None:
    from mt_eval.sovereign.consent import revoke_consent
    from support.contest import DATASET

    made = make_contest(tmp_path)
    model = _model(tmp_path / "m")
    submit_entry(made.root, model, entrant="m", kind="model")
    revoke_consent(governance(made.root), DATASET, "es", "the community withdrew")
    with pytest.raises(UserError, match="consent \\(es\\) was revoked"):
        qualify_entry(made.root, 1)
    assert contest_state(made.root).entry(1).state == SUBMITTED


def test_a_model_run_is_killed_at_the_policys_wall_clock(tmp_path: Path) -> None:
    """The model translates in a child process under the sandbox policy's per-run wall clock: at 1 s (less than
    the child needs to import transformers) it is killed and the entry is not qualified (timeout)."""
    from dataclasses import replace

    made = make_contest(tmp_path)
    model = _model(tmp_path / "m")
    submit_entry(made.root, model, entrant="m", kind="model")
    result = qualify_entry(made.root, 1, policy=replace(TINY, wall_seconds_per_run=1))
    assert (result["passed"], result["score"], result["status"]) == (False, None, "timeout")


def test_approval_and_execution_need_the_earlier_states(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    with pytest.raises(UserError, match="entry 1 is submitted: only a qualified entry is approved"):
        approve_entry(made.root, 1, custodian="custodian")
    with pytest.raises(UserError, match="entry 1 is submitted; execution needs a approved entry"):
        execute_entry(made.root, 1, made.key)


def test_an_artefact_changed_after_submission_is_refused(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    (entry_dir(made.root, 1) / ARTEFACT / "translate.py").write_text("print('swapped')\n")
    with pytest.raises(UserError, match="entry 1's artefact is not the one submitted"):
        qualify_entry(made.root, 1, policy=TINY)


def test_cli_submit_and_the_refusals_are_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mt_eval.cli import app

    runner = CliRunner()
    made = make_contest(tmp_path)
    bundle = str(apertium_bundle(tmp_path))
    done = runner.invoke(app, ["contest", "submit", str(made.root), bundle, "--entrant", "alice"])
    assert done.exit_code == 0 and "entry 1 submitted by alice" in done.output, done.output
    again = runner.invoke(app, ["contest", "submit", str(made.root), bundle, "--entrant", "alice"])
    assert again.exit_code == 2 and "already submitted this artefact" in again.output
    assert len(again.output.strip().splitlines()) == 1
    kind = runner.invoke(app, ["contest", "submit", str(made.root), bundle, "--entrant", "bob", "--kind", "exe"])
    assert kind.exit_code == 2 and "--kind 'exe': bundle or model" in kind.output
    early = runner.invoke(app, ["contest", "approve", str(made.root), "1", "--custodian", "custodian"])
    assert early.exit_code == 2 and "only a qualified entry is approved" in early.output
    both = runner.invoke(app, ["contest", "execute", str(made.root), "1"])
    assert both.exit_code == 2 and "give either --identity FILE" in both.output
    key, _, _ = new_key(tmp_path / "dana.key", "dana")
    signed = runner.invoke(app, ["contest", "sign-model", str(_model(tmp_path / "m")), "--key", str(key)])
    assert signed.exit_code == 0 and (tmp_path / "m.sig").is_file(), signed.output
    code = runner.invoke(app, ["contest", "sign-model", bundle, "--key", str(key)])  # a bundle is not a model
    assert code.exit_code == 2 and "folders are not allowed in a model bundle" in code.output


# ---------------------------------------------------------------- the three artefacts, end to end (slow)


def _chrf_pp(card: dict[str, object]) -> float:
    import sacrebleu

    results = card["results"]
    assert isinstance(results, list)
    hyps = [r.get("predicted") or "" for r in results]
    return float(sacrebleu.CHRF(word_order=2).corpus_score(hyps, [[r["reference"] for r in results]]).score)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("apertium") is None,
                    reason="needs bubblewrap and Apertium eng-spa")
def test_an_apertium_bundle_qualifies_is_approved_and_executed_on_the_secret_split(tmp_path: Path) -> None:
    from mt_eval.sovereign.public_card import load_full_card

    made = make_contest(tmp_path, threshold=20.0)
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    result = qualify_entry(made.root, 1, policy=TINY)
    dev_card = json.loads((entry_dir(made.root, 1) / "qualify.card.json").read_text())
    assert result["passed"] is True and result["score"] == pytest.approx(_chrf_pp(dev_card), abs=0.01)
    assert contest_state(made.root).entry(1).state == QUALIFIED
    approve_entry(made.root, 1, custodian="custodian")
    assert contest_state(made.root).entry(1).state == APPROVED
    done = execute_entry(made.root, 1, made.key, policy=TINY)
    entry = contest_state(made.root).entry(1)
    assert entry.state == EXECUTED and entry.full_run_card_hash == done["full_run_card_hash"]
    full = load_full_card(made.root / GOVERNANCE, str(done["full_run_card_hash"]), made.key)
    assert len(full["results"]) == 20 and full["condition"] == "sovereign:gold_standard"
    assert entry.value == pytest.approx(_chrf_pp(full), abs=0.01)  # sacrebleu on the same outputs
    assert entry.ci is not None and entry.value is not None and entry.ci[0] <= entry.value <= entry.ci[1]
    texts = json.dumps(_events(made.root, "contest.execute"))
    assert not any(str(r["source"])[:40] in texts for r in full["results"])  # aggregate scores only in the log


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_hostile_bundle_is_contained_at_qualify_and_never_scored(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    submit_entry(made.root, hostile_bundle(tmp_path, made.root, made.key), entrant="mallory", kind="bundle")
    result = qualify_entry(made.root, 1, policy=TINY)
    assert result["passed"] is False and result["score"] is None and result["status"] == "protocol_error"
    assert contest_state(made.root).entry(1).state == NOT_QUALIFIED
    assert not (made.root / "pwned").exists() and not Path("/usr/pwned").exists()
    assert not (entry_dir(made.root, 1) / "qualify.card.json").exists()
    with pytest.raises(UserError, match="only a qualified entry is approved"):
        approve_entry(made.root, 1, custodian="custodian")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_hostile_bundle_that_answers_obtains_nothing_and_scores_badly(tmp_path: Path) -> None:
    """The same attempts with short replies: every entry is answered (so the dev card shows each reply), every
    read of the vault and the identity and every write was blocked, and nonsense scores below the bar."""
    made = make_contest(tmp_path)
    submit_entry(made.root, hostile_bundle(tmp_path, made.root, made.key, pad=0), entrant="mallory", kind="bundle")
    result = qualify_entry(made.root, 1, policy=TINY)
    card = json.loads((entry_dir(made.root, 1) / "qualify.card.json").read_text())
    replies = [str(r["predicted"]) for r in card["results"]]
    assert len(replies) == 12 and all(r.count("BLOCKED:") == 7 for r in replies), replies[0]
    assert not any("READ:" in r or "WROTE" in r for r in replies)
    assert result["passed"] is False and result["score"] is not None and result["score"] < 20.0
    assert result["score"] == pytest.approx(_chrf_pp(card), abs=0.01)


@pytest.mark.slow
def test_a_model_that_passes_the_checker_but_does_not_load_is_not_qualified(tmp_path: Path) -> None:
    """Valid files, no usable tokenizer: the load fails in transformers (its own classes, no submitted code),
    and the entry is recorded as not qualified (load_failed), not left submitted for ever."""
    made = make_contest(tmp_path)
    model = _model(tmp_path / "hollow")
    submit_entry(made.root, model, entrant="hollow", kind="model")
    result = qualify_entry(made.root, 1)
    assert (result["passed"], result["score"], result["status"]) == (False, None, "load_failed")
    assert contest_state(made.root).entry(1).state == NOT_QUALIFIED


@pytest.mark.slow
def test_a_weights_only_tiny_model_scores_badly_then_runs_when_the_bar_is_low(tmp_path: Path) -> None:
    """Random weights translate nonsense: its dev chrF++ is far below the 20 most contests would set; at a bar
    of 0 it qualifies and runs on the secret split (in its timed child process), its full card kept encrypted
    like a bundle's."""
    from mt_eval.sovereign.public_card import load_full_card

    lenient = make_contest(tmp_path, name="lenient", threshold=0.0)
    submit_entry(lenient.root, tiny_model(tmp_path), entrant="tiny", kind="model")
    qualified = qualify_entry(lenient.root, 1)
    assert qualified["passed"] is True and qualified["score"] is not None and qualified["score"] < 20.0
    dev_card = json.loads((entry_dir(lenient.root, 1) / "qualify.card.json").read_text())
    assert qualified["score"] == pytest.approx(_chrf_pp(dev_card), abs=0.01)
    approve_entry(lenient.root, 1, custodian="custodian")
    done = execute_entry(lenient.root, 1, lenient.key)
    full = load_full_card(lenient.root / GOVERNANCE, str(done["full_run_card_hash"]), lenient.key)
    assert full["method"]["config"]["weights_sha256"] and full["condition"] == "sovereign:gold_standard"
    assert done["value"] == pytest.approx(_chrf_pp(full), abs=0.01)
    assert contest_state(lenient.root).entry(1).state == EXECUTED


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("apertium") is None,
                    reason="needs bubblewrap and Apertium eng-spa")
def test_a_quorum_vault_needs_its_threshold_of_share_approvals_and_opens_with_shares(tmp_path: Path) -> None:
    from mt_eval.sovereign.custody import keygen, read_share

    record_ = keygen(tmp_path / "shares", 3, 2)
    made = make_contest(tmp_path, recipients=[record_.recipient], custody=record_.as_json())
    shares = [tmp_path / "shares" / f"custodian-{i}.share" for i in (1, 2, 3)]
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="alice", kind="bundle")
    assert qualify_entry(made.root, 1, policy=TINY)["passed"] is True
    with pytest.raises(UserError, match="held by a quorum of 2: approve with your custody share"):
        approve_entry(made.root, 1, custodian="someone")
    approve_entry(made.root, 1, share=shares[0])
    with pytest.raises(UserError, match="custodian 1 already approved entry 1"):
        approve_entry(made.root, 1, share=shares[0])
    assert contest_state(made.root).entry(1).state == QUALIFIED  # one of two
    with pytest.raises(UserError, match="execution needs a approved entry"):
        execute_entry(made.root, 1, [read_share(s) for s in shares[:2]], policy=TINY)
    approve_entry(made.root, 1, share=shares[2])
    assert contest_state(made.root).entry(1).approvals == ("1", "3")
    with pytest.raises(UserError, match="need 2 shares, got 1"):
        execute_entry(made.root, 1, [read_share(shares[1])], policy=TINY)
    done = execute_entry(made.root, 1, [read_share(s) for s in shares[1:]], policy=TINY)
    assert contest_state(made.root).entry(1).state == EXECUTED and done["value"] > 20.0


@pytest.mark.slow
def test_a_models_run_on_a_quorum_vault_records_whose_approvals_opened_it(tmp_path: Path) -> None:
    """A bundle's gold run logs its custody on the runner's run event; a model runs in-process, so the contest's
    own execute event names the split and the custodians whose approvals opened the vault."""
    from mt_eval.sovereign.custody import keygen, read_share

    record_ = keygen(tmp_path / "shares", 3, 2)
    made = make_contest(tmp_path, recipients=[record_.recipient], custody=record_.as_json(), threshold=0.0)
    shares = [tmp_path / "shares" / f"custodian-{i}.share" for i in (1, 2, 3)]
    submit_entry(made.root, tiny_model(tmp_path), entrant="tiny", kind="model")
    assert qualify_entry(made.root, 1)["passed"] is True
    approve_entry(made.root, 1, share=shares[0])
    approve_entry(made.root, 1, share=shares[2])
    execute_entry(made.root, 1, [read_share(s) for s in shares[1:]])
    executed = [e for e in governance(made.root).events() if e["kind"] == "contest.execute"]
    assert [e["custody"] for e in executed] == [{"split": record_.split, "approved_by": [1, 3]}]

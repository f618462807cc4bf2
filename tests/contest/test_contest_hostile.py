"""Red-team tests of the contest pipeline (issue 25): an entrant who wants to win unfairly or to reach the
custodians' machine, and someone who can append to the contest's log. Each test is one attack, against the real
parts (the hash-chained log, bubblewrap staging, transformers' own tokenizer loader); the ones that succeeded at
first were fixed in the module concerned (commit messages say "failing-first").
"""

from __future__ import annotations

import json
import shutil
import struct
import threading
from pathlib import Path

import pytest

from mt_eval.contest.entries import ARTEFACT, approve_entry, checked_entry, entry_dir, submit_entry
from mt_eval.contest.lifecycle import export_document
from mt_eval.contest.manifest import DEV, governance, split_ids
from mt_eval.contest.model_bundle import check_folder
from mt_eval.contest.state import APPROVED, EXECUTED, QUALIFIED, contest_state, contest_view
from mt_eval.corpus.loaders import load_corpus
from mt_eval.errors import UserError
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.submitters import submitters
from support.contest import CORPUS, apertium_bundle, make_contest, record, submitted, tiny_model


def _variants(tmp: Path, n: int) -> list[Path]:
    """``n`` copies of the Apertium bundle, each with its own sha256 (a README line differs)."""
    out = []
    for i in range(n):
        bundle = apertium_bundle(tmp / f"v{i}")
        (bundle / "README.md").write_text(f"# variant {i}\n", encoding="utf-8")
        out.append(bundle)
    return out


def test_concurrent_submissions_cannot_exceed_the_entrants_budget(tmp_path: Path) -> None:
    """Attack: fire several submissions at once (the web form and the CLI together) so that each reads the
    log before any has recorded its own; the budget must still count every one."""
    made = make_contest(tmp_path)
    governance(made.root).set_policy(submissions=1)
    bundles = _variants(tmp_path, 4)
    start = threading.Barrier(len(bundles))
    outcomes: list[object] = []

    def go(bundle: Path) -> None:
        start.wait()
        try:
            outcomes.append(submit_entry(made.root, bundle, entrant="mallory", kind="bundle"))
        except UserError as refused:
            outcomes.append(refused)

    threads = [threading.Thread(target=go, args=(b,)) for b in bundles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    accepted = [o for o in outcomes if isinstance(o, int)]
    assert len(accepted) == 1, outcomes
    assert all("at most 1" in str(o) for o in outcomes if not isinstance(o, int))
    assert [e.entrant for e in contest_state(made.root).entries] == ["mallory"]
    registered = [s for s in submitters(governance(made.root)).values() if s.name == "mallory"]
    assert len(registered) == 1  # one harness key for mallory, registered once


def test_the_same_artefact_under_another_entrants_name_is_refused(tmp_path: Path) -> None:
    """Attack: a second account enters a copy of an entry. Two identical entries tie, and competition numbering
    then puts every entry below them one rank further down (1, 1, 3 instead of 1, 2)."""
    made = make_contest(tmp_path)
    bundle = apertium_bundle(tmp_path)
    assert submit_entry(made.root, bundle, entrant="alice", kind="bundle") == 1
    with pytest.raises(UserError, match=r"is already entry 1 of contest 'contest'; a method is entered once"):
        submit_entry(made.root, bundle, entrant="mallory", kind="bundle")
    assert [e.entrant for e in contest_state(made.root).entries] == ["alice"]
    assert not entry_dir(made.root, 2).exists()


def test_an_artefact_is_checked_outside_the_submission_lock(tmp_path: Path) -> None:
    """Attack on the lock itself: uploads that are slow to unpack and check (or refused only at the end) must not
    hold every other entrant's submission. With the contest's lock held elsewhere, a refused model is still
    checked and refused; only recording waits for the lock."""
    import fcntl

    from mt_eval.contest.entries import SUBMIT_LOCK

    made = make_contest(tmp_path)
    model = _checkpoint(tmp_path / "pickled")
    (model / "pytorch_model.bin").write_bytes(b"\x80\x04pickle")
    outcome: list[object] = []
    with open(made.root / "governance" / SUBMIT_LOCK, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        worker = threading.Thread(target=lambda: outcome.append(_attempt(made.root, model)))
        worker.start()
        worker.join(60)
        finished_while_held = not worker.is_alive()
    worker.join()
    assert finished_while_held and "not a file a weights-only model bundle may hold" in str(outcome[0])


def _attempt(root: Path, artefact: Path) -> object:
    try:
        return submit_entry(root, artefact, entrant="mallory", kind="model")
    except UserError as refused:
        return refused


def test_an_execute_event_replayed_from_another_contest_does_not_count(tmp_path: Path) -> None:
    """Attack: copy a good ``contest.execute`` event (a high value, its card hash) from another contest's log
    into this one for an approved entry; the event names the other contest, so it must change nothing."""
    made = make_contest(tmp_path)
    submitted(made.root, ["mallory"])
    record(made.root, "contest.qualify", contest="contest", entry=1, passed=True, score=30.0, reason="")
    record(made.root, "contest.approve", contest="contest", entry=1, custodian="custodian-1")
    record(made.root, "contest.execute", contest="other-contest", entry=1, value=99.9, ci=[99.0, 99.9],
           composite=0.99, full_run_card_hash="cd" * 32)
    state = contest_state(made.root)
    assert state.entry(1).state == APPROVED and state.entry(1).value is None
    assert any("other-contest" in p for p in state.problems), state.problems


def test_whether_a_secret_run_failed_is_hidden_until_close(tmp_path: Path) -> None:
    """Attack: a bundle that crashes on every secret entry exactly when the secret split holds some text (say,
    a source starting with "A") reads one bit of the sealed split per run from its entry's public state. While
    results are hidden, a failed run and an executed one look the same; the organiser sees which; close tells."""
    made = make_contest(tmp_path)
    submitted(made.root, ["mallory", "mallory2"])
    for n in (1, 2):
        record(made.root, "contest.qualify", entry=n, passed=True, score=30.0, reason="")
        record(made.root, "contest.approve", entry=n, custodian="custodian-1")
    record(made.root, "contest.execute", entry=1, value=40.0, ci=[39.0, 41.0], composite=0.5,
           full_run_card_hash="cd" * 32)
    record(made.root, "contest.fail", entry=2, reason="no entry of the secret split was translated (crashed)")
    public = contest_view(contest_state(made.root)).as_json()
    assert [e["state"] for e in public["entries"]] == ["executed", "executed"]
    assert "crashed" not in json.dumps(public) and "fail" not in json.dumps(public)
    assert [e.state for e in contest_view(contest_state(made.root), organiser=True).entries] == ["executed", "failed"]
    record(made.root, "contest.close", ranking_sha256=None)
    assert [e.state for e in contest_view(contest_state(made.root)).entries] == ["executed", "failed"]


def test_a_forged_rank_event_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    """Attack: append a ``contest.rank`` whose ranks are not ``{entry, rank, cluster}`` numbers: every page and
    command reads the log, so a malformed event must be listed as a problem, never raise."""
    made = make_contest(tmp_path)
    submitted(made.root, ["alice"])
    record(made.root, "contest.rank", ranking_sha256="ab" * 32, metric="chrf_plus_plus",
           ranks=[{"entry": "one", "rank": None}])
    state = contest_state(made.root)
    assert state.ranking is None and state.entry(1).rank is None
    assert any("contest.rank" in p for p in state.problems), state.problems


def test_an_entrant_cannot_approve_their_own_entry(tmp_path: Path) -> None:
    """Attack: a custodian who also entered approves their own entry's run on the secret split."""
    made = make_contest(tmp_path)
    submitted(made.root, ["carol"])
    record(made.root, "contest.qualify", entry=1, passed=True, score=30.0, reason="")
    with pytest.raises(UserError, match="custodian carol entered entry 1: nobody approves their own entry"):
        approve_entry(made.root, 1, custodian="carol")
    assert contest_state(made.root).entry(1).state == QUALIFIED
    approve_entry(made.root, 1, custodian="dave")
    assert contest_state(made.root).entry(1).state == APPROVED


def test_a_pycache_added_after_qualify_never_runs(tmp_path: Path) -> None:
    """Attack: drop an unchecked-hash ``__pycache__/*.pyc`` into the qualified artefact (the bundle hash leaves
    ``__pycache__`` out). The re-check passes, so what must hold is that the run's staged copy leaves it out."""
    from mt_eval.sovereign.sandbox import stage

    made = make_contest(tmp_path)
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="mallory", kind="bundle")
    folder = entry_dir(made.root, 1) / ARTEFACT
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "translate.cpython-311.pyc").write_bytes(b"\x00" * 64)
    entry = contest_state(made.root).entry(1)
    staged = stage(load_bundle(checked_entry(made.root, entry)), tmp_path / "work")
    assert not list(staged.bundle.rglob("__pycache__")) and (staged.bundle / "method.toml").is_file()


def _checkpoint(root: Path, **tokenizer_config: str) -> Path:
    """A minimal well-formed weights-only folder (enough for the checker, not for loading) whose
    tokenizer_config.json holds ``tokenizer_config``; the safetensors file is written byte by byte."""
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"model_type": "m2m_100"}), encoding="utf-8")
    (root / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "NllbTokenizerFast", "eos_token": "</s>",
                                                            **tokenizer_config}), encoding="utf-8")
    header = json.dumps({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode()
    (root / "model.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 8)
    return root


FILE_ARGUMENTS = ["tokenizer_file", "vocab_file", "merges_file", "source_spm", "target_vocab_file", "vocab"]


@pytest.mark.parametrize("key", FILE_ARGUMENTS)
def test_a_tokenizer_file_named_in_tokenizer_config_is_refused(tmp_path: Path, key: str) -> None:
    """Attack: ``tokenizer_config.json`` names a tokenizer file (any path: transformers opens it relative to the
    harness's working folder, not the bundle). transformers takes a file argument from tokenizer_config.json
    over the folder's own file (``test_..._outside_the_checked_folder_is_read_by_transformers``), so the
    tokenizer used would be one the sha256 never covered: qualify with one, swap it, execute with another."""
    assert check_folder(_checkpoint(tmp_path / "plain"))[1] == []  # the same folder without the key passes
    found, problems = check_folder(_checkpoint(tmp_path / "bad", **{key: "/srv/elsewhere/tokenizer.json"}))
    assert found is None and problems[0].file == "tokenizer_config.json" and repr(key) in str(problems[0])
    assert check_folder(_checkpoint(tmp_path / "rel", **{key: "tokenizer.json"}))[0] is None  # even a bare name


@pytest.mark.slow
def test_a_tokenizer_outside_the_checked_folder_is_read_by_transformers(tmp_path: Path) -> None:
    """The attack above is real (seen before the fix): the tiny checkpoint with ``tokenizer_file`` pointing at a
    broken file outside its folder fails to load in transformers, although the folder's own tokenizer.json is
    fine; the checker refuses the folder."""
    from transformers import AutoTokenizer

    model = tiny_model(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "tokenizer.json").write_text("{broken", encoding="utf-8")
    config = json.loads((model / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert check_folder(model)[1] == []
    config["tokenizer_file"] = str(outside / "tokenizer.json")
    (model / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    with pytest.raises(Exception, match="key must be a string"):
        AutoTokenizer.from_pretrained(str(model))
    assert check_folder(model)[0] is None


def test_the_seed_is_in_no_public_view_or_export(tmp_path: Path) -> None:
    """The seed is the organiser's (decisions: contest seed): with the public dev ids, a published seed pins the
    secret ids exactly. The public view (what the web and ``contest show`` serve) and the export after close
    carry neither the seed nor a secret id list; the dev split holds no secret entry."""
    seed = 918_273_645_501
    made = make_contest(tmp_path, seed=seed)
    submitted(made.root, ["alice"])
    record(made.root, "contest.close", ranking_sha256=None)
    state = contest_state(made.root)
    public = json.dumps(contest_view(state).as_json()) + json.dumps(export_document(state))
    assert str(seed) not in public and "seed" not in public
    ids = [e.id for e in load_corpus(CORPUS).entries]
    dev, secret = split_ids(ids, seed, made.manifest.dev_size, made.manifest.secret_size)
    assert sorted(e.id for e in load_corpus(made.root / DEV).entries) == sorted(dev)
    assert not set(secret) & {e.id for e in load_corpus(made.root / DEV).entries}


def test_a_swapped_model_weight_after_qualify_is_refused(tmp_path: Path) -> None:
    """Attack: qualify a model, then swap its weights file for another of the same size in the entry folder."""
    from mt_eval.contest.execution import execute_entry

    made = make_contest(tmp_path)
    submit_entry(made.root, _checkpoint(tmp_path / "model"), entrant="mallory", kind="model")
    record(made.root, "contest.qualify", entry=1, passed=True, score=30.0, reason="")
    approve_entry(made.root, 1, custodian="custodian-1")
    weights = entry_dir(made.root, 1) / ARTEFACT / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-1] ^= 0x7F  # one weight byte: the header still parses, the size is the same
    weights.write_bytes(bytes(data))
    with pytest.raises(UserError, match="entry 1's artefact is not the one submitted"):
        execute_entry(made.root, 1, made.key)  # the run itself refuses, before the vault is opened
    shutil.rmtree(entry_dir(made.root, 1) / ARTEFACT)
    with pytest.raises(UserError, match="not the one submitted"):
        checked_entry(made.root, contest_state(made.root).entry(1))
    assert contest_state(made.root).entry(1).state != EXECUTED


def test_a_config_with_more_layers_than_a_model_has_is_refused(tmp_path: Path) -> None:
    """Attack: ``encoder_layers = 3000`` on a tiny model: each layer is built as Python objects before a weight
    loads (the tiny checkpoint: +600 MB RSS and 30 s on the meta device alone, measured); refused by the checker."""
    model = _checkpoint(tmp_path / "deep")
    (model / "config.json").write_text(json.dumps({"model_type": "m2m_100", "encoder_layers": 3000}), encoding="utf-8")
    found, problems = check_folder(model)
    assert found is None and "encoder_layers = 3000 (at most 128 layers" in str(problems[0])
    (model / "config.json").write_text(json.dumps({"model_type": "t5", "num_layers": 24, "num_decoder_layers": None}),
                                       encoding="utf-8")
    assert check_folder(model)[1] == []


@pytest.mark.slow
def test_a_config_that_declares_a_huge_position_table_is_refused_before_loading(tmp_path: Path) -> None:
    """Attack (seen first: the checker passed it and loading took 33 MB to 1.4 GB RSS): the tiny checkpoint with
    ``max_position_embeddings = 2**22``, a table transformers builds itself, outside the weights and the sandbox's
    memory limit. Refused from the meta-device size before anything is allocated; the same checkpoint with
    its own 128 positions loads."""
    import resource

    from mt_eval.contest.model_bundle import load_model_bundle

    model = tiny_model(tmp_path)
    assert load_model_bundle(model, "eng", "spa") is not None
    config = json.loads((model / "config.json").read_text(encoding="utf-8"))
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 1 << 22}), encoding="utf-8")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(UserError, match=r"describes a model of \d+ values; its weights hold \d+"):
        load_model_bundle(model, "eng", "spa")
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200 << 10  # KiB: nothing near 1 GB


@pytest.mark.slow
def test_a_tokenizer_that_explodes_in_memory_ends_only_its_own_run(tmp_path: Path) -> None:
    """Attack (seen first: 1.6 GB asked for a 5-character input at 27 steps, and nothing bounded a model's
    memory): a tokenizer.json normalizer doubling every "a" 26 times. Qualifying crashes the model's own child at
    its memory limit (4 GiB + 4 x the contest's 1 MiB artefact limit), never scored. The test process caps its
    children at 7 GiB meanwhile, so without the child's own limit the assertion on its peak fails instead of the
    machine running out."""
    import resource

    from mt_eval.contest.execution import qualify_entry
    from mt_eval.contest.model_run import memory_limit
    from support.sovereign import TINY

    made = make_contest(tmp_path, max_artefact_mb=1)
    model = tiny_model(tmp_path)
    tokenizer = json.loads((model / "tokenizer.json").read_text(encoding="utf-8"))
    double = {"type": "Replace", "pattern": {"String": "a"}, "content": "aa"}
    tokenizer["normalizer"] = {"type": "Sequence", "normalizers": [double] * 26}
    (model / "tokenizer.json").write_text(json.dumps(tokenizer), encoding="utf-8")
    submit_entry(made.root, model, entrant="mallory", kind="model")
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (7 << 30, hard))
    try:
        result = qualify_entry(made.root, 1, policy=TINY)
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    assert (result["passed"], result["score"], result["status"]) == (False, None, "crashed")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss << 10  # bytes
    assert peak < memory_limit(1 << 20) + (1 << 30), peak  # the limit plus the libraries' shared pages


def test_a_log_cut_back_to_before_a_failure_is_refused(tmp_path: Path) -> None:
    """Attack: delete the log's last line (a ``contest.fail``) so the entry reads approved again and runs once
    more; the log's head file still names the removed line, so every reader refuses the contest."""
    made = make_contest(tmp_path)
    submitted(made.root, ["mallory"])
    record(made.root, "contest.qualify", entry=1, passed=True, score=30.0, reason="")
    record(made.root, "contest.approve", entry=1, custodian="custodian-1")
    record(made.root, "contest.fail", entry=1, reason="timeout")
    log = made.root / "governance" / "audit.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-1]))
    with pytest.raises(UserError, match="lines were removed from or added to the end"):
        contest_state(made.root)
    with pytest.raises(UserError, match="lines were removed from or added to the end"):
        submit_entry(made.root, apertium_bundle(tmp_path), entrant="mallory", kind="bundle")


def test_a_dev_split_edited_after_creation_is_refused_at_qualify(tmp_path: Path) -> None:
    """Attack: rewrite dev.json's references as one entry's outputs (or drop the hard entries) so that entry
    qualifies; the manifest pins the dev split's sha256, so qualifying refuses before anything runs."""
    made = make_contest(tmp_path)
    submit_entry(made.root, apertium_bundle(tmp_path), entrant="mallory", kind="bundle")
    dev = made.root / DEV
    data = json.loads(dev.read_text(encoding="utf-8"))
    for entry in data["entries"]:
        entry["reference"] = entry["source"]
    dev.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    from mt_eval.contest.execution import qualify_entry

    with pytest.raises(UserError, match=r"dev\.json is not the dev split the contest was created with"):
        qualify_entry(made.root, 1)
    assert contest_state(made.root).entry(1).state == "submitted"
    assert not (entry_dir(made.root, 1) / "qualify.json").exists()

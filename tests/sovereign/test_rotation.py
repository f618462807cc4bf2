"""§9.3.2 entry rotation between a vault's segments (issue 25 item 2), against the real vault (pyrage).

The vault is the sovereign corpus (200 NTREX-128 eng→spa entries: ids 1-50 gold_standard, 51-70 held_out,
the rest public) sealed to a custodian; each test rotates a copy. Checked: counts per segment after a
rotation, the re-sealed secret half opens with the custodian's key, a moved entry is gone from the secret
half once published (read with pyrage directly, not through mt-eval), the seeded draw is Python's own
``random.Random(seed).sample`` of the sorted ids, ``vault history`` lists every move, premature publication
and rotation without consent are refused in one line with nothing written.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import shutil
from pathlib import Path
from typing import Any

import pyrage
import pytest
from submitter_fixtures import sign_up
from typer.testing import CliRunner
from vault_fixtures import GOLD, HELD_OUT, Custodian, copy_vault, give_consent

from mt_eval.cli import app
from mt_eval.corpus.loaders import load_corpus
from mt_eval.errors import UserError
from mt_eval.runcard.verify import verify_card
from mt_eval.sovereign.consent import revoke_consent
from mt_eval.sovereign.custody import keygen as deal
from mt_eval.sovereign.custody import opening_key
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import full_card_hash, load_full_card
from mt_eval.sovereign.rotation import history, rotate_entries
from mt_eval.sovereign.vault import open_segment, open_vault, read_identities, seal
from support.sovereign import CORPUS, EXAMPLES, write_policy

runner = CliRunner()
GOLD_IDS = list(range(1, GOLD + 1))
HELD_IDS = list(range(GOLD + 1, GOLD + HELD_OUT + 1))


def _invoke(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args], terminal_width=400)
    return result.exit_code, result.output


@pytest.fixture
def vault(tmp_path: Path, sealed: Path) -> Path:
    return copy_vault(sealed, tmp_path / "vault")


@pytest.fixture
def gov(tmp_path: Path) -> Governance:
    return Governance(give_consent(tmp_path / "governance"))


def _policy(gov: Governance, days: int) -> None:
    gov.dir.mkdir(parents=True, exist_ok=True)
    gov.policy_path.write_text(f"[rotation]\npublish_after_days = {days}\n", encoding="utf-8")


def _secret_entries(vault: Path, custodian: Custodian) -> list[dict[str, Any]]:
    """The secret half's entries, decrypted by pyrage itself with the custodian's identity."""
    clear = pyrage.decrypt((vault / "secret.age").read_bytes(), read_identities(custodian.key))
    return list(json.loads(clear)["entries"])


def _files(vault: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(vault.iterdir())}


def test_a_seeded_rotation_into_held_out_reseals_and_keeps_the_history(vault: Path, gov: Governance,
                                                                       custodians: list[Custodian]) -> None:
    before = json.loads((vault / "vault.json").read_text())
    code, output = _invoke("vault", "rotate-entries", vault, "--from", "gold_standard", "--to", "held_out",
                           "--count", 5, "--seed", 7, "--identity", custodians[0].key, "--who", "council",
                           "--governance", gov.dir)
    assert code == 0 and "moved 5 entries from gold_standard to held_out" in output, output
    drawn = random.Random(7).sample(GOLD_IDS, 5)  # the independent reference of the draw
    manifest = json.loads((vault / "vault.json").read_text())
    assert manifest["secret"]["segments"] == {"gold_standard": GOLD - 5, "held_out": HELD_OUT + 5}
    assert manifest["public"] == before["public"]  # nothing public changed
    assert manifest["corpus_sha256"] != before["corpus_sha256"] == manifest["sealed_corpus_sha256"]
    full = open_vault(vault, custodians[0].key)  # the re-sealed half opens with the custodian's key
    segment = {e.id: e.segment.value for e in full.entries}
    assert all(segment[i] == "held_out" for i in drawn) and len(full.entries) == 200
    gold = open_segment(vault, custodians[0].key, "gold_standard")  # what a run after the rotation opens
    assert sorted(e.id for e in gold.entries) == sorted(set(GOLD_IDS) - set(drawn))
    assert gold.sha256 == manifest["corpus_sha256"]
    with pytest.raises(UserError, match="not a recipient"):
        open_vault(vault, custodians[1].key)  # re-sealed to the same recipients only

    [event] = [e for e in gov.events() if e["kind"] == "rotate_entries"]
    assert event["ids"] == drawn and event["seed"] == 7 and event["who"] == "council" and not event["published"]
    assert event["corpus_sha256_before"] == before["corpus_sha256"]
    assert not any(e.source in json.dumps(event, ensure_ascii=False) for e in gold.entries)  # no text logged
    assert {i: [(m.source, m.target) for m in ms] for i, ms in history(gov, manifest["corpus_sha256"]).items()} == \
        {i: [("gold_standard", "held_out")] for i in drawn}
    code, output = _invoke("vault", "history", vault, "--governance", gov.dir)
    assert code == 0 and "5 of 200 entries rotated" in output, output
    assert f"entry {drawn[0]}: gold_standard → held_out (" in output
    code, output = _invoke("vault", "history", vault, "--governance", gov.dir, "--identity", custodians[0].key)
    listed = [line for line in output.splitlines() if line.startswith("entry ")]
    assert code == 0 and len(listed) == 200 and "5 of 200 entries rotated" in output, output
    kept = next(i for i in GOLD_IDS if i not in drawn)
    assert f"entry {kept}: gold_standard (as sealed)" in listed
    assert f"entry {HELD_IDS[0]}: held_out (as sealed)" in listed
    assert not any(e.source in output or e.reference in output for e in full.entries)  # ids and segments only
    code, output = _invoke("governance", "audit", "--governance", gov.dir)
    assert code == 0 and "gold_standard → held_out (5)" in output, output
    code, output = _invoke("vault", "inspect", vault)
    assert code == 0 and "files intact" in output and f"as sealed: corpus sha256 {before['corpus_sha256']}" in output


def test_publishing_a_gold_entry_is_refused_unless_the_policy_allows_it(vault: Path, gov: Governance,
                                                                        custodians: list[Custodian]) -> None:
    key = custodians[0].key
    untouched = _files(vault)
    code, output = _invoke("vault", "rotate-entries", vault, "--from", "gold_standard", "--to", "development",
                           "--ids", "3,4", "--identity", key, "--governance", gov.dir)
    assert code == 2 and "rotation.publish_after_days is not set" in output.strip().splitlines()[0], output
    assert _files(vault) == untouched and not [e for e in gov.events() if e["kind"] == "rotate_entries"]

    _policy(gov, 30)  # published 30 days after leaving gold_standard
    rotate_entries(vault, key, gov, source="gold_standard", target="held_out", ids=[3, 4])
    with pytest.raises(UserError, match=r"entry 3 left gold_standard 0 day\(s\) ago; the policy publishes a "
                                        r"rotated-out gold entry 30 day\(s\) after"):
        rotate_entries(vault, key, gov, source="held_out", target="development", ids=[3])
    with pytest.raises(UserError, match="left gold_standard 0 day"):
        rotate_entries(vault, key, gov, source="gold_standard", target="diagnostic", ids=[5])
    # a held_out entry that never was gold may go public once the policy sets the key
    done = rotate_entries(vault, key, gov, source="held_out", target="development", ids=[HELD_IDS[0]])
    assert done.moved == (HELD_IDS[0],)
    secret_ids = {e["id"] for e in _secret_entries(vault, custodians[0])}
    assert HELD_IDS[0] not in secret_ids and {3, 4} <= secret_ids  # gone from the secret half


def test_with_publish_after_zero_gold_entries_go_public_and_leave_the_secret_half(vault: Path, gov: Governance,
                                                                                  custodians: list[Custodian]) -> None:
    code, output = _invoke("governance", "policy", "--publish-after-days", 0, "--governance", gov.dir)
    assert code == 0 and "rotated-out gold entries public: 0 days after leaving gold_standard" in output, output
    original = {e.id: e for e in open_vault(vault, custodians[0].key).entries}
    done = rotate_entries(vault, custodians[0].key, gov, source="gold_standard", target="development", count=4,
                          seed=11)
    moved = set(done.moved)
    assert moved == set(random.Random(11).sample(GOLD_IDS, 4))
    secret = _secret_entries(vault, custodians[0])
    assert not moved & {e["id"] for e in secret} and len(secret) == GOLD + HELD_OUT - 4
    public = load_corpus(vault / "public.json")  # an ordinary corpus, loaded by the ordinary loader
    published = {e.id: e for e in public.entries if e.id in moved}
    assert set(published) == moved and all(e.segment.value == "development" for e in published.values())
    assert all(published[i].source == original[i].source and published[i].reference == original[i].reference
               for i in moved)
    manifest = json.loads((vault / "vault.json").read_text())
    assert manifest["secret"]["segments"] == {"gold_standard": GOLD - 4, "held_out": HELD_OUT}
    assert manifest["public"]["entries"] == 200 - GOLD - HELD_OUT + 4
    [event] = [e for e in gov.events() if e["kind"] == "rotate_entries"]
    assert event["published"] is True


def test_rotation_needs_consent_and_never_moves_public_entries_into_secret(vault: Path, tmp_path: Path,
                                                                          custodians: list[Custodian]) -> None:
    key, untouched = custodians[0].key, _files(vault)
    bare = Governance(tmp_path / "no-consent")
    code, output = _invoke("vault", "rotate-entries", vault, "--count", 2, "--seed", 1, "--identity", key,
                           "--governance", bare.dir)
    assert code == 2 and "cannot rotate entries into dataset 'ntrex128-eng-spa-demo': no community consent" in output
    gov = Governance(give_consent(tmp_path / "governance"))
    revoke_consent(gov, "ntrex128-eng-spa-demo", "es", "council decision", "2026-11-20")
    with pytest.raises(UserError, match="consent \\(es\\) was revoked on 2026-11-20"):
        rotate_entries(vault, key, gov, source="gold_standard", target="held_out", count=2, seed=1)
    public_id = next(e.id for e in load_corpus(vault / "public.json").entries if e.segment.value == "development")
    with pytest.raises(UserError, match="development is public in this vault"):
        rotate_entries(vault, key, gov, source="development", target="gold_standard", ids=[public_id])
    with pytest.raises(UserError, match="entry 60 is not in gold_standard"):
        rotate_entries(vault, key, gov, source="gold_standard", target="held_out", ids=[60])
    code, output = _invoke("vault", "rotate-entries", vault, "--count", 2, "--identity", key, "--governance", gov.dir)
    assert code == 2 and "give --count N and --seed S" in output
    assert _files(vault) == untouched


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")
def test_gold_runs_after_a_rotation_use_the_new_segments_and_old_cards_still_verify(
        tmp_path: Path, custodians: list[Custodian]) -> None:
    """Two real gold runs of one signed bundle in the sandbox, a rotation between them (~7 s)."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:12]
    for i, entry in enumerate(data["entries"]):
        entry["segment"] = "gold_standard" if i < 6 else "held_out" if i < 8 else "development"
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    gov = Governance(give_consent(write_policy(tmp_path / "governance")))
    vault, key = tmp_path / "vault", custodians[0].key
    seal(corpus, ["gold_standard", "held_out"], [custodians[0].recipient], vault)
    bundle = tmp_path / "bundle"
    shutil.copytree(EXAMPLES / "glossary-python", bundle, ignore=shutil.ignore_patterns("__pycache__"))
    sign_up(gov.dir, bundle)
    code, output = _invoke("sovereign", "preflight", bundle, "--corpus", vault / "public.json", "--governance",
                           gov.dir, "--out", tmp_path / "P.json", "--logs", tmp_path / "logs")
    assert code == 0, output

    def gold_run(name: str) -> dict[str, Any]:
        code, output = _invoke("sovereign", "run", "--bundle", bundle, "--vault", vault, "--identity", key,
                               "--governance", gov.dir, "--out", tmp_path / name)
        assert code == 0, output
        return load_full_card(gov.dir, full_card_hash(gov.dir, str(tmp_path / name)), key)

    before = gold_run("R1.json")
    done = rotate_entries(vault, key, gov, source="gold_standard", target="held_out", ids=[1, 2])
    after = gold_run("R2.json")
    assert [r["entry_id"] for r in before["results"]] == [1, 2, 3, 4, 5, 6]
    assert [r["entry_id"] for r in after["results"]] == [3, 4, 5, 6]  # the run after opens the new gold set
    assert after["dataset"]["sha256"] == done.vault.corpus_sha256 != before["dataset"]["sha256"]
    assert before["dataset"]["sha256"] == done.vault.manifest["sealed_corpus_sha256"]
    assert verify_card(before) == [] and verify_card(after) == []  # the old card still verifies


def test_a_quorum_vault_rotates_with_its_shares_and_refuses_one_identity_file(
        tmp_path: Path, sovereign_corpus: Path, custodians: list[Custodian]) -> None:
    record = deal(tmp_path / "custody", 3, 2)
    vault = tmp_path / "vault"
    seal(sovereign_corpus, ["gold_standard", "held_out"], [record.recipient], vault, record.as_json())
    gov = Governance(give_consent(tmp_path / "governance"))
    shares = [tmp_path / "custody" / f"custodian-{i}.share" for i in (1, 3)]
    code, output = _invoke("vault", "rotate-entries", vault, "--count", 3, "--seed", 5, "--share", shares[0],
                           "--governance", gov.dir)
    assert code == 2, output  # one custodian's share is not the quorum
    code, output = _invoke("vault", "rotate-entries", vault, "--count", 3, "--seed", 5, "--identity",
                           custodians[0].key, "--governance", gov.dir)
    assert code == 2 and "held by a quorum of 2 custodians" in output, output
    code, output = _invoke("vault", "rotate-entries", vault, "--count", 3, "--seed", 5, "--share", shares[0],
                           "--share", shares[1], "--governance", gov.dir)
    assert code == 0, output
    manifest = json.loads((vault / "vault.json").read_text())
    assert manifest["custody"] == record.as_json() and manifest["recipients"] == [record.recipient]
    assert manifest["secret"]["segments"] == {"gold_standard": GOLD - 3, "held_out": HELD_OUT + 3}
    gold = open_segment(vault, opening_key(None, shares), "gold_standard")  # the re-seal opens with the shares
    assert len(gold.entries) == GOLD - 3


def test_a_second_rotation_while_one_holds_the_vault_is_refused(vault: Path, gov: Governance,
                                                                 custodians: list[Custodian]) -> None:
    """Two rotations reading the same vault would each write their own re-seal: the log would record both
    moves and the vault hold one. A rotation holds the vault folder's lock (flock) from read to write."""
    untouched = _files(vault)
    held = os.open(vault, os.O_RDONLY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a rotation in progress holds it
        with pytest.raises(UserError, match="another change of this vault is in progress"):
            rotate_entries(vault, custodians[0].key, gov, source="gold_standard", target="held_out", count=1, seed=3)
    finally:
        os.close(held)
    assert _files(vault) == untouched and not [e for e in gov.events() if e["kind"] == "rotate_entries"]
    rotate_entries(vault, custodians[0].key, gov, source="gold_standard", target="held_out", count=1, seed=3)


def test_history_follows_this_vaults_own_chain_of_rotations(vault: Path, gov: Governance, tmp_path: Path,
                                                           custodians: list[Custodian]) -> None:
    """Two vaults of one dataset in one governance folder (a copy rotated differently): each lists its own
    moves only; an entry rotated out and back keeps every move (the corpus hash returns to an earlier one)."""
    key, other = custodians[0].key, copy_vault(vault, tmp_path / "other-vault")
    for target, source in (("held_out", "gold_standard"), ("gold_standard", "held_out"), ("held_out", "gold_standard")):
        rotate_entries(vault, key, gov, source=source, target=target, ids=[7])
    rotate_entries(other, key, gov, source="gold_standard", target="held_out", ids=[9])
    mine = history(gov, json.loads((vault / "vault.json").read_text())["corpus_sha256"])
    assert {i: [(m.source, m.target) for m in ms] for i, ms in mine.items()} == \
        {7: [("gold_standard", "held_out"), ("held_out", "gold_standard"), ("gold_standard", "held_out")]}
    theirs = history(gov, json.loads((other / "vault.json").read_text())["corpus_sha256"])
    assert {i: [(m.source, m.target) for m in ms] for i, ms in theirs.items()} == {9: [("gold_standard", "held_out")]}
    code, output = _invoke("vault", "history", other, "--governance", gov.dir)
    assert code == 0 and "entry 9: gold_standard → held_out" in output and "entry 7" not in output, output

"""Signed submissions and registered submitter keys: what preflight and run accept, what they refuse
(unsigned, changed after signing, forged, replayed from a card or file signature, unregistered,
revoked), and the budget counted per key, not per bundle name.

References: signatures made here with ``cryptography`` directly (not through the code under test),
key fingerprints from ``hashlib`` over the raw public key, the audit log's own lines.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.runcard.signing import card_message, file_message, make_signature, new_key, read_private_key
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.runner import preflight
from mt_eval.sovereign.submitters import (
    SIGNATURE_KIND,
    add_submitter,
    revoke_submitter,
    sign_submission,
    submitters,
    verify_submission,
)
from support.sovereign import EXAMPLES, TINY, small_dataset, write_policy


@pytest.fixture
def setup(tmp_path: Path) -> dict:
    bundle = tmp_path / "glossary"
    shutil.copytree(EXAMPLES / "glossary-python", bundle, ignore=shutil.ignore_patterns("__pycache__"))
    keys = tmp_path / "keys"
    keys.mkdir()
    key, pub, public = new_key(keys / "alice.key", "alice")
    gov = Governance(tmp_path / "gov")
    return {"bundle": bundle, "key": key, "pub": pub, "public": public, "gov": gov, "keys": keys}


def _raw_public(key: Path) -> bytes:
    return read_private_key(key).public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def test_a_signed_bundle_by_a_registered_key_is_accepted_and_the_log_names_the_key(setup: dict) -> None:
    gov, bundle = setup["gov"], setup["bundle"]
    added = add_submitter(gov, "alice", setup["public"], who="board")
    assert added.key == hashlib.sha256(_raw_public(setup["key"])).hexdigest()
    path, _ = sign_submission(load_bundle(bundle), bundle, setup["key"])
    assert path == bundle.parent / "glossary.sig"  # beside the directory, not inside it (its sha256 is unchanged)
    found = verify_submission(gov, load_bundle(bundle), path)
    assert (found.name, found.key, found.revoked) == ("alice", added.key, None)
    [event] = gov.events()
    assert event["kind"] == "submitter_add" and event["submitter_key"] == added.key and event["who"] == "board"
    # the signature verifies with the raw key alone, over the documented message
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    data = json.loads(path.read_text())
    message = b"mt-eval sovereign submission signature v1\n" + load_bundle(bundle).sha256.encode()
    Ed25519PublicKey.from_public_bytes(_raw_public(setup["key"])).verify(
        base64.b64decode(data["signature"]["signature"]), message)


def _forge(path: Path, digest: str, signature: object) -> Path:
    from dataclasses import asdict

    path.write_text(json.dumps({"kind": SIGNATURE_KIND, "version": 1, "bundle_sha256": digest,
                                "signature": asdict(signature)}))  # type: ignore[call-overload]
    return path


@pytest.mark.parametrize("attack, expected", [
    ("unsigned", "the submission is not signed"),
    ("changed_after_signing", "the signature is for bundle"),
    ("other_bundle_named", "the submission signature is not valid"),
    ("card_signature_replayed", "the submission signature is not valid"),
    ("file_signature_replayed", "the submission signature is not valid"),
    ("unregistered_key", "is not a registered submitter key"),
    ("revoked_key", r"was revoked \(key lost\)"),
])
def test_what_preflight_and_run_refuse(setup: dict, tmp_path: Path, attack: str, expected: str) -> None:
    gov, bundle, key = setup["gov"], setup["bundle"], setup["key"]
    add_submitter(gov, "alice", setup["public"])
    sig, _ = sign_submission(load_bundle(bundle), bundle, key)
    private, digest = read_private_key(key), load_bundle(bundle).sha256
    if attack == "unsigned":
        sig.unlink()
    elif attack == "changed_after_signing":
        (bundle / "glossary.py").write_text((bundle / "glossary.py").read_text() + "\n# changed\n")
    elif attack == "other_bundle_named":  # a valid signature of another bundle, relabelled as this one
        _forge(sig, digest, make_signature(private, b"mt-eval sovereign submission signature v1\n" + b"0" * 64, None))
    elif attack == "card_signature_replayed":  # the key's signature of a card whose hash equals the bundle's sha256
        _forge(sig, digest, make_signature(private, card_message(digest), None))
    elif attack == "file_signature_replayed":
        _forge(sig, digest, make_signature(private, file_message(digest), None))
    elif attack == "unregistered_key":
        other, _, _ = new_key(setup["keys"] / "mallory.key")
        sign_submission(load_bundle(bundle), bundle, other)
    else:
        revoke_submitter(gov, "alice", "key lost")
    with pytest.raises(UserError, match=expected) as refused:
        verify_submission(gov, load_bundle(bundle), sig)
    assert "\n" not in str(refused.value) and refused.value.hint


def test_preflight_refuses_an_unsigned_bundle_before_any_sandbox_starts(setup: dict, tmp_path: Path) -> None:
    gov_dir = write_policy(tmp_path / "gov")
    with pytest.raises(UserError, match="the submission is not signed"):
        preflight(load_bundle(setup["bundle"]), small_dataset(2), gov_dir, TINY, signature=tmp_path / "none.sig")
    assert Governance(gov_dir).events() == []  # nothing ran, nothing logged


def test_preflight_refuses_a_model_the_policy_does_not_allow(make_bundle, tmp_path: Path) -> None:
    from submitter_fixtures import sign_up

    from mt_eval.sovereign.broker import BrokerConfig

    gov_dir = write_policy(tmp_path / "gov")
    bundle = make_bundle("gateway", {"attacks.json": {}})
    signature = sign_up(gov_dir, bundle)
    Governance(gov_dir).set_policy(models=("test/other-model",))
    config = BrokerConfig("http://127.0.0.1:1/v1", "k", ("test/translator",))  # the caller's models are ignored
    with pytest.raises(UserError, match="'test/translator' is not a model the governance policy allows"):
        preflight(load_bundle(bundle), small_dataset(2), gov_dir, TINY, config, signature=signature)


def test_the_registry_one_active_key_per_submitter(setup: dict) -> None:
    gov, keys = setup["gov"], setup["keys"]
    add_submitter(gov, "alice", setup["public"])
    with pytest.raises(UserError, match="this key is already registered"):
        add_submitter(gov, "alice2", setup["public"])
    _, _, bob = new_key(keys / "bob.key")
    with pytest.raises(UserError, match="the name 'alice' is already registered"):
        add_submitter(gov, "alice", bob)
    with pytest.raises(UserError, match="is not 1-100 letters"):
        add_submitter(gov, "bob smith\n", bob)
    add_submitter(gov, "bob", bob)
    revoke_submitter(gov, "alice", "left the project")
    with pytest.raises(UserError, match="no active submitter 'alice'"):
        revoke_submitter(gov, "alice", "again")
    add_submitter(gov, "alice", setup["public"])  # re-registered after revocation: logged again
    state = {s.name: s.revoked for s in submitters(gov).values()}
    assert state == {"alice": None, "bob": None}
    assert [e["kind"] for e in gov.events()] == ["submitter_add"] * 2 + ["submitter_revoke", "submitter_add"]
    assert gov.verify_log() == []


def _run(gov: Governance, bundle: str, method: str, key: str) -> None:
    gov.record({"kind": "run", "bundle_sha256": bundle, "method": method, "segment": "gold_standard",
                "status": "ok", "submitter": "alice", "submitter_key": key})


def test_renaming_a_bundle_does_not_reset_the_budget(tmp_path: Path) -> None:
    gov, alice, bob = Governance(tmp_path / "gov"), "a1" * 32, "b2" * 32
    bundles = [f"{i:02d}" * 32 for i in range(5)]
    for bundle, name in zip(bundles[:3], ["acme-mt", "acme-mt-v2", "unrelated-name"], strict=True):
        gov.check_allowed(bundle, name, alice, "alice")
        _run(gov, bundle, name, alice)
    with pytest.raises(UserError, match=r"submitter 'alice' \(key a1a1a1a1a1a1…\) has used its 3 gold submissions"):
        gov.check_allowed(bundles[3], "renamed-again", alice, "alice")
    gov.check_allowed(bundles[3], "renamed-again", bob, "bob")  # another registered key: its own budget
    gov.check_allowed(bundles[0], "acme-mt", alice, "alice")  # the §9.2 second run of a bundle already counted
    _run(gov, bundles[0], "acme-mt", alice)
    with pytest.raises(UserError, match="already ran 2 time"):  # ... and no third, whichever key signs it
        gov.check_allowed(bundles[0], "acme-mt", bob, "bob")
    assert {b: len(t) for b, t in gov.submissions(alice).items()} == {bundles[0]: 2, bundles[1]: 1, bundles[2]: 1}
    assert gov.submissions(bob) == {}
    assert all(t.tzinfo is not None and t <= datetime.now(UTC) for ts in gov.submissions(alice).values() for t in ts)


def test_cli_keys_register_sign_list_revoke(setup: dict, tmp_path: Path) -> None:
    runner, gov_dir, bundle = CliRunner(), str(tmp_path / "gov"), setup["bundle"]

    def cli(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        return result.exit_code, result.output

    code, output = cli("governance", "submitter", "add", "alice", "--public-key", str(setup["pub"]),
                       "--governance", gov_dir)
    assert code == 0 and "registered submitter alice" in output, output
    _, _, bob = new_key(setup["keys"] / "bob.key")
    code, output = cli("governance", "submitter", "add", "bob", "--public-key", bob.line(), "--governance", gov_dir)
    assert code == 0, output
    code, output = cli("submission", "sign", str(bundle), "--key", str(setup["key"]), "--out", str(tmp_path / "s.sig"))
    assert code == 0 and f"signed bundle {load_bundle(bundle).sha256[:12]}" in output, output
    assert verify_submission(Governance(tmp_path / "gov"), load_bundle(bundle), tmp_path / "s.sig").name == "alice"
    code, output = cli("governance", "submitter", "revoke", "alice", "--reason", "key lost", "--governance", gov_dir)
    assert code == 0
    code, output = cli("governance", "submitter", "list", "--governance", gov_dir)
    assert code == 0 and "revoked (key lost)" in output and "bob" in output and "active" in output
    code, output = cli("governance", "submitter", "add", "eve", "--public-key", str(setup["key"]),
                       "--governance", gov_dir)  # a private key handed over by mistake is refused, never logged
    assert code == 2 and "this is a private key" in output
    assert b"PRIVATE" not in (tmp_path / "gov" / "audit.jsonl").read_bytes()


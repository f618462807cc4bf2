"""``sign`` and ``verify`` on cards written before signatures existed (tests/runcard/saved): the card
stays byte for byte the same, its seal still verifies with the spec's own snippet, the signature is
checked with ``cryptography`` directly, and forged, stale, misdirected or malformed signatures fail."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from signing_helpers import (
    CARD_CONTEXT,
    SAVED,
    cli,
    copy_card,
    independent_valid,
    one_line_error,
    sig_file,
    spec_hash,
    write_sig_file,
)

from mt_eval.runcard.signing import read_private_key

SAVED_CARDS = sorted(SAVED.glob("*.json"))


@pytest.mark.parametrize("saved", SAVED_CARDS, ids=[p.stem for p in SAVED_CARDS])
def test_every_saved_card_can_be_signed(tmp_path: Path, keys: dict[str, Path], saved: Path) -> None:
    """Cards written before signatures existed: signed as they are, their bytes (so their verify) unchanged."""
    card = copy_card(saved, tmp_path / "c")
    before = card.read_bytes()
    assert cli("sign", card, "--key", keys["alice"]).exit_code == 0
    assert card.read_bytes() == before
    sig = sig_file(card)["signatures"][0]
    assert independent_valid(sig["public_key"], sig["signature"], CARD_CONTEXT + spec_hash(card).encode())


def test_signing_leaves_the_card_and_its_seal_alone(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    before = card.read_bytes()
    unsigned = cli("verify", card)
    assert unsigned.exit_code == 0, unsigned.output
    assert "unsigned: nothing proves who produced this card" in unsigned.output
    assert "internally consistent" in unsigned.output

    for who in ("alice", "bob"):
        assert cli("sign", card, "--key", keys[who]).exit_code == 0
    assert card.read_bytes() == before  # detached: the card itself never changes
    data = sig_file(card)
    digest = spec_hash(card)
    assert data["run_card_hash"] == digest == json.loads(before)["run_card_hash"]
    assert [s["signer"] for s in data["signatures"]] == ["alice", "bob"]
    for sig in data["signatures"]:
        assert independent_valid(sig["public_key"], sig["signature"], CARD_CONTEXT + digest.encode())
        assert sig["key_id"] == hashlib.sha256(base64.b64decode(sig["public_key"])).hexdigest()[:16]
        # domain separation: the signature is not one over the bare hash
        assert not independent_valid(sig["public_key"], sig["signature"], digest.encode())

    signed = cli("verify", card)
    assert signed.exit_code == 0, signed.output
    assert signed.output.count("signature valid") == 2 and "unsigned" not in signed.output
    assert "claims to be alice" in signed.output and "give --db" in signed.output

    card.with_name(card.name + ".sig").unlink()  # stripping signatures: the seal still verifies
    assert cli("verify", card).exit_code == 0


def test_signing_again_replaces_that_keys_signature(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    cli("sign", card, "--key", keys["alice"])
    first = sig_file(card)["signatures"]
    assert cli("sign", card, "--key", keys["alice"], "--signer", "Alice A.").exit_code == 0
    again = sig_file(card)["signatures"]
    assert len(again) == 1 and again[0]["key_id"] == first[0]["key_id"] and again[0]["signer"] == "Alice A."


def _signed(tmp_path: Path, keys: dict[str, Path]) -> Path:
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    assert cli("sign", card, "--key", keys["alice"]).exit_code == 0
    return card


def _failed(card: Path) -> str:
    result = cli("verify", card)
    assert result.exit_code == 1, result.output
    assert "signature INVALID" in result.output and "Traceback" not in result.output
    return str(result.output)


def test_forged_signature_fails_verify(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = _signed(tmp_path, keys)
    data = sig_file(card)
    data["signatures"][0]["signature"] = base64.b64encode(os.urandom(64)).decode()
    write_sig_file(card, data)
    assert "does not match" in _failed(card)


def test_signature_made_over_another_message_fails(tmp_path: Path, keys: dict[str, Path]) -> None:
    """Signed by alice's real key, but over the bare hash (no context line): not a card signature."""
    card = _signed(tmp_path, keys)
    data = sig_file(card)
    private = read_private_key(keys["alice"])
    data["signatures"][0]["signature"] = base64.b64encode(private.sign(data["run_card_hash"].encode())).decode()
    write_sig_file(card, data)
    _failed(card)


def test_public_key_swapped_under_a_claimed_key_id(tmp_path: Path, keys: dict[str, Path]) -> None:
    """Mallory signs with her key but writes alice's key id: the id must be that of the key given."""
    card = _signed(tmp_path, keys)
    alice_id = sig_file(card)["signatures"][0]["key_id"]
    card.with_name(card.name + ".sig").unlink()
    cli("sign", card, "--key", keys["mallory"], "--signer", "alice")
    data = sig_file(card)
    data["signatures"][0]["key_id"] = alice_id
    write_sig_file(card, data)
    assert "is not the id of the public key" in _failed(card)


def test_stale_signature_file_of_another_card_fails(tmp_path: Path, keys: dict[str, Path]) -> None:
    """A .sig made for one card, put beside another: its signatures are over the other card's hash."""
    other = copy_card(SAVED_CARDS[0], tmp_path / "o")
    cli("sign", other, "--key", keys["alice"])
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    (card.with_name(card.name + ".sig")).write_bytes(other.with_name(other.name + ".sig").read_bytes())
    assert "not this one" in _failed(card)


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda d: d["signatures"][0].update(signature=d["signatures"][0]["signature"][:-4]), "not base64 of 64 bytes"),
    (lambda d: d["signatures"][0].update(public_key="AAAA"), "not base64 of 32 bytes"),
    (lambda d: d["signatures"][0].update(key_id="'; DROP TABLE x; --"), "not 16 lowercase hex"),
    (lambda d: d["signatures"][0].update(signed_at="yesterday"), "not an ISO time"),
    (lambda d: d["signatures"][0].update(signer="x" * 500), "printable name"),
    (lambda d: d.update(signatures=[]), "non-empty list"),
    (lambda d: d.update(signatures=[d["signatures"][0]] * 2), "repeats a key id"),
    (lambda d: d.update(kind="something else"), "not a signature file"),
], ids=["truncated-signature", "short-key", "bad-key-id", "bad-time", "long-signer", "empty", "duplicate", "kind"])
def test_malformed_signature_files_refused(tmp_path: Path, keys: dict[str, Path], edit: object, expected: str) -> None:
    card = _signed(tmp_path, keys)
    data = sig_file(card)
    edit(data)  # type: ignore[operator]
    write_sig_file(card, data)
    assert expected in one_line_error(cli("verify", card))


def test_signature_file_not_json(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = _signed(tmp_path, keys)
    card.with_name(card.name + ".sig").write_bytes(b"\xff\xfe not json")
    assert "not a signature file" in one_line_error(cli("verify", card))


def test_signature_file_that_is_a_fifo(tmp_path: Path) -> None:
    """A FIFO named <card>.sig would block a reader forever: refused without opening it."""
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    os.mkfifo(card.with_name(card.name + ".sig"))
    assert "not a regular file" in one_line_error(cli("verify", card))


def test_a_card_whose_seal_is_broken_is_not_signed(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = copy_card(SAVED_CARDS[-1], tmp_path / "c")
    data = json.loads(card.read_text())
    data["scores"]["composite"] = 0.99
    card.write_text(json.dumps(data))
    assert "seal does not hold" in one_line_error(cli("sign", card, "--key", keys["alice"]))
    assert not card.with_name(card.name + ".sig").exists()


def test_verify_reports_registration_in_a_store(tmp_path: Path, keys: dict[str, Path]) -> None:
    card = _signed(tmp_path, keys)
    db = tmp_path / "s.db"
    cli("sign", card, "--key", keys["mallory"])
    cli("sign", card, "--key", keys["bob"], "--signer", "alice")  # bob's registered key, claiming to be alice
    assert cli("keys", "register", keys["alice"].with_suffix(".pub"), "--submitter", "alice", "--db", db).exit_code == 0
    assert cli("keys", "register", keys["bob"].with_suffix(".pub"), "--submitter", "bob", "--db", db).exit_code == 0
    result = cli("verify", card, "--db", db)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if "signature valid" in line]
    assert "registered to alice in" in lines[0] and "not revoked" in lines[0]
    assert "not registered" in lines[1]
    assert "registered to bob (not alice, the signer it claims)" in lines[2]
    kid = sig_file(card)["signatures"][0]["key_id"]
    assert cli("keys", "revoke", kid, "--db", db).exit_code == 0
    assert "revoked" in cli("verify", card, "--db", db).output


def test_a_key_never_written_to_disk_is_not_needed(tmp_path: Path) -> None:
    """Sanity of the independent checker itself: it rejects a signature by a different key."""
    a, b = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    from cryptography.hazmat.primitives import serialization as s

    pub_b = base64.b64encode(b.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw)).decode()
    assert not independent_valid(pub_b, base64.b64encode(a.sign(b"m")).decode(), b"m")
    assert independent_valid(pub_b, base64.b64encode(b.sign(b"m")).decode(), b"m")

"""Key files: what ``keys new`` writes (checked with ``cryptography`` directly) and every malformed or
misplaced key refused with one line, exit 2, and no key material printed."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from signing_helpers import SAVED, cli, copy_card, one_line_error


def test_new_key_files(tmp_path: Path) -> None:
    result = cli("keys", "new", "-o", tmp_path / "alice.key", "--signer", "alice")
    assert result.exit_code == 0, result.output
    key, pub = tmp_path / "alice.key", tmp_path / "alice.pub"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    pem = key.read_bytes()
    assert pem.startswith(b"-----BEGIN PRIVATE KEY-----")  # PKCS#8, unencrypted
    private = serialization.load_pem_private_key(pem, password=None)
    assert isinstance(private, ed25519.Ed25519PrivateKey)
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert pub.read_text() == f"mt-eval-ed25519 {base64.b64encode(raw).decode()} alice\n"
    assert hashlib.sha256(raw).hexdigest()[:16] in result.output  # the key id, as the issue defines it
    body = pem.decode().splitlines()[1]
    assert body not in result.output and "PRIVATE KEY" not in result.output


def test_new_never_overwrites(tmp_path: Path) -> None:
    key = tmp_path / "k.key"
    assert cli("keys", "new", "-o", key).exit_code == 0
    before = key.read_bytes()
    assert "already exists" in one_line_error(cli("keys", "new", "-o", key))
    assert key.read_bytes() == before
    (tmp_path / "other.pub").write_text("x")  # the public half's place taken is refused too
    assert "other.pub: already exists" in one_line_error(cli("keys", "new", "-o", tmp_path / "other.key"))
    assert not (tmp_path / "other.key").exists()


def _card(tmp_path: Path) -> Path:
    return copy_card(SAVED / "card-2.0-predictions-eng-deu.json", tmp_path / "cards")


def _write(path: Path, data: bytes, mode: int = 0o600) -> Path:
    path.write_bytes(data)
    os.chmod(path, mode)
    return path


def _pem(key: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey,
         encryption: serialization.KeySerializationEncryption = serialization.NoEncryption()) -> bytes:  # noqa: B008
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)


@pytest.mark.parametrize(("make", "expected"), [
    (lambda p: _write(p, b"hello"), "not a PEM private key"),
    (lambda p: _write(p, _pem(ed25519.Ed25519PrivateKey.generate())[:-40]), "not a PEM private key"),  # truncated
    (lambda p: _write(p, _pem(ec.generate_private_key(ec.SECP256R1()))), "not an Ed25519 key"),
    (lambda p: _write(p, _pem(ed25519.Ed25519PrivateKey.generate(),
                              serialization.BestAvailableEncryption(b"pw"))), "encrypted"),
    (lambda p: _write(p, _pem(ed25519.Ed25519PrivateKey.generate()), 0o644), "readable by others"),
    (lambda p: _write(p, b"mt-eval-ed25519 " + base64.b64encode(b"\1" * 32) + b"\n", 0o644), "this is a public key"),
    (lambda p: p, "private key file not found"),
    (lambda p: p.parent, "is a directory"),
], ids=["garbage", "truncated-pem", "ecdsa", "encrypted", "group-readable", "public-as-private", "missing", "dir"])
def test_bad_private_keys_refused(tmp_path: Path, make: object, expected: str) -> None:
    card = _card(tmp_path)
    key = make(tmp_path / "bad.key")  # type: ignore[operator]
    assert expected in one_line_error(cli("sign", card, "--key", key))
    assert not card.with_name(card.name + ".sig").exists()


@pytest.mark.parametrize(("text", "expected"), [
    ("mt-eval-ed25519 " + base64.b64encode(b"\1" * 32).decode()[:-4], "not base64 of 32 bytes"),  # truncated
    ("mt-eval-ed25519 " + base64.b64encode(b"\1" * 31).decode(), "not base64 of 32 bytes"),
    ("mt-eval-ed25519 !!notbase64!!", "not base64 of 32 bytes"),
    ("", "not a public key"),
], ids=["truncated-b64", "short-key", "not-b64", "empty"])
def test_bad_public_keys_refused(tmp_path: Path, text: str, expected: str) -> None:
    pub = tmp_path / "bad.pub"
    pub.write_text(text)
    assert expected in one_line_error(cli("keys", "register", pub, "--submitter", "x", "--db", tmp_path / "s.db"))


def test_private_key_given_as_public_is_refused_and_not_echoed(tmp_path: Path) -> None:
    key = tmp_path / "alice.key"
    assert cli("keys", "new", "-o", key).exit_code == 0
    line = one_line_error(cli("keys", "register", key, "--submitter", "alice", "--db", tmp_path / "s.db"))
    assert "this is a private key" in line
    assert key.read_text().splitlines()[1] not in line

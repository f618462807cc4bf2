"""The vault: sealing a real corpus's secret segments to age recipients, opening them in memory only.

References: the corpus loader on the original file (what ``open_vault`` must give back), ``pyrage``
itself (what the files hold), and byte greps for every secret text and every identity's secret key.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyrage
import pytest
import vault_fixtures
from pyrage import x25519
from vault_fixtures import GOLD, HELD_OUT, Custodian, copy_vault, files_under, give_consent, secret_strings

from mt_eval.corpus.loaders import load_corpus
from mt_eval.errors import UserError
from mt_eval.sovereign import vault

sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed


def test_keygen_writes_an_age_identity_owner_only_and_never_overwrites(tmp_path: Path) -> None:
    key = tmp_path / "c.key"
    recipient = vault.keygen(key)
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    lines = key.read_text().splitlines()
    assert lines[1] == f"# public key: {recipient}"  # age-keygen's own layout
    identity = x25519.Identity.from_str(lines[2])
    assert str(identity.to_public()) == recipient
    assert pyrage.decrypt(pyrage.encrypt(b"x", [x25519.Recipient.from_str(recipient)]), [identity]) == b"x"
    before = key.read_bytes()
    with pytest.raises(UserError, match="already exists; not overwritten"):
        vault.keygen(key)
    assert key.read_bytes() == before


def test_seal_keeps_public_entries_only_in_clear(sovereign_corpus: Path, sealed: Path,
                                                 custodians: list[Custodian]) -> None:
    original = load_corpus(sovereign_corpus)
    public = load_corpus(sealed / "public.json")
    assert [e for e in original.entries if e.segment.value not in ("gold_standard", "held_out")] == public.entries
    assert len(public.entries) == 200 - GOLD - HELD_OUT
    manifest = json.loads((sealed / "vault.json").read_text())
    assert manifest["secret"]["segments"] == {"gold_standard": GOLD, "held_out": HELD_OUT}
    assert manifest["recipients"] == [custodians[0].recipient]
    assert manifest["corpus_sha256"] == original.sha256
    # independent reference: pyrage itself opens secret.age with the identity and finds the 70 entries
    identity = x25519.Identity.from_str(custodians[0].secret())
    payload = json.loads(pyrage.decrypt((sealed / "secret.age").read_bytes(), [identity]))
    assert sorted(e["id"] for e in payload["entries"]) == [e.id for e in original.entries[: GOLD + HELD_OUT]]
    # no secret text, and no identity, in any file of the vault
    blobs = [p.read_bytes() for p in files_under(sealed)]
    secrets = secret_strings(sovereign_corpus)
    assert len(secrets) == 2 * (GOLD + HELD_OUT)
    for text in secrets + [c.secret() for c in custodians]:
        assert not any(text.encode() in b for b in blobs), text


def test_open_vault_gives_back_the_original_dataset_and_writes_nothing(
        sovereign_corpus: Path, sealed: Path, custodians: list[Custodian], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = {p: p.stat().st_mtime_ns for p in files_under(sealed)}
    dataset = vault.open_vault(sealed, custodians[0].key)
    original = load_corpus(sovereign_corpus)
    assert dataset.entries == original.entries
    assert dataset.sha256 == original.sha256 and dataset.info.id == original.info.id
    assert {p: p.stat().st_mtime_ns for p in files_under(sealed)} == before
    assert list(tmp_path.iterdir()) == []
    gold = vault.open_segment(sealed, custodians[0].key, "gold_standard")
    assert [e.id for e in gold.entries] == [e.id for e in original.entries[:GOLD]]
    with pytest.raises(UserError, match="unknown segment"):
        vault.open_segment(sealed, custodians[0].key, "gold")


def test_wrong_missing_or_exposed_keys_are_one_clear_line(sealed: Path, custodians: list[Custodian],
                                                          tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a recipient of this vault") as wrong:
        vault.open_vault(sealed, custodians[1].key)
    assert "\n" not in str(wrong.value)
    with pytest.raises(UserError, match="identity file not found"):
        vault.open_vault(sealed, tmp_path / "nope.key")
    exposed = tmp_path / "exposed.key"
    exposed.write_text(custodians[0].key.read_text())
    exposed.chmod(0o644)
    with pytest.raises(UserError, match="readable by others"):
        vault.open_vault(sealed, exposed)
    public = tmp_path / "public.key"
    public.write_text(custodians[0].recipient + "\n")
    public.chmod(0o600)
    with pytest.raises(UserError, match="not an age identity file"):
        vault.open_vault(sealed, public)


def _rehash(vault_dir: Path, part: str, file: str) -> None:
    """Make the manifest agree with a changed file (a tamperer who knows the format)."""
    import hashlib

    manifest = json.loads((vault_dir / "vault.json").read_text())
    manifest[part]["sha256"] = hashlib.sha256((vault_dir / file).read_bytes()).hexdigest()
    (vault_dir / "vault.json").write_text(json.dumps(manifest))


def test_tampered_vaults_are_refused(sealed: Path, sovereign_corpus: Path, custodians: list[Custodian],
                                     tmp_path: Path) -> None:
    key = custodians[0].key
    flipped = copy_vault(sealed, tmp_path / "flipped")
    data = bytearray((flipped / "secret.age").read_bytes())
    data[-20] ^= 0x01
    (flipped / "secret.age").write_bytes(bytes(data))
    with pytest.raises(UserError, match="tampered or damaged: its sha256"):
        vault.open_vault(flipped, key)
    _rehash(flipped, "secret", "secret.age")  # the hash now agrees: age's authentication still refuses
    with pytest.raises(UserError, match="cannot be decrypted: damaged or tampered"):
        vault.open_vault(flipped, key)

    edited = copy_vault(sealed, tmp_path / "edited")
    text = (edited / "public.json").read_text().replace('"difficulty": 2', '"difficulty": 3', 1)
    (edited / "public.json").write_text(text)
    with pytest.raises(UserError, match=r"public\.json: tampered or damaged"):
        vault.open_vault(edited, key)
    _rehash(edited, "public", "public.json")  # the encrypted half pins the public half it was sealed with
    with pytest.raises(UserError, match=r"does not belong with this public\.json"):
        vault.open_vault(edited, key)

    other = tmp_path / "other"
    vault.seal(sovereign_corpus, ["gold_standard"], [custodians[0].recipient], other)
    swapped = copy_vault(sealed, tmp_path / "swapped")
    (swapped / "secret.age").write_bytes((other / "secret.age").read_bytes())
    _rehash(swapped, "secret", "secret.age")
    with pytest.raises(UserError, match="does not belong"):
        vault.open_vault(swapped, key)
    (swapped / "vault.json").write_text("{not json")
    with pytest.raises(UserError, match="not readable JSON"):
        vault.open_vault(swapped, key)


def test_rotation_re_encrypts_to_new_recipients(sealed: Path, custodians: list[Custodian], tmp_path: Path) -> None:
    alice, bob = custodians
    rotated = copy_vault(sealed, tmp_path / "rotated")
    public_before = (rotated / "public.json").read_bytes()
    expected = vault.open_vault(rotated, alice.key).entries
    vault.rotate(rotated, alice.key, [bob.recipient])
    assert vault.open_vault(rotated, bob.key).entries == expected
    with pytest.raises(UserError, match="not a recipient"):
        vault.open_vault(rotated, alice.key)
    with pytest.raises(pyrage.DecryptError):  # not only our check: age itself no longer lets alice in
        pyrage.decrypt((rotated / "secret.age").read_bytes(), [x25519.Identity.from_str(alice.secret())])
    assert (rotated / "public.json").read_bytes() == public_before
    assert vault.inspect(rotated)["recipients"] == [bob.recipient]
    with pytest.raises(UserError, match="not a recipient"):
        vault.rotate(rotated, alice.key, [alice.recipient])  # the old key cannot take it back
    for blob in (p.read_bytes() for p in files_under(rotated)):
        assert alice.secret().encode() not in blob and bob.secret().encode() not in blob


def test_seal_refusals(sovereign_corpus: Path, custodians: list[Custodian], tmp_path: Path) -> None:
    rec = custodians[0].recipient
    with pytest.raises(UserError, match="unknown segment 'gold'"):
        vault.seal(sovereign_corpus, ["gold"], [rec], tmp_path / "a")
    with pytest.raises(UserError, match="at least one custodian"):
        vault.seal(sovereign_corpus, ["gold_standard"], [], tmp_path / "a")
    secret = custodians[0].secret()
    with pytest.raises(UserError, match="secret identity, not a recipient") as given:
        vault.seal(sovereign_corpus, ["gold_standard"], [secret], tmp_path / "a")
    assert secret not in str(given.value)  # the refusal does not print the key it was handed
    with pytest.raises(UserError, match="not an age X25519 recipient"):
        vault.seal(sovereign_corpus, ["gold_standard"], ["age1nothing"], tmp_path / "a")
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "x").write_text("x")
    with pytest.raises(UserError, match="not an empty folder"):
        vault.seal(sovereign_corpus, ["gold_standard"], [rec], tmp_path / "busy")
    example = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
    with pytest.raises(UserError, match="nothing to seal"):
        vault.seal(example, ["gold_standard"], [rec], tmp_path / "b")
    with pytest.raises(UserError, match="every entry would be secret"):
        vault.seal(example, ["development", "diagnostic"], [rec], tmp_path / "c")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
    assert os.listdir(tmp_path / "busy") == ["x"]


def test_cli_keygen_seal_inspect_rotate(sovereign_corpus: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mt_eval.cli import app

    runner = CliRunner()
    made = runner.invoke(app, ["vault", "keygen", "--out", str(tmp_path / "a.key")])
    assert made.exit_code == 0, made.output
    recipient = made.stdout.strip().splitlines()[-1]  # the contract: the recipient is the last line
    assert recipient.startswith("age1") and recipient in (tmp_path / "a.key").read_text()
    again = runner.invoke(app, ["vault", "keygen", "--out", str(tmp_path / "a.key")])
    assert again.exit_code == 2 and len(again.output.strip().splitlines()) == 1
    new = runner.invoke(app, ["vault", "keygen", "--out", str(tmp_path / "b.key")]).stdout.strip().splitlines()[-1]
    out = tmp_path / "v"
    sealed_cli = runner.invoke(app, ["vault", "seal", str(sovereign_corpus), "--segments", "gold_standard,held_out",
                                     "--recipient", recipient, "--out", str(out),
                                     "--governance", str(give_consent(tmp_path / "gov"))])  # fmt: skip
    assert sealed_cli.exit_code == 0 and "sealed 70 secret entries to 1 recipient(s)" in sealed_cli.output
    shown = runner.invoke(app, ["vault", "inspect", str(out), "--json"])
    info = json.loads(shown.stdout)
    assert shown.exit_code == 0 and info["intact"] and info["secret"]["segments"] == {"gold_standard": 50,
                                                                                      "held_out": 20}
    text = runner.invoke(app, ["vault", "inspect", str(out)]).stdout
    assert recipient in text and "files intact" in text
    assert not [s for s in secret_strings(sovereign_corpus) if s in text + shown.stdout]
    rotated = runner.invoke(app, ["vault", "rotate", str(out), "--identity", str(tmp_path / "a.key"),
                                  "--recipient", f"{new},{recipient}", "--governance", str(tmp_path / "gov")])
    assert rotated.exit_code == 0 and "and 0 stored full card(s) to 2 recipient(s)" in rotated.output, rotated.output
    assert len(vault.open_vault(out, tmp_path / "b.key").entries) == 200
    (out / "public.json").write_text((out / "public.json").read_text() + " ")
    broken = runner.invoke(app, ["vault", "inspect", str(out)])
    assert broken.exit_code == 1 and "public.json: tampered or damaged" in broken.output
    wrong = runner.invoke(app, ["vault", "rotate", str(out), "--identity", str(tmp_path / "a.key"), "-r", new,
                                "--governance", str(tmp_path / "gov")])
    assert wrong.exit_code == 2 and len(wrong.output.strip().splitlines()) == 1  # public.json was changed above

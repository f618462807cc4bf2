"""Custody by quorum: Shamir over GF(256), share files, quorum vaults, approvals, revoking a custodian.

References: an independently written GF(256) multiply (carry-less product reduced mod 0x11B, no
tables) and FIPS-197's worked products; hand-computed interpolation vectors; ``pyrage`` itself (a
rebuilt identity must decrypt what age encrypted to the recorded recipient); byte greps for the
identity in every file and log line written. No sandbox starts here (``test_custody_run`` does that).
"""

from __future__ import annotations

import fcntl
import hashlib
import itertools
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyrage
import pytest
import vault_fixtures
from pyrage import x25519
from typer.testing import CliRunner
from vault_fixtures import SECRET_SEGMENTS, copy_vault, files_under, give_consent

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.runcard.seal import seal as seal_card
from mt_eval.sovereign import custody, shamir, vault
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import load_full_card, store_full_card

sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed
BUNDLE, OTHER = "ab" * 32, "cd" * 32


def reference_mul(a: int, b: int) -> int:
    """GF(256) product without tables: carry-less multiply, then reduce by x^8+x^4+x^3+x+1."""
    product = 0
    for i in range(8):
        if b >> i & 1:
            product ^= a << i
    for bit in range(14, 7, -1):
        if product >> bit & 1:
            product ^= 0x11B << (bit - 8)
    return product


def reference_eval(coefficients: list[int], x: int) -> int:
    value, power = 0, 1
    for c in coefficients:
        value ^= reference_mul(c, power)
        power = reference_mul(power, x)
    return value


@pytest.fixture(scope="module")
def dealt(tmp_path_factory: pytest.TempPathFactory) -> tuple[custody.CustodyRecord, list[Path]]:
    """Five custodians' shares, any three of which open (keygen as the command runs it)."""
    out = tmp_path_factory.mktemp("custody") / "shares"
    record = custody.keygen(out, 5, 3)
    return record, [out / f"custodian-{i}.share" for i in range(1, 6)]


@pytest.fixture(scope="module")
def quorum_vault(tmp_path_factory: pytest.TempPathFactory, sovereign_corpus: Path,
                 dealt: tuple[custody.CustodyRecord, list[Path]]) -> Path:
    out = tmp_path_factory.mktemp("quorum") / "vault"
    record = dealt[0]
    vault.seal(sovereign_corpus, list(SECRET_SEGMENTS), [record.recipient], out, record.as_json())
    return out


def shares_of(paths: list[Path], ids: tuple[int, ...] | list[int]) -> list[custody.Share]:
    return [custody.read_share(paths[i - 1]) for i in ids]


def test_gf256_multiply_and_division_match_an_independent_reference() -> None:
    assert [(a, b) for a in range(256) for b in range(256) if shamir.mul(a, b) != reference_mul(a, b)] == []
    # FIPS-197 §4.2: {57}·{83} = {c1}, {57}·{13} = {fe}; {53} and {ca} are inverses
    assert (shamir.mul(0x57, 0x83), shamir.mul(0x57, 0x13), shamir.mul(0x53, 0xCA)) == (0xC1, 0xFE, 0x01)
    assert all(reference_mul(shamir.div(a, b), b) == a for a in range(256) for b in range(1, 256))


def test_lagrange_interpolation_at_zero_on_known_vectors() -> None:
    # f(x) = 0x53 + 0xCA·x: f(1) = 0x53 ^ 0xCA = 0x99; f(2) = 0x53 ^ xtime(0xCA) = 0x53 ^ 0x8F = 0xDC
    assert shamir.combine({1: b"\x99", 2: b"\xdc"}) == b"\x53"
    # f(x) = 0x2A + 0x11·x + 0x05·x², evaluated by the reference at points that are not 1..n
    coefficients = [0x2A, 0x11, 0x05]
    points = {x: bytes([reference_eval(coefficients, x)]) for x in (3, 7, 200, 255)}
    assert shamir.combine({x: points[x] for x in (3, 7, 200)}) == b"\x2a"
    assert shamir.combine(points) == b"\x2a"  # a fourth consistent point changes nothing
    assert shamir.combine({x: points[x] for x in (3, 7)}) != b"\x2a"  # two points fit another line
    secret = bytes(range(256))
    dealt = shamir.split(secret, range(1, 6), 3)
    assert all(shamir.combine({x: dealt[x] for x in xs}) == secret for xs in itertools.combinations(dealt, 3))


def test_keygen_writes_shares_and_record_never_the_identity(dealt: tuple[custody.CustodyRecord, list[Path]]) -> None:
    record, paths = dealt
    folder = paths[0].parent
    assert sorted(p.name for p in folder.iterdir()) == ["custodian-1.share", "custodian-2.share", "custodian-3.share",
                                                        "custodian-4.share", "custodian-5.share", "custody.json"]
    assert all(oct(p.stat().st_mode & 0o777) == "0o600" for p in paths)
    assert custody.read_record(folder / "custody.json") == record and record.threshold == 3
    identity = str(custody.reconstruct(shares_of(paths, (1, 2, 3)), record))
    body = identity.removeprefix("AGE-SECRET-KEY-1")
    blobs = [p.read_bytes() for p in folder.iterdir()]
    needles = [identity.encode(), body.encode(), body.lower().encode(), identity.encode().hex().encode()]
    assert not [n for n in needles for b in blobs if n in b]
    text = paths[1].read_text()
    assert f"recipient: {record.recipient}" in text and "share: 2" in text and "threshold: 3" in text
    before = {p: p.read_bytes() for p in folder.iterdir()}
    with pytest.raises(UserError, match="already exists; no share is overwritten"):
        custody.keygen(folder, 5, 3)
    assert {p: p.read_bytes() for p in folder.iterdir()} == before
    for shares, threshold in ((3, 1), (3, 4), (300, 2)):
        with pytest.raises(UserError, match="need 2 ≤ threshold ≤ shares ≤ 255"):
            custody.keygen(folder.parent / f"x{shares}{threshold}", shares, threshold)


def test_every_threshold_subset_opens_the_vault_and_fewer_shares_do_not(
        dealt: tuple[custody.CustodyRecord, list[Path]], quorum_vault: Path, sovereign_corpus: Path) -> None:
    record, paths = dealt
    sealed_to = x25519.Recipient.from_str(record.recipient)
    probe = pyrage.encrypt(b"probe", [sealed_to])
    full = None
    for ids in itertools.combinations(range(1, 6), 3):
        identity = custody.reconstruct(shares_of(paths, ids), record)
        assert str(identity.to_public()) == record.recipient
        assert pyrage.decrypt(probe, [identity]) == b"probe"  # age itself accepts the rebuilt key
        full = full or vault.open_vault(quorum_vault, [identity])
    assert full is not None and len(full.entries) == 200
    assert full.sha256 == vault.read_manifest(quorum_vault).corpus_sha256
    identity = str(custody.reconstruct(shares_of(paths, (1, 2, 3)), record)).encode()
    for pair in itertools.combinations(range(1, 6), 2):
        with pytest.raises(UserError, match="need 3 shares, got 2"):
            custody.reconstruct(shares_of(paths, pair), record)
        two = shares_of(paths, pair)
        assert shamir.combine({s.custodian: s.data for s in two}) != identity  # not refused by luck only


def test_mistyped_foreign_repeated_or_altered_shares_are_refused(
        dealt: tuple[custody.CustodyRecord, list[Path]], tmp_path: Path) -> None:
    record, paths = dealt
    lines = paths[0].read_text().splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("data: "))
    digit = lines[at][10]
    lines[at] = lines[at][:10] + ("0" if digit != "0" else "1") + lines[at][11:]
    mistyped = tmp_path / "mistyped.share"
    mistyped.write_text("\n".join(lines) + "\n")
    mistyped.chmod(0o600)
    with pytest.raises(UserError, match="checksum does not match") as caught:
        custody.read_share(mistyped)
    assert "\n" not in str(caught.value) and lines[at][6:] not in str(caught.value)

    other = custody.keygen(tmp_path / "other", 5, 3)
    foreign = custody.read_share(tmp_path / "other" / "custodian-4.share")
    with pytest.raises(UserError, match="a share of another split"):
        custody.reconstruct([*shares_of(paths, (1, 2)), foreign], record)
    with pytest.raises(UserError, match="shares of different splits cannot be combined"):
        custody.reconstruct([*shares_of(paths, (1, 2)), foreign])
    assert other.recipient != record.recipient
    with pytest.raises(UserError, match="custodian 2's share is given twice"):
        custody.reconstruct(shares_of(paths, (1, 2, 2)), record)

    # altered data with a valid checksum (someone who knows the format): the commitment catches it
    share = custody.read_share(paths[2])
    altered = custody.Share(share.recipient, share.split, share.custodian, share.threshold, share.count,
                            bytes([share.data[0] ^ 1]) + share.data[1:])
    assert custody.parse_share(altered.text(), "altered") == altered
    with pytest.raises(UserError, match="not the share committed for custodian 3"):
        custody.reconstruct([*shares_of(paths, (1, 2)), altered], record)
    with pytest.raises(UserError, match="do not rebuild the identity"):
        custody.reconstruct([*shares_of(paths, (1, 2)), altered])
    exposed = tmp_path / "exposed.share"
    exposed.write_text(paths[0].read_text())
    exposed.chmod(0o640)
    with pytest.raises(UserError, match="readable by others"):
        custody.read_share(exposed)
    with pytest.raises(UserError, match="not a custody share"):
        custody.parse_share("format: mt-eval custody share v1\n", "short")
    # the checksum as documented (16 hex digits of SHA-256 over the field lines) holds for a written share,
    # and a field that passes it but is not an ASCII number between 1 and 255 is still refused
    fields = custody.read_share(paths[0]).fields()
    body = "".join(f"{k}: {v}\n" for k, v in fields.items())
    assert f"checksum: {hashlib.sha256(body.encode()).hexdigest()[:16]}\n" in paths[0].read_text()
    for odd in ("²", "0", "256"):
        body = "".join(f"{k}: {v}\n" for k, v in {**fields, "share": odd}.items())
        with pytest.raises(UserError, match="malformed fields"):
            custody.parse_share(body + f"checksum: {hashlib.sha256(body.encode()).hexdigest()[:16]}\n", "odd")


def test_a_quorum_vault_refuses_an_identity_file(dealt: tuple[custody.CustodyRecord, list[Path]],
                                                  quorum_vault: Path, sovereign_corpus: Path, sealed: Path,
                                                  custodians: list[vault_fixtures.Custodian], tmp_path: Path) -> None:
    record, paths = dealt
    saved = tmp_path / "rebuilt.key"  # someone rebuilt the identity once and kept it: it must not suffice
    saved.write_text(str(custody.reconstruct(shares_of(paths, (2, 4, 5)), record)) + "\n")
    saved.chmod(0o600)
    with pytest.raises(UserError, match="held by a quorum of 3 custodians"):
        vault.open_vault(quorum_vault, saved)
    with pytest.raises(UserError, match="held by a quorum of 3 custodians"):
        vault.rotate(quorum_vault, saved, [custodians[0].recipient])
    with pytest.raises(UserError, match="held by a quorum of 3 custodians"):
        custody.gold_run_key(quorum_vault, saved, Governance(tmp_path / "gov"), BUNDLE, "gold_standard")
    info = vault.inspect(quorum_vault)
    assert info["custody"] == record.as_json() and info["recipients"] == [record.recipient]
    with pytest.raises(UserError, match="sealed to the custody record's recipient only"):
        vault.seal(sovereign_corpus, ["gold_standard"], [record.recipient, custodians[0].recipient],
                   tmp_path / "mixed", record.as_json())
    with pytest.raises(UserError, match="no custody record"):  # shares do not apply to a 1-of-N vault
        custody.gold_run_key(sealed, shares_of(paths, (1, 2, 3)), Governance(tmp_path / "gov"), BUNDLE,
                             "gold_standard")
    with pytest.raises(UserError, match="no custody record"):
        custody.approve(tmp_path / "gov", sealed, paths[0], BUNDLE, "gold_standard")


def test_approvals_gate_each_gold_run_and_each_serves_one_run(
        dealt: tuple[custody.CustodyRecord, list[Path]], quorum_vault: Path, tmp_path: Path) -> None:
    record, paths = dealt
    gov_dir = tmp_path / "gov"
    gov = Governance(gov_dir)
    shares = shares_of(paths, (3, 4, 5))  # the shares handed to the run need not be the approvers'

    def key() -> tuple[vault.VaultKey, dict[str, object]]:
        return custody.gold_run_key(quorum_vault, shares, gov, BUNDLE, "gold_standard")

    with pytest.raises(UserError, match="needs 3 custodians' approvals since its last run; has 0"):
        key()
    custody.approve(gov_dir, quorum_vault, paths[0], BUNDLE, "gold_standard", who="ana")
    custody.approve(gov_dir, quorum_vault, paths[0], BUNDLE, "gold_standard", who="ana again")  # still one
    custody.approve(gov_dir, quorum_vault, paths[1], BUNDLE, "gold_standard")
    custody.approve(gov_dir, quorum_vault, paths[2], OTHER, "gold_standard")  # another bundle's run
    custody.approve(gov_dir, quorum_vault, paths[2], BUNDLE, "held_out")  # another segment
    with pytest.raises(UserError, match=r"has 2 \(custodians 1, 2\)"):
        key()
    foreign = tmp_path / "other"
    custody.keygen(foreign, 5, 3)
    logged = len(gov.events())
    with pytest.raises(UserError, match="a share of another split"):
        custody.approve(gov_dir, quorum_vault, foreign / "custodian-3.share", BUNDLE, "gold_standard")
    with pytest.raises(UserError, match="'development' is not a sealed segment"):
        custody.approve(gov_dir, quorum_vault, paths[2], BUNDLE, "development")
    with pytest.raises(UserError, match="64 lowercase hex"):
        custody.approve(gov_dir, quorum_vault, paths[2], "acme-mt", "gold_standard")
    assert len(gov.events()) == logged  # refused approvals log nothing
    custody.approve(gov_dir, quorum_vault, paths[2], BUNDLE, "gold_standard")
    opened, facts = key()
    assert facts == {"custody": {"split": record.split, "approved_by": [1, 2, 3]}}
    assert len(vault.open_segment(quorum_vault, opened, "gold_standard").entries) == vault_fixtures.GOLD
    gov.record({"kind": "run", "bundle_sha256": BUNDLE, "method": "acme-mt", "segment": "gold_standard",
                "status": "ok", **facts})
    with pytest.raises(UserError, match="has 0"):  # the run consumed them
        key()
    assert gov.approvals(BUNDLE, "held_out", record.split) == {3}
    assert gov.approvals(OTHER, "gold_standard", record.split) == {3}
    approvals = [e for e in gov.events() if e["kind"] == "approve"]
    assert [e["custodian"] for e in approvals] == [1, 1, 2, 3, 3, 3]
    log = (gov_dir / "audit.jsonl").read_bytes()
    secrets = [s.data.hex().encode() for s in shares_of(paths, (1, 2, 3, 4, 5))]
    assert not [s for s in secrets if s in log] and b"AGE-SECRET-KEY" not in log


def test_revoking_a_custodian_re_seals_the_vault_and_the_stored_cards(
        dealt: tuple[custody.CustodyRecord, list[Path]], quorum_vault: Path, tmp_path: Path) -> None:
    record, paths = dealt
    work = copy_vault(quorum_vault, tmp_path / "vault")
    gov_dir = tmp_path / "gov"
    card = seal_card({"method": {"name": "acme-mt"}, "results": [{"source": "secret text"}], "scores": {}})
    store_full_card(card, work, gov_dir)
    old = custody.reconstruct(shares_of(paths, (1, 2, 3)), record)
    expected = vault.open_vault(work, [old]).entries
    runner = CliRunner()
    base = ["vault", "revoke-custodian", str(work), "--governance", str(gov_dir)]
    shares = [a for i in (1, 2, 3) for a in ("--share", str(paths[i - 1]))]
    refused = runner.invoke(app, [*base, "--custodian", "2", *shares, "--threshold", "5", "--out", str(tmp_path / "x")])
    assert refused.exit_code == 2 and "the new threshold must be between 2 and 4" in refused.output
    unknown = runner.invoke(app, [*base, "--custodian", "9", *shares, "--out", str(tmp_path / "x")])
    assert unknown.exit_code == 2 and "custodian 9 is not a custodian" in unknown.output
    few = runner.invoke(app, [*base, "--custodian", "2", *shares[:4], "--out", str(tmp_path / "x")])
    assert few.exit_code == 2 and "need 3 shares, got 2" in few.output
    assert not (tmp_path / "x").exists() and vault.read_manifest(work).manifest == vault.read_manifest(
        quorum_vault).manifest

    done = runner.invoke(app, [*base, "--custodian", "2", *shares, "--out", str(tmp_path / "new"), "--who", "board"])
    assert done.exit_code == 0, done.output
    new_record = custody.read_record(tmp_path / "new" / "custody.json")
    assert done.stdout.strip().splitlines()[-1] == new_record.recipient != record.recipient
    assert sorted(new_record.commitments) == [1, 3, 4, 5] and new_record.threshold == 3
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == [
        "custodian-1.share", "custodian-3.share", "custodian-4.share", "custodian-5.share", "custody.json"]
    new_paths = {i: tmp_path / "new" / f"custodian-{i}.share" for i in (1, 3, 4, 5)}
    new = custody.reconstruct([custody.read_share(new_paths[i]) for i in (3, 4, 5)], new_record)
    assert vault.open_vault(work, [new]).entries == expected
    assert vault.inspect(work)["custody"] == new_record.as_json()
    assert load_full_card(gov_dir, card["run_card_hash"], [new]) == card
    # the old identity (any old shares, the revoked custodian's included) opens neither vault nor card
    with pytest.raises(pyrage.DecryptError):
        pyrage.decrypt((work / "secret.age").read_bytes(), [old])
    with pytest.raises(UserError, match="not a recipient of this vault"):
        vault.open_vault(work, [old])
    with pytest.raises(UserError, match="not a recipient of this card"):
        load_full_card(gov_dir, card["run_card_hash"], [old])
    with pytest.raises(UserError, match="a share of another split"):
        custody.reconstruct([custody.read_share(paths[1]), *(custody.read_share(new_paths[i]) for i in (1, 3))],
                            new_record)
    with pytest.raises(UserError, match="a share of another split"):
        custody.approve(gov_dir, work, paths[1], BUNDLE, "gold_standard")
    event = Governance(gov_dir).events()[-1]
    assert {k: event[k] for k in ("kind", "custodian", "split", "new_split", "threshold", "custodians", "who")} == {
        "kind": "revoke_custodian", "custodian": 2, "split": record.split, "new_split": new_record.split,
        "threshold": 3, "custodians": [1, 3, 4, 5], "who": "board"}
    written = [p.read_bytes() for p in files_under(work, gov_dir)]
    for identity in (old, new):
        assert not [b for b in written if str(identity).encode() in b]


def test_cli_keygen_shares_seal_and_inspect(sovereign_corpus: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    made = runner.invoke(app, ["vault", "keygen", "--shares", "3", "--threshold", "2", "--out", str(tmp_path / "c")])
    assert made.exit_code == 0, made.output
    recipient = made.stdout.strip().splitlines()[-1]
    assert recipient == custody.read_record(tmp_path / "c" / "custody.json").recipient
    half = runner.invoke(app, ["vault", "keygen", "--shares", "3", "--out", str(tmp_path / "d")])
    assert half.exit_code == 2 and "--shares and --threshold go together" in half.output
    sealed_cli = runner.invoke(app, ["vault", "seal", str(sovereign_corpus), "--custody",
                                     str(tmp_path / "c" / "custody.json"), "--out", str(tmp_path / "v"),
                                     "--governance", str(give_consent(tmp_path / "gov"))])
    assert sealed_cli.exit_code == 0 and "to 1 recipient(s)" in sealed_cli.output, sealed_cli.output
    shown = runner.invoke(app, ["vault", "inspect", str(tmp_path / "v")])
    assert shown.exit_code == 0 and "custody: any 2 of custodians 1, 2, 3" in shown.stdout
    two = [custody.read_share(tmp_path / "c" / f"custodian-{i}.share") for i in (1, 3)]
    identity = custody.reconstruct(two, custody.record_of(vault.read_manifest(tmp_path / "v")))
    assert len(vault.open_vault(tmp_path / "v", [identity]).entries) == 200
    assert sorted(os.listdir(tmp_path / "c")) == [f"custodian-{i}.share" for i in (1, 2, 3)] + ["custody.json"]


def test_plain_rotation_of_a_quorum_vault_is_refused_before_any_card_changes(
        dealt: tuple[custody.CustodyRecord, list[Path]], quorum_vault: Path,
        custodians: list[vault_fixtures.Custodian], tmp_path: Path) -> None:
    record, paths = dealt
    work, gov_dir = copy_vault(quorum_vault, tmp_path / "vault"), tmp_path / "gov"
    card = seal_card({"method": {"name": "acme-mt"}, "results": [{"source": "secret text"}], "scores": {}})
    stored = store_full_card(card, work, gov_dir)
    before = stored.read_bytes()
    saved = tmp_path / "rebuilt.key"  # the identity, rebuilt once and kept: it opens the cards, not the vault
    old = custody.reconstruct(shares_of(paths, (1, 2, 3)), record)
    saved.write_text(f"{old}\n")
    saved.chmod(0o600)
    rotated = CliRunner().invoke(app, ["vault", "rotate", str(work), "--identity", str(saved), "--recipient",
                                       custodians[0].recipient, "--governance", str(gov_dir)])
    assert rotated.exit_code == 2 and "held by a quorum of 3 custodians" in rotated.output
    assert stored.read_bytes() == before and load_full_card(gov_dir, card["run_card_hash"], [old]) == card


def test_revoking_on_a_damaged_vault_changes_nothing(dealt: tuple[custody.CustodyRecord, list[Path]],
                                                     quorum_vault: Path, tmp_path: Path) -> None:
    paths = dealt[1]
    work, gov_dir = copy_vault(quorum_vault, tmp_path / "vault"), tmp_path / "gov"
    stored = store_full_card(seal_card({"method": {"name": "acme-mt"}, "results": [], "scores": {}}), work, gov_dir)
    before = stored.read_bytes()
    (work / "public.json").write_text((work / "public.json").read_text() + " ")
    with pytest.raises(UserError, match="tampered or damaged"):
        custody.revoke_custodian(work, 2, shares_of(paths, (1, 2, 3)), tmp_path / "new", gov_dir)
    assert stored.read_bytes() == before and not (tmp_path / "new").exists()
    assert not (gov_dir / "audit.jsonl").exists()


def _snapshot(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in files_under(root)}


@contextmanager
def _vault_held(folder: Path) -> Iterator[None]:
    """The vault folder's lock, held as a change in progress holds it (flock on the folder)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        yield
    finally:
        os.close(fd)


def test_key_rotation_and_revocation_wait_for_no_one_else_changing_the_vault(
        dealt: tuple[custody.CustodyRecord, list[Path]], quorum_vault: Path, sealed: Path,
        custodians: list[vault_fixtures.Custodian], tmp_path: Path) -> None:
    """Like a rotation of entries, a re-keying (``vault rotate``) and a custodian's revocation re-seal the vault
    from what they read: one running beside another change would overwrite it. Both are refused while the vault
    is held, and change nothing."""
    plain = copy_vault(sealed, tmp_path / "plain")
    before = _snapshot(plain)
    with _vault_held(plain), pytest.raises(UserError, match="another change of this vault is in progress"):
        vault.rotate(plain, custodians[0].key, [custodians[1].recipient])
    assert _snapshot(plain) == before
    work, gov_dir = copy_vault(quorum_vault, tmp_path / "vault"), tmp_path / "gov"
    before = _snapshot(work)
    with _vault_held(work), pytest.raises(UserError, match="another change of this vault is in progress"):
        custody.revoke_custodian(work, 2, shares_of(dealt[1], (1, 2, 3)), tmp_path / "new", gov_dir)
    assert _snapshot(work) == before and not (tmp_path / "new").exists()
    # not held: both go through
    vault.rotate(plain, custodians[0].key, [custodians[1].recipient])
    custody.revoke_custodian(work, 2, shares_of(dealt[1], (1, 2, 3)), tmp_path / "new", gov_dir)

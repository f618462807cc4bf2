"""Custody by quorum: a vault's identity split among N custodians, any M of whom can open the vault.

``keygen`` makes a fresh age X25519 identity and never writes it whole: it writes N share files
(``shamir``: any M rebuild it, fewer reveal nothing) and ``custody.json``, the public custody record
(the recipient, a random split id, M, and per share a commitment: the SHA-256 of that share). A vault
sealed with ``vault seal --custody custody.json`` carries the record in its manifest, and then

* it refuses a whole identity file (``vault``): only M shares, rebuilt in memory, open it. Otherwise
  anyone who once rebuilt the identity and saved it would make the quorum decorative;
* a gold run needs M distinct custodians' approvals of that bundle and segment in the audit log since
  its last run on them (``Governance.approvals``; each approval serves one run). A custodian approves by
  showing a share whose commitment the record holds, and is logged as that share's id, never its bytes:
  one share is one custodian however often it approves, and a share of another split approves nothing;
* revoking a custodian rebuilds the identity from M shares, makes a new one, deals it to the others
  (same ids, a new split) and re-encrypts the vault and the stored full cards: the old shares, the
  revoked one included, open neither any more (copies of the old files still open with them).

A share file is text (mode 0600): comment lines, then ``format``, ``recipient``, ``split``, ``share``
(the custodian's id: the point x of ``shamir``), ``threshold``, ``shares`` (N), ``data`` (hex) and
``checksum`` (16 hex digits of a SHA-256 over the other fields), so a mistyped share is refused with one
line instead of rebuilding a wrong key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyrage
from pyrage import x25519

from mt_eval.errors import UserError
from mt_eval.runcard.signing import read_small, regular_file
from mt_eval.sovereign import shamir
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import rotate_full_cards
from mt_eval.sovereign.vault import (
    SealedVault,
    VaultKey,
    held,
    open_vault,
    parse_recipient,
    read_manifest,
    reencrypt,
)

SHARE_FORMAT, RECORD_KIND, RECORD_FILE = "mt-eval custody share v1", "mt-eval custody", "custody.json"
FIELDS = ("format", "recipient", "split", "share", "threshold", "shares", "data")
_HEX = re.compile(r"(?:[0-9a-f]{2})+")
_SPLIT = re.compile(r"[0-9a-f]{32}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ID = re.compile(r"[1-9][0-9]{0,2}")  # ASCII digits only (str.isdigit takes "²", which int() refuses)
MAX_SHARE_BYTES = 4096


@dataclass(frozen=True)
class Share:
    """One custodian's share of a vault identity (``data`` is secret: never printed, never logged)."""

    recipient: str
    split: str
    custodian: int  # the share id, and the point x at which ``data`` evaluates the split's polynomials
    threshold: int
    count: int
    data: bytes = field(repr=False)
    source: str = field(default="", compare=False)  # the file it was read from, for messages

    def fields(self) -> dict[str, str]:
        return {"format": SHARE_FORMAT, "recipient": self.recipient, "split": self.split,
                "share": str(self.custodian), "threshold": str(self.threshold), "shares": str(self.count),
                "data": self.data.hex()}  # fmt: skip

    @property
    def commitment(self) -> str:
        """What the custody record keeps of this share: its SHA-256 (the data is uniformly random, so
        the hash reveals nothing, and only the holder of these bytes can match it)."""
        head = f"mt-eval custody commitment v1\0{self.split}\0{self.custodian}\0".encode()
        return hashlib.sha256(head + self.data).hexdigest()

    def text(self) -> str:
        fields = self.fields()
        return (f"# mt-eval custody share {self.custodian} of {self.count}: any {self.threshold} shares rebuild "
                "the vault identity, fewer reveal nothing.\n# Keep it like an age identity: owner-only, never in "
                "a repository, never on the machine that runs submissions.\n"
                + "".join(f"{k}: {v}\n" for k, v in fields.items()) + f"checksum: {_checksum(fields)}\n")


def _is_id(text: str) -> bool:
    """A share id, threshold or count: 1..255 (the points of GF(256) other than 0, which is the secret)."""
    return _ID.fullmatch(text) is not None and int(text) <= 255


def _checksum(fields: Mapping[str, str]) -> str:
    return hashlib.sha256("".join(f"{k}: {fields[k]}\n" for k in FIELDS).encode()).hexdigest()[:16]


def parse_share(text: str, where: str) -> Share:
    """A share file's text, checked field by field; ``UserError`` naming the file (never its data)."""
    raw: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(":")
        if not sep or key not in (*FIELDS, "checksum") or key in raw:
            raise UserError(f"line {n} is not one of a custody share's fields (or repeats one)", file=where)
        raw[key] = value.strip()
    missing = [k for k in (*FIELDS, "checksum") if k not in raw]
    if missing or raw["format"] != SHARE_FORMAT:
        raise UserError(f"not a custody share ({SHARE_FORMAT}; missing {', '.join(missing) or 'the format line'})",
                        file=where, hint="mt-eval vault keygen --shares N --threshold M writes them")
    if _checksum(raw) != raw["checksum"]:
        raise UserError("checksum does not match: the share was mistyped or damaged; refused", file=where)
    ok = (_SPLIT.fullmatch(raw["split"]) and _HEX.fullmatch(raw["data"])
          and all(_is_id(raw[k]) for k in ("share", "threshold", "shares")))  # fmt: skip
    if not ok or int(raw["threshold"]) > int(raw["shares"]):
        raise UserError("a custody share with malformed fields (split, share, threshold, shares or data)", file=where)
    parse_recipient(raw["recipient"])
    return Share(raw["recipient"], raw["split"], int(raw["share"]), int(raw["threshold"]), int(raw["shares"]),
                 bytes.fromhex(raw["data"]), where)


def read_share(path: Path) -> Share:
    """A share file: owner-only like an identity, small, well-formed."""
    path = Path(path)
    regular_file(path, "custody share")
    if os.name == "posix" and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserError("custody share is readable by others; refused", file=str(path), hint=f"chmod 600 {path}")
    try:
        text = read_small(path, "custody share", MAX_SHARE_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise UserError("not a custody share (not UTF-8 text)", file=str(path)) from None
    return parse_share(text, str(path))


# ---------------------------------------------------------------- the public custody record


@dataclass(frozen=True)
class CustodyRecord:
    """Who holds a vault: its recipient, the split, the threshold and each share's commitment (public)."""

    recipient: str
    split: str
    threshold: int
    commitments: Mapping[int, str]

    def as_json(self) -> dict[str, Any]:
        return {"kind": RECORD_KIND, "version": 1, "recipient": self.recipient, "split": self.split,
                "threshold": self.threshold, "commitments": {str(k): v for k, v in sorted(self.commitments.items())}}

    @classmethod
    def from_json(cls, data: Any, where: str) -> CustodyRecord:
        commitments = data.get("commitments") if isinstance(data, dict) else None
        ok = (isinstance(data, dict) and data.get("kind") == RECORD_KIND and data.get("version") == 1
              and isinstance(data.get("recipient"), str) and _SPLIT.fullmatch(str(data.get("split")))
              and isinstance(commitments, dict) and commitments
              and all(_is_id(k) and _SHA256.fullmatch(str(v)) for k, v in commitments.items())
              and type(data.get("threshold")) is int and 1 <= data["threshold"] <= len(commitments))  # fmt: skip
        if not ok:
            raise UserError(f"not a {RECORD_KIND} record, version 1 (recipient, split, threshold, commitments)",
                            file=where)
        assert isinstance(data, dict) and isinstance(commitments, dict)
        return cls(data["recipient"], data["split"], data["threshold"], {int(k): v for k, v in commitments.items()})


def read_record(path: Path) -> CustodyRecord:
    """``custody.json`` as ``keygen`` wrote it (``vault seal --custody`` reads it)."""
    try:
        data = json.loads(read_small(Path(path), "custody record"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("the custody record is not readable JSON", file=str(path)) from None
    return CustodyRecord.from_json(data, str(path))


def record_of(vault: SealedVault) -> CustodyRecord | None:
    """The vault's custody record (``None``: custodians' plain identities, any one of which opens it)."""
    custody = vault.manifest.get("custody")
    if custody is None:
        return None
    record = CustodyRecord.from_json(custody, str(vault.path / "vault.json"))
    if vault.recipients != [record.recipient]:
        raise UserError("the custody record's recipient is not the vault's only recipient; refused",
                        file=str(vault.path / "vault.json"))
    return record


def _quorum(vault: SealedVault) -> CustodyRecord:
    """The custody record of a vault that must have one (shares and approvals apply to no other)."""
    record = record_of(vault)
    if record is None:
        raise UserError("this vault has no custody record (it was sealed to plain custodian keys): shares and "
                        "approvals do not apply", file=str(vault.path), hint="open it with --identity")
    return record


# ---------------------------------------------------------------- dealing and rebuilding


def _deal(identity: x25519.Identity, ids: Sequence[int], threshold: int, out_dir: Path) -> CustodyRecord:
    """Split ``identity`` into shares for ``ids`` and write them and the record into ``out_dir``; nothing
    is written when any of the files exists already (a share is never overwritten)."""
    recipient, split_id = str(identity.to_public()), secrets.token_hex(16)
    points = shamir.split(str(identity).encode("ascii"), ids, threshold)
    shares = [Share(recipient, split_id, x, threshold, len(ids), points[x]) for x in ids]
    record = CustodyRecord(recipient, split_id, threshold, {s.custodian: s.commitment for s in shares})
    out_dir = Path(out_dir)
    files = [(out_dir / f"custodian-{s.custodian}.share", s.text(), 0o600) for s in shares]
    files.append((out_dir / RECORD_FILE, json.dumps(record.as_json(), indent=1) + "\n", 0o644))
    clash = [str(p) for p, _, _ in files if p.exists() or p.is_symlink()]
    if clash:
        raise UserError("already exists; no share is overwritten (nothing written)", file=clash[0])
    try:
        out_dir.mkdir(mode=0o700, exist_ok=True)
        for path, text, mode in files:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(text)
    except OSError as exc:
        raise UserError(f"cannot write the shares: {exc.strerror or exc}", file=str(out_dir)) from None
    return record


def keygen(out_dir: Path, shares: int, threshold: int) -> CustodyRecord:
    """A fresh age identity, never written whole: ``shares`` share files (``custodian-ID.share``, mode
    0600) of which any ``threshold`` rebuild it, and the public ``custody.json``."""
    if not 2 <= threshold <= shares <= 255:
        raise UserError(f"--shares {shares} --threshold {threshold}: need 2 ≤ threshold ≤ shares ≤ 255",
                        hint="a threshold of 1 hands every custodian the whole key: use vault keygen --out FILE")
    return _deal(x25519.Identity.generate(), range(1, shares + 1), threshold, out_dir)


def _check_share(share: Share, record: CustodyRecord) -> None:
    """``share`` is the one the record committed to for its custodian (else ``UserError``)."""
    where = share.source or "share"
    if share.split != record.split or share.recipient != record.recipient:
        raise UserError(f"a share of another split ({share.split[:8]}…), not of this vault's ({record.split[:8]}…); "
                        "refused", file=where)
    if share.custodian not in record.commitments:
        raise UserError(f"custodian {share.custodian} is not (or no longer) a custodian of this vault", file=where)
    if share.commitment != record.commitments[share.custodian]:
        raise UserError(f"not the share committed for custodian {share.custodian} (altered?); refused", file=where)


def reconstruct(shares: Sequence[Share], record: CustodyRecord | None = None) -> x25519.Identity:
    """The identity rebuilt in memory from ``shares`` (checked against ``record`` when given). Refused
    with one line: too few shares, one given twice, shares of different splits, an altered share."""
    if not shares:
        raise UserError("no custody share given (--share FILE, one per custodian)")
    first = shares[0]
    for share in shares:
        if record is not None:
            _check_share(share, record)
        elif (share.split, share.recipient) != (first.split, first.recipient):
            raise UserError("shares of different splits cannot be combined", file=share.source or None)
    ids = [s.custodian for s in shares]
    if len(set(ids)) != len(ids):
        twice = next(i for i in ids if ids.count(i) > 1)
        raise UserError(f"custodian {twice}'s share is given twice: a quorum needs distinct custodians")
    threshold = record.threshold if record is not None else first.threshold
    if len(shares) < threshold:
        raise UserError(f"need {threshold} shares, got {len(shares)}", hint="--share FILE, once per custodian")
    try:
        identity = x25519.Identity.from_str(shamir.combine({s.custodian: s.data for s in shares}).decode("ascii"))
    except (UnicodeDecodeError, ValueError, pyrage.IdentityError):
        identity = None
    if identity is None or str(identity.to_public()) != first.recipient:
        raise UserError("the shares do not rebuild the identity of their recipient (one was altered); refused")
    return identity


# ---------------------------------------------------------------- approvals and the gold run's key


def approve(governance_dir: Path, vault_dir: Path, share_path: Path, bundle_sha256: str, segment: str,
            who: str | None = None) -> tuple[int, str]:
    """Log a custodian's approval of one gold run of ``bundle_sha256`` on ``segment``: the custodian is
    the share's id, proved by the share matching the vault's commitment; returns (custodian, line hash)."""
    vault = read_manifest(vault_dir)
    record = _quorum(vault)
    if segment not in vault.manifest.get("secret_segments", []):
        raise UserError(f"{segment!r} is not a sealed segment of this vault "
                        f"(sealed: {', '.join(vault.manifest.get('secret_segments', []))})", file=str(vault.path))
    share = read_share(share_path)
    _check_share(share, record)
    digest = Governance(governance_dir).approve(bundle_sha256, segment, record.split, share.custodian, who)
    return share.custodian, digest


def gold_run_key(vault_dir: Path, identity: Path | Sequence[Share], gov: Governance, bundle_sha256: str,
                 segment: str) -> tuple[VaultKey, dict[str, Any]]:
    """What a gold run opens the vault with (an identity file, or the identity rebuilt from shares), and
    what its audit line records of the custody (which custodians' approvals it consumed)."""
    vault = read_manifest(vault_dir)
    if isinstance(identity, Path):
        record = record_of(vault)
        if record is not None and record.threshold > 1:
            raise UserError(f"this vault is held by a quorum of {record.threshold} custodians: an identity file "
                            "alone does not open it", file=str(vault.path), hint="give --share FILE per custodian")
        return identity, {}
    record = _quorum(vault)
    approved = gov.approvals(bundle_sha256, segment, record.split) & set(record.commitments)
    if len(approved) < record.threshold:
        raise UserError(f"a gold run of bundle {bundle_sha256[:12]}… on {segment} needs {record.threshold} "
                        f"custodians' approvals since its last run; has {len(approved)}"
                        + (f" (custodians {', '.join(map(str, sorted(approved)))})" if approved else ""),
                        hint=f"each custodian: mt-eval governance approve --vault {vault.path} --bundle "
                             f"{bundle_sha256} --segment {segment} --share FILE")
    key = reconstruct(identity, record)
    return [key], {"custody": {"split": record.split, "approved_by": sorted(approved)}}


def revoke_custodian(vault_dir: Path, custodian: int, shares: Sequence[Share], out_dir: Path,
                     governance_dir: Path, threshold: int | None = None, who: str | None = None) -> CustodyRecord:
    """Re-seal without ``custodian``: rebuild the identity from ``shares``, deal a new one to the other
    custodians (``threshold``: default the old one, at most their number) into ``out_dir``, re-encrypt
    the stored full cards and the vault to it, and log the revocation. Returns the new record."""
    vault = read_manifest(vault_dir)
    record = _quorum(vault)
    if custodian not in record.commitments:
        raise UserError(f"custodian {custodian} is not a custodian of this vault "
                        f"(custodians: {', '.join(map(str, sorted(record.commitments)))})", file=str(vault.path))
    remaining = sorted(set(record.commitments) - {custodian})
    new_threshold = threshold if threshold is not None else min(record.threshold, len(remaining))
    if not 2 <= new_threshold <= len(remaining):
        raise UserError(f"{len(remaining)} custodian(s) would remain: the new threshold must be between 2 and "
                        f"{len(remaining)} (got {new_threshold})", hint="a quorum needs at least two custodians")
    gov = Governance(governance_dir)
    with held(vault.path):  # no other change of this vault between reading it and re-sealing it
        gov.events()  # a broken audit log refuses before anything changes
        old = reconstruct(shares, record)
        open_vault(vault.path, [old])  # a damaged vault refuses here, before the new shares and the cards
        new = x25519.Identity.generate()
        new_record = _deal(new, remaining, new_threshold, out_dir)
        cards = rotate_full_cards(governance_dir, [old], [new_record.recipient])
        reencrypt(vault.path, [old], [new_record.recipient], custody=new_record.as_json())
        gov.record({"kind": "revoke_custodian", "custodian": custodian, "split": record.split,
                    "new_split": new_record.split, "threshold": new_threshold, "custodians": remaining,
                    "full_cards": cards, "who": who})  # fmt: skip
    return new_record


def identity_or_shares(identity: Path | None, share_paths: Sequence[Path]) -> Path | list[Share]:
    """A command's ``--identity FILE`` or its ``--share FILE`` list: exactly one of them."""
    if (identity is None) == (not share_paths):
        raise UserError("give either --identity FILE (a custodian's key) or --share FILE once per custodian "
                        "(a vault held by quorum), not both and not neither")
    return identity if identity is not None else [read_share(p) for p in share_paths]


def opening_key(identity: Path | None, share_paths: Sequence[Path]) -> VaultKey:
    """What opens the stored full cards: an identity file, or the identity rebuilt from the shares (checked
    against the recipient the shares name, since no vault record is at hand)."""
    given = identity_or_shares(identity, share_paths)
    return given if isinstance(given, Path) else [reconstruct(given)]

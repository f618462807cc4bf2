"""Ed25519 signatures: who vouches for a sealed run card, or for an exported file.

A card's ``run_card_hash`` proves only that nothing changed after sealing: anyone can edit a score
and reseal. A signature adds *who*: the holder of a private key signed exactly this hash.

Where signatures live: in a detached ``<card>.sig`` file beside the card, never on the card. The
spec's hash covers the whole card (``run_card_hash`` emptied), so a field on the card would change
the hash it signs, or need a second hashing rule every outside verifier would have to learn. Detached,
the card and its seal are byte for byte what they were; adding, stripping or replacing signatures
can never break the seal, and cards written before signatures existed need nothing.

Messages are domain-separated: a card signature signs ``CARD_CONTEXT + run_card_hash`` and a file
signature ``FILE_CONTEXT + sha256(bytes)``. Without the prefixes a card's signature would also be a
valid signature of a file holding the card's hashed text (its SHA-256 *is* the run_card_hash).

Key files: the private key is PKCS#8 PEM, written 0600 and never over an existing file, and refused
when group- or world-readable (as ssh does: a key others could read proves nothing); the public key
file is one line, ``mt-eval-ed25519 <base64 of the raw 32 bytes> [signer]``. A key's id is the first
16 hex digits of SHA-256 of its raw public key. The signer name on a signature is what the signer
*claims*; it is not signed. A store's key registry is what binds a key to a submitter.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import stat
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

# cryptography is the optional ``sign`` extra, imported where a key is used: reading a card without a ``.sig``
# beside it (``verify`` in the demo's base install) needs none of it, and a signed card asks for the extra.

from mt_eval.errors import UserError
from mt_eval.runcard.io import read_card_json, write_atomic
from mt_eval.runcard.seal import card_hash

CARD_CONTEXT = b"mt-eval run card signature v1\n"
FILE_CONTEXT = b"mt-eval file signature v1\n"
PUBLIC_PREFIX = "mt-eval-ed25519"
CARD_SIGNATURES_KIND = "mt-eval run card signatures"
FILE_SIGNATURE_KIND = "mt-eval file signature"
SUFFIX = ".sig"
MAX_SIG_FILE_BYTES = 1024 * 1024  # a few hundred signatures; anything larger is not ours
MAX_SIGNER = 200  # the store's column width
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")


def key_id(raw_public: bytes) -> str:
    """A key's id: the first 16 hex digits of SHA-256 of the raw 32-byte public key."""
    return hashlib.sha256(raw_public).hexdigest()[:16]


def card_message(run_card_hash: str) -> bytes:
    """What a card signature signs: the card context line, then the card's hash (64 hex digits)."""
    if not _HEX64.fullmatch(run_card_hash):
        raise UserError(f"not a run_card_hash (64 lowercase hex digits): {run_card_hash[:80]!r}")
    return CARD_CONTEXT + run_card_hash.encode("ascii")


def file_message(sha256: str) -> bytes:
    """What a file signature signs: the file context line, then the SHA-256 of the file's bytes."""
    return FILE_CONTEXT + sha256.encode("ascii")


def signature_path(path: str | Path) -> Path:
    """The detached signature file of ``path``: ``run_card.json`` → ``run_card.json.sig``."""
    p = Path(path)
    return p.with_name(p.name + SUFFIX)


def _b64(text: object, size: int, what: str, file: str | None, field: str | None = None) -> bytes:
    """Strict base64 of exactly ``size`` bytes (a truncated or padded-wrong value is refused)."""
    try:
        raw = base64.b64decode(str(text), validate=True) if isinstance(text, str) else b""
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise UserError(f"{what} is not base64 of {size} bytes", file=file, field=field)
    return raw


def _signer(value: object, file: str | None, field: str | None = None) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_SIGNER or not value.isprintable():
        raise UserError(f"a signer is a printable name of 1 to {MAX_SIGNER} characters", file=file, field=field)
    return value.strip()


@dataclass(frozen=True)
class PublicKey:
    """An Ed25519 public key (raw 32 bytes) and the signer name its file declares, if any."""

    raw: bytes
    signer: str | None = None

    @property
    def key_id(self) -> str:
        return key_id(self.raw)

    @property
    def b64(self) -> str:
        return base64.b64encode(self.raw).decode("ascii")

    def line(self) -> str:
        """The public key file's one line."""
        return " ".join(p for p in (PUBLIC_PREFIX, self.b64, self.signer) if p) + "\n"

    def verifies(self, signature: bytes, message: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

        try:
            Ed25519PublicKey.from_public_bytes(self.raw).verify(signature, message)
        except InvalidSignature:
            return False
        return True


def parse_public_key(text: str, *, file: str | None = None) -> PublicKey:
    """A public key line (``mt-eval-ed25519 <base64> [signer]``, or the bare base64)."""
    if "PRIVATE KEY" in text:
        raise UserError("this is a private key; give the public key (.pub) — never hand out the private key",
                        file=file)
    parts = text.strip().split(maxsplit=2)
    if parts and parts[0] == PUBLIC_PREFIX:
        parts = parts[1:]
    if not parts:
        raise UserError(f"not a public key (expected '{PUBLIC_PREFIX} <base64>')", file=file)
    raw = _b64(parts[0], 32, "the public key", file)
    return PublicKey(raw, _signer(parts[1] if len(parts) > 1 else None, file))


def read_public_key(path: str | Path) -> PublicKey:
    """The public key in the file at ``path``."""
    return parse_public_key(read_small(Path(path), "public key").decode("utf-8", "replace"), file=str(path))


def regular_file(path: Path, what: str) -> os.stat_result:
    """``path``'s status, provided it is a regular file (a FIFO or a device would block or never end)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise UserError(f"{what} file not found", file=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if stat.S_ISDIR(info.st_mode):
        raise UserError(f"is a directory, not a {what} file", file=str(path))
    if not stat.S_ISREG(info.st_mode):
        raise UserError(f"not a regular file, so not a {what} file", file=str(path))
    return info


def read_small(path: Path, what: str, limit: int = 64 * 1024) -> bytes:
    """The bytes of a key or signature file, refused when larger than ``limit``."""
    regular_file(path, what)
    try:
        with path.open("rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if len(data) > limit:
        raise UserError(f"too large to be a {what} file", file=str(path))
    return data


def read_private_key(path: str | Path) -> Ed25519PrivateKey:
    """The private key at ``path``: PKCS#8 PEM, unencrypted, Ed25519, readable by its owner only."""
    from cryptography.exceptions import UnsupportedAlgorithm
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    p = Path(path)
    data = read_small(p, "private key")
    if data.lstrip().startswith(PUBLIC_PREFIX.encode()) or b"PUBLIC KEY" in data:
        raise UserError("this is a public key; signing needs the private key (the .key file)", file=str(p))
    if os.name == "posix" and p.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserError("private key is readable by others; refused", file=str(p), hint=f"chmod 600 {p}")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except TypeError:
        raise UserError("the private key is encrypted; mt-eval reads unencrypted PKCS#8 keys (keys new)",
                        file=str(p)) from None
    except (ValueError, UnsupportedAlgorithm):
        raise UserError("not a PEM private key (make one with: mt-eval keys new)", file=str(p)) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise UserError(f"not an Ed25519 key ({type(key).__name__.removeprefix('_')}); mt-eval signs with Ed25519",
                        file=str(p))
    return key


def public_of(private: Ed25519PrivateKey, signer: str | None = None) -> PublicKey:
    from cryptography.hazmat.primitives import serialization

    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(raw, signer)


def public_path(private_path: str | Path) -> Path:
    """Where ``keys new`` puts the public key: ``alice.key`` → ``alice.pub``."""
    p = Path(private_path)
    return p.with_suffix(".pub") if p.suffix != ".pub" else p.with_name(p.name + ".pub")


def new_key(path: str | Path, signer: str | None = None) -> tuple[Path, Path, PublicKey]:
    """Make a key pair: the private key at ``path`` (0600, never over an existing file) and the
    public key beside it (``public_path``). Returns both paths and the public key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    p, pub_path = Path(path), public_path(path)
    signer = _signer(signer, None, "signer")
    for target in (p, pub_path):
        if target.exists():
            raise UserError("already exists; not overwritten (a key replaced by mistake is lost)", file=str(target))
        if not target.parent.is_dir():
            raise UserError("folder does not exist", file=str(target))
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = public_of(private, signer)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        try:
            with pub_path.open("x", encoding="utf-8") as fh:
                fh.write(public.line())
        except OSError:
            p.unlink()  # no private key without its public half: a retry must not find one
            raise
    except FileExistsError as exc:
        raise UserError("already exists; not overwritten", file=str(exc.filename)) from None
    except OSError as exc:
        raise UserError(f"cannot write the key: {exc.strerror or exc}", file=str(exc.filename or p)) from None
    return p, pub_path, public


def key_signer(private_path: str | Path) -> str | None:
    """The signer named in the public key file beside a private key (``keys new --signer``), if any."""
    pub = public_path(private_path)
    return read_public_key(pub).signer if pub.is_file() else None


@dataclass(frozen=True)
class Signature:
    """One signature as it is written in a ``.sig`` file (base64 values, ISO time)."""

    key_id: str
    public_key: str
    signature: str
    signer: str | None
    signed_at: str | None

    @property
    def public(self) -> PublicKey:
        return PublicKey(base64.b64decode(self.public_key), self.signer)

    def check(self, message: bytes) -> str | None:
        """``None`` when valid over ``message``; else why not."""
        public = self.public
        if public.key_id != self.key_id:
            return f"key id {self.key_id} is not the id of the public key beside it ({public.key_id})"
        if not public.verifies(base64.b64decode(self.signature), message):
            return "the signature does not match (forged, or made over another card)"
        return None

    def signed_time(self) -> datetime | None:
        return datetime.fromisoformat(self.signed_at) if self.signed_at else None


def make_signature(private: Ed25519PrivateKey, message: bytes, signer: str | None) -> Signature:
    public = public_of(private, signer)
    raw = private.sign(message)
    return Signature(public.key_id, public.b64, base64.b64encode(raw).decode("ascii"), signer,
                     datetime.now(UTC).isoformat(timespec="seconds"))


def parse_signature(item: object, file: str, field: str) -> Signature:
    """One signature object of a ``.sig`` file, every value checked (hostile files are refused here)."""
    if not isinstance(item, dict):
        raise UserError("a signature is a JSON object", file=file, field=field)
    kid = item.get("key_id")
    if not isinstance(kid, str) or not _HEX16.fullmatch(kid):
        raise UserError("key_id is not 16 lowercase hex digits", file=file, field=f"{field}.key_id")
    _b64(item.get("public_key"), 32, "public_key", file, f"{field}.public_key")
    _b64(item.get("signature"), 64, "signature", file, f"{field}.signature")
    signed_at = item.get("signed_at")
    if signed_at is not None:
        try:
            when = datetime.fromisoformat(str(signed_at))
        except ValueError:
            when = None
        if not isinstance(signed_at, str) or when is None or when.tzinfo is None:
            raise UserError("signed_at is not an ISO time with its zone", file=file, field=f"{field}.signed_at")
    return Signature(kid, str(item["public_key"]), str(item["signature"]),
                     _signer(item.get("signer"), file, f"{field}.signer"), signed_at)


def read_signature_json(path: Path, kind: str) -> dict[str, Any]:
    raw = read_small(path, "signature", MAX_SIG_FILE_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("not a signature file (not JSON)", file=str(path)) from None
    if not isinstance(data, dict) or data.get("kind") != kind or data.get("version") != 1:
        raise UserError(f"not a signature file of kind {kind!r}, version 1", file=str(path))
    return data


@dataclass(frozen=True)
class CardSignatures:
    """A card's ``.sig`` file: the hash it was made for, and its signatures."""

    run_card_hash: str
    signatures: list[Signature]


def read_card_signatures(card_path: str | Path) -> CardSignatures | None:
    """The signatures beside the card at ``card_path``; ``None`` when it has no ``.sig`` file."""
    path = signature_path(card_path)
    if not path.exists():
        return None
    data = read_signature_json(path, CARD_SIGNATURES_KIND)
    digest, items = data.get("run_card_hash"), data.get("signatures")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise UserError("run_card_hash is not 64 lowercase hex digits", file=str(path), field="run_card_hash")
    if not isinstance(items, list) or not items:
        raise UserError("signatures is not a non-empty list", file=str(path), field="signatures")
    sigs = [parse_signature(item, str(path), f"signatures[{i}]") for i, item in enumerate(items)]
    if len({s.key_id for s in sigs}) != len(sigs):
        raise UserError("a key signs a card once; the file repeats a key id", file=str(path), field="signatures")
    return CardSignatures(digest, sigs)


@dataclass(frozen=True)
class SignatureCheck:
    """One signature checked against a card: ``problem`` is ``None`` when it is valid."""

    signature: Signature
    problem: str | None

    @property
    def valid(self) -> bool:
        return self.problem is None


def check_card_signatures(card_path: str | Path, run_card_hash: object) -> list[SignatureCheck]:
    """Each signature beside the card, checked over the card's own ``run_card_hash`` (not the one the
    ``.sig`` file records: a stale file for an earlier card is invalid, whatever it says)."""
    found = read_card_signatures(card_path)
    if found is None:
        return []
    if not isinstance(run_card_hash, str) or not _HEX64.fullmatch(run_card_hash):
        return [SignatureCheck(s, "the card has no well-formed run_card_hash") for s in found.signatures]
    message = card_message(run_card_hash)
    stale = found.run_card_hash != run_card_hash
    return [SignatureCheck(s, f"the .sig file is for card {found.run_card_hash[:12]}…, not this one" if stale
                           else s.check(message)) for s in found.signatures]  # fmt: skip


def sign_card(card_path: str | Path, run_card_hash: str, private: Ed25519PrivateKey,
              signer: str | None) -> tuple[Signature, Path]:
    """Add a signature of ``run_card_hash`` to the card's ``.sig`` file (the same key's earlier one
    is replaced). The caller has checked that the hash is the card's seal."""
    message = card_message(run_card_hash)
    path = signature_path(card_path)
    found = read_card_signatures(card_path)
    mine = make_signature(private, message, signer)
    keep = [s for s in found.signatures if s.key_id != mine.key_id] if found is not None else []
    if found is not None and found.run_card_hash != run_card_hash:
        keep = []  # signatures of an earlier card say nothing about this one
    body = {"kind": CARD_SIGNATURES_KIND, "version": 1, "run_card_hash": run_card_hash,
            "signatures": [asdict(s) for s in [*keep, mine]]}  # fmt: skip
    write_atomic(path, (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return mine, path


def sign_card_file(card_path: str | Path, key_path: str | Path, signer: str | None = None) -> tuple[Signature, Path]:
    """``mt-eval sign``: sign the card at ``card_path`` with the private key at ``key_path``.

    Only a card whose seal holds is signed (a signature over a hash the card does not have would vouch
    for nothing); the signer defaults to the name in the public key file beside the key."""
    private = read_private_key(key_path)
    signer = _signer(signer, None, "signer") if signer is not None else key_signer(key_path)
    card = read_card_json(card_path)
    digest = card.get("run_card_hash")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise UserError("the card has no run_card_hash to sign (is it a sealed run card?)", file=str(card_path))
    if card_hash(card) != digest:
        raise UserError("the card's seal does not hold (changed after sealing); not signed", file=str(card_path),
                        hint="mt-eval verify names what changed")
    return sign_card(card_path, digest, private, signer)

"""The vault: a corpus's secret segments encrypted to custodians' age keys, its public rest in clear.

Benchmark Spec §2.3/§8: gold_standard and held_out entries (sources *and* references) stay secret.
``seal`` splits a corpus into

* ``public.json``: an ordinary corpus (spec envelope) holding only the entries that stay public. The
  secret entries are *dropped*, not blanked: ids, difficulty, register or notes of a secret entry are
  no one else's business, and a file with blanked texts would not load as a corpus (texts must not be
  empty), while this one works with every command (``sovereign preflight --corpus DIR/public.json``);
* ``secret.age``: age (X25519 recipients, via ``pyrage``) encryption of a JSON payload holding the
  secret entries as the loader validated them, the order of every entry id in the original corpus, and
  the SHA-256s of the original corpus and of ``public.json`` (so the clear half cannot be swapped
  without re-encrypting);
* ``vault.json``: the manifest: SHA-256 of both files, counts per segment, the recipients' *public*
  keys, the original corpus's SHA-256 (which run cards of the full dataset record as ``dataset.sha256``),
  and for a vault held by quorum its custody record (``custody``).

Custody: sealed to custodians' own identities (``keygen --out FILE`` each), any one identity file
opens the vault (1-of-N). Sealed with ``--custody`` to an identity split into shares and never written
whole (``custody.py``), it is M-of-N: ``check_custody`` refuses an identity *file* when M > 1, and only
the identity rebuilt in memory from M shares opens it (a gold run needs M custodians' approvals too).

``open_vault`` checks both files against the manifest, decrypts in memory only (nothing decrypted is
ever written) and returns the whole dataset as the original corpus loaded it. Why age rather than
AES-256-GCM: the recipient is a public key, so sealing needs no secret; the identity is the one
``age-keygen`` writes (so ``age -d`` opens a vault without mt-eval, given the identity: rebuilt from
shares for a quorum vault), and rotation is re-encryption to a new recipient list.

What the hashes do not prove: age is not signed, so someone who can write the vault directory and
knows the recipients' public keys can replace it wholesale with a consistent forgery; partial edits,
truncation and swapped halves are caught. The manifest is not signed either: deleting its custody record
lets an identity file in again, which only matters to someone who already holds the whole identity.
Rotation protects the new file only: a copy of the old ``secret.age`` still opens with the old key
(or the old shares).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

import pyrage
from pydantic import ValidationError
from pyrage import x25519

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Dataset, Entry, Segment
from mt_eval.errors import UserError
from mt_eval.runcard.signing import read_small, regular_file, write_atomic

MANIFEST, PUBLIC, SECRET = "vault.json", "public.json", "secret.age"
MANIFEST_KIND, PAYLOAD_KIND = "mt-eval vault", "mt-eval vault secret"
SECRET_PREFIX, RECIPIENT_PREFIX = "AGE-SECRET-KEY-1", "age1"
DEFAULT_SEGMENTS = (Segment.GOLD_STANDARD.value, Segment.HELD_OUT.value)
MAX_IDENTITY_BYTES = 64 * 1024

VaultKey: TypeAlias = Path | Sequence[x25519.Identity]
"""An identity file, or identities in memory (rebuilt from shares); ``public_card.CustodianIdentity``'s shape."""


@dataclass(frozen=True)
class SealedVault:
    """A vault directory as its manifest describes it (no texts: safe to print)."""

    path: Path
    manifest: dict[str, Any]

    @property
    def recipients(self) -> list[str]:
        return list(self.manifest["recipients"])

    @property
    def corpus_sha256(self) -> str:
        return str(self.manifest["corpus_sha256"])

    @property
    def secret_segments(self) -> dict[str, int]:
        return dict(self.manifest["secret"]["segments"])

    @property
    def public_segments(self) -> dict[str, int]:
        return dict(self.manifest["public"]["segments"])

    @property
    def quorum(self) -> int:
        """How many custodians it takes to open the vault (1: any recipient's identity file alone)."""
        custody = self.manifest.get("custody")
        return int(custody["threshold"]) if isinstance(custody, dict) else 1


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def json_bytes(value: Any) -> bytes:
    """The vault's one JSON form (its files' hashes, and a rotation's re-seal, depend on it)."""
    return (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode("utf-8")


# ---------------------------------------------------------------- keys


def keygen(out: Path) -> str:
    """Write a new age X25519 identity to ``out`` (mode 0600, never over an existing file), in the
    format ``age-keygen`` writes; return its public recipient (``age1…``)."""
    out = Path(out)
    if out.exists() or out.is_symlink():
        raise UserError("already exists; not overwritten (a lost identity cannot open its vaults)", file=str(out))
    if not out.parent.is_dir():
        raise UserError("folder does not exist", file=str(out))
    identity = x25519.Identity.generate()
    recipient = str(identity.to_public())
    when = datetime.now(UTC).isoformat(timespec="seconds")
    text = f"# created: {when}\n# public key: {recipient}\n{identity}\n"
    try:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(text)
    except FileExistsError:
        raise UserError("already exists; not overwritten", file=str(out)) from None
    except OSError as exc:
        raise UserError(f"cannot write the identity: {exc.strerror or exc}", file=str(out)) from None
    return recipient


def parse_recipient(text: str) -> x25519.Recipient:
    """An age X25519 recipient (``age1…``); a secret key given by mistake is refused without echoing it."""
    value = text.strip()
    if value.upper().startswith("AGE-SECRET-KEY"):
        raise UserError("this is a secret identity, not a recipient: give the public key (age1…) "
                        "that vault keygen printed; never hand out the identity")
    try:
        return x25519.Recipient.from_str(value)
    except (pyrage.RecipientError, ValueError):
        raise UserError(f"not an age X25519 recipient: {value[:80]!r} (expected age1…)") from None


def parse_recipients(values: Iterable[str]) -> list[x25519.Recipient]:
    """Recipients given as repeated options and/or comma-separated (``--recipient age1a,age1b``)."""
    return [parse_recipient(v) for value in values for v in value.replace(",", " ").split()]


def read_identities(path: Path) -> list[x25519.Identity]:
    """The identities in an age identity file: readable by its owner only, like an ssh key."""
    path = Path(path)
    regular_file(path, "identity")
    if os.name == "posix" and path.stat().st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserError("identity is readable by others; refused", file=str(path), hint=f"chmod 600 {path}")
    data = read_small(path, "age identity", MAX_IDENTITY_BYTES)
    lines = [ln.strip() for ln in data.decode("utf-8", "replace").splitlines()]
    keys = [ln for ln in lines if ln and not ln.startswith("#")]
    if not keys or any(not k.startswith(SECRET_PREFIX) for k in keys):
        raise UserError("not an age identity file (expected AGE-SECRET-KEY-1… lines; make one with: "
                        "mt-eval vault keygen --out KEYFILE)", file=str(path))
    try:
        return [x25519.Identity.from_str(k) for k in keys]
    except (pyrage.IdentityError, ValueError):
        raise UserError("the identity file holds a malformed AGE-SECRET-KEY", file=str(path)) from None


def identities(key: VaultKey) -> list[x25519.Identity]:
    """The identities ``key`` stands for: those of an identity file, or those held in memory."""
    return read_identities(key) if isinstance(key, Path) else list(key)


# ---------------------------------------------------------------- sealing


def _segments(names: Iterable[str]) -> list[str]:
    allowed = [s.value for s in Segment]
    chosen = []
    for name in names:
        if name not in allowed:
            raise UserError(f"--segments: unknown segment {name!r} (allowed: {', '.join(allowed)})")
        chosen.append(name)
    if not chosen:
        raise UserError("--segments: name at least one segment to seal (e.g. gold_standard,held_out)")
    return sorted(set(chosen))


def segment_counts(entries: Iterable[Entry]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.segment.value] = counts.get(e.segment.value, 0) + 1
    return dict(sorted(counts.items()))


def entry_json(entry: Entry) -> dict[str, Any]:
    return entry.model_dump(mode="json", exclude_defaults=True)


def seal(corpus: Path, segments: Sequence[str], recipients: Sequence[str], out: Path,
         custody: Mapping[str, Any] | None = None) -> SealedVault:
    """Seal ``corpus``'s ``segments`` into the vault directory ``out`` (created; refused when it already
    holds a vault or anything else), encrypted to every one of ``recipients``; with a ``custody`` record
    (``custody.CustodyRecord.as_json``), to its recipient alone, which the record's quorum holds."""
    chosen = _segments(segments)
    keys = parse_recipients(recipients)
    if not keys:
        raise UserError("--recipient: give at least one custodian's public key (age1…)",
                        hint="mt-eval vault keygen --out custodian.key prints one")
    if custody is not None and [str(k) for k in keys] != [custody["recipient"]]:
        raise UserError("a vault held by quorum is sealed to the custody record's recipient only (another "
                        "recipient's identity alone would open it)", field="--recipient")
    dataset = load_corpus(corpus)
    secret = [e for e in dataset.entries if e.segment.value in chosen]
    public = [e for e in dataset.entries if e.segment.value not in chosen]
    if not secret:
        raise UserError(f"no entry is in {', '.join(chosen)}: nothing to seal", file=str(corpus),
                        hint=f"the corpus's segments: {', '.join(segment_counts(dataset.entries))}")
    if not public:
        raise UserError("every entry would be secret: the public corpus would be empty, and preflight needs "
                        "a public development segment", file=str(corpus))
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UserError("exists and is not an empty folder; a vault is never written over", file=str(out))
    out.mkdir(parents=True, exist_ok=True)
    public_bytes = json_bytes({"dataset": dataset.info.model_dump(mode="json", exclude_none=True),
                                "entries": [entry_json(e) for e in public]})  # fmt: skip
    payload = {"kind": PAYLOAD_KIND, "version": 1, "corpus_sha256": dataset.sha256,
               "public_sha256": _sha256(public_bytes), "order": [e.id for e in dataset.entries],
               "entries": [entry_json(e) for e in secret]}  # fmt: skip
    secret_bytes = pyrage.encrypt(json_bytes(payload), keys)
    manifest = {
        "kind": MANIFEST_KIND, "version": 1, "dataset_id": dataset.info.id, "corpus_sha256": dataset.sha256,
        "corpus_file": Path(corpus).name, "sealed_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "recipients": [str(k) for k in keys], "secret_segments": chosen,
        **({"custody": dict(custody)} if custody is not None else {}),
        "public": {"file": PUBLIC, "sha256": _sha256(public_bytes), "entries": len(public),
                   "segments": segment_counts(public)},
        "secret": {"file": SECRET, "sha256": _sha256(secret_bytes), "entries": len(secret),
                   "segments": segment_counts(secret)},
    }  # fmt: skip
    write_atomic(out / SECRET, secret_bytes)
    write_atomic(out / PUBLIC, public_bytes)
    write_atomic(out / MANIFEST, json_bytes(manifest))  # last: a vault without its manifest is unfinished
    return SealedVault(out, manifest)


# ---------------------------------------------------------------- opening


def read_manifest(vault_dir: Path) -> SealedVault:
    """The vault at ``vault_dir`` (its manifest, checked for shape; no decryption)."""
    vault_dir = Path(vault_dir)
    path = vault_dir / MANIFEST
    if not vault_dir.is_dir():
        raise UserError("not a vault folder (no such folder)", file=str(vault_dir))
    if not path.is_file():
        raise UserError(f"not a vault: no {MANIFEST}", file=str(vault_dir), hint="make one with: mt-eval vault seal")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("the vault manifest is not readable JSON (damaged?)", file=str(path)) from None
    ok = (isinstance(data, dict) and data.get("kind") == MANIFEST_KIND and data.get("version") == 1
          and all(isinstance(data.get(k), dict) and isinstance(data[k].get("sha256"), str)
                  and isinstance(data[k].get("segments"), dict) for k in ("public", "secret"))
          and isinstance(data.get("recipients"), list) and isinstance(data.get("corpus_sha256"), str)
          and ("custody" not in data or (isinstance(data["custody"], dict)
                                         and type(data["custody"].get("threshold")) is int)))  # fmt: skip
    if not ok:
        raise UserError(f"not a {MANIFEST_KIND} manifest, version 1", file=str(path))
    return SealedVault(vault_dir, data)


def _checked(vault: SealedVault, part: str) -> bytes:
    """The bytes of ``part`` (public or secret), refused when they are not the manifest's."""
    path = vault.path / (PUBLIC if part == "public" else SECRET)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError("missing from the vault", file=str(path)) from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    if _sha256(data) != vault.manifest[part]["sha256"]:
        raise UserError("tampered or damaged: its sha256 is not the vault manifest's; refused", file=str(path))
    return data


def check_custody(vault: SealedVault, identity: VaultKey) -> None:
    """Refuse an identity *file* for a vault held by a quorum of more than one (else the quorum is decorative:
    whoever once rebuilt the identity and saved it would open the vault alone)."""
    if isinstance(identity, Path) and vault.quorum > 1:
        raise UserError(f"this vault is held by a quorum of {vault.quorum} custodians: an identity file alone "
                        "does not open it", file=str(vault.path), hint="give --share FILE once per custodian")


def _decrypt(vault: SealedVault, identity: VaultKey) -> dict[str, Any]:
    """The secret payload, decrypted in memory and checked against the manifest and ``public.json``."""
    check_custody(vault, identity)
    keys = identities(identity)
    public_bytes, secret_bytes = _checked(vault, "public"), _checked(vault, "secret")
    where = str(vault.path / SECRET)
    name = f"identity {identity.name}" if isinstance(identity, Path) else "the identity rebuilt from the shares"
    try:
        clear = pyrage.decrypt(secret_bytes, keys)
    except pyrage.DecryptError as exc:
        if "no matching keys" in str(exc).lower():
            raise UserError(f"{name} is not a recipient of this vault (wrong key)",
                            file=where, hint="mt-eval vault inspect lists its recipients") from None
        raise UserError("cannot be decrypted: damaged or tampered", file=where) from None
    try:
        payload = json.loads(clear)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("decrypts to something that is not a vault payload; refused", file=where) from None
    ok = (isinstance(payload, dict) and payload.get("kind") == PAYLOAD_KIND and payload.get("version") == 1
          and isinstance(payload.get("entries"), list) and isinstance(payload.get("order"), list))  # fmt: skip
    if not ok:
        raise UserError("decrypts to something that is not a vault payload; refused", file=where)
    if payload.get("public_sha256") != _sha256(public_bytes) or payload.get("corpus_sha256") != vault.corpus_sha256:
        raise UserError("the encrypted half does not belong with this public.json and manifest (swapped?); refused",
                        file=where)
    return payload


def _secret_entries(payload: dict[str, Any], where: str) -> list[Entry]:
    entries = []
    for i, item in enumerate(payload["entries"]):
        try:
            entries.append(Entry.model_validate(item))
        except ValidationError:  # never echo the entry: its texts are secret
            raise UserError(f"secret entry at position {i + 1} is not a valid entry; refused", file=where) from None
    return entries


def open_vault(vault_dir: Path, identity: VaultKey) -> Dataset:
    """The whole dataset (public and secret entries, in the original corpus's order), in memory only.

    Its ``sha256`` is the original corpus's, so a card of the full dataset pins that corpus."""
    vault = read_manifest(vault_dir)
    payload = _decrypt(vault, identity)
    public = load_corpus(vault.path / PUBLIC)
    secret = _secret_entries(payload, str(vault.path / SECRET))
    by_id = {e.id: e for e in public.entries}
    clash = [e.id for e in secret if e.id in by_id]
    by_id.update((e.id, e) for e in secret)
    order = payload["order"]
    if clash or len(by_id) != len(public.entries) + len(secret) or sorted(order) != sorted(by_id):
        raise UserError("the vault's entry ids do not add up to the sealed corpus; refused", file=str(vault.path))
    return Dataset(info=public.info, entries=[by_id[i] for i in order], sha256=vault.corpus_sha256,
                   path=str(vault.path))


def open_segment(vault_dir: Path, identity: VaultKey, segment: str) -> Dataset:
    """Only ``segment``'s entries of the vault (``UserError`` when it has none)."""
    (name,) = _segments([segment])
    full = open_vault(vault_dir, identity)
    entries = [e for e in full.entries if e.segment.value == name]
    if not entries:
        raise UserError(f"the vault has no {name} entries", file=str(vault_dir),
                        hint="mt-eval vault inspect lists its segments")
    return full.model_copy(update={"entries": entries})


def rotate(vault_dir: Path, identity: VaultKey, new_recipients: Sequence[str],
           custody: Mapping[str, Any] | None = None) -> SealedVault:
    """Re-encrypt the secret half to ``new_recipients`` (opened with ``identity``, one of the current
    recipients). The public half is untouched; the manifest records the new recipients and hash, and
    ``custody`` as the custody record (``None``: none, the new recipients are plain custodians)."""
    read_manifest(vault_dir)  # a missing folder or manifest is named before the lock is tried
    with held(Path(vault_dir)):
        return reencrypt(vault_dir, identity, new_recipients, custody)


def reencrypt(vault_dir: Path, identity: VaultKey, new_recipients: Sequence[str],
              custody: Mapping[str, Any] | None = None) -> SealedVault:
    """``rotate`` for a caller that already holds the vault (``held``): a custodian's revocation."""
    keys = parse_recipients(new_recipients)
    if not keys:
        raise UserError("--recipient: give at least one new recipient (age1…)")
    vault = read_manifest(vault_dir)
    payload = _decrypt(vault, identity)
    secret_bytes = pyrage.encrypt(json_bytes(payload), keys)
    manifest = dict(vault.manifest)
    manifest["recipients"] = [str(k) for k in keys]
    manifest.pop("custody", None)
    if custody is not None:
        if manifest["recipients"] != [custody["recipient"]]:
            raise UserError("a vault held by quorum is encrypted to the custody record's recipient only")
        manifest["custody"] = dict(custody)
    manifest["secret"] = {**manifest["secret"], "sha256": _sha256(secret_bytes)}
    manifest["rotated_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    # The manifest goes first: a crash between the two writes leaves a vault that refuses to open
    # (hash mismatch) rather than one whose manifest names recipients that cannot open it.
    write_atomic(vault.path / MANIFEST, json_bytes(manifest))
    write_atomic(vault.path / SECRET, secret_bytes)
    return SealedVault(vault.path, manifest)


@contextmanager
def held(vault_dir: Path) -> Iterator[None]:
    """The vault folder's lock (flock on the folder itself: its inode survives the files' atomic
    replacement), held by every change that re-seals the vault from what it read (entries rotated, a re-keying,
    a custodian revoked), so two never both write; the second is refused, not queued."""
    try:
        fd = os.open(vault_dir, os.O_RDONLY)
    except OSError as exc:
        raise UserError(f"cannot open the vault folder: {exc.strerror or exc}", file=str(vault_dir)) from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UserError("another change of this vault is in progress; try again when it has finished",
                            file=str(vault_dir)) from None
        yield
    finally:
        os.close(fd)


def inspect(vault_dir: Path) -> dict[str, Any]:
    """What may be shown about a vault without a key: counts, recipients, hashes (never a text)."""
    vault = read_manifest(vault_dir)
    problems = []
    for part in ("public", "secret"):
        try:
            _checked(vault, part)
        except UserError as exc:
            problems.append(exc.one_line())
    keep = ("dataset_id", "corpus_sha256", "sealed_at", "rotated_at", "recipients", "secret_segments",
            "custody", "public", "secret", "sealed_corpus_sha256", "entries_rotated_at")  # fmt: skip
    return {**{k: vault.manifest[k] for k in keep if k in vault.manifest}, "path": str(vault.path),
            "intact": not problems, "problems": problems}

"""Who submits: registered submitter keys, and submissions signed with them.

A submission is a bundle signed by its submitter with an Ed25519 key (``mt-eval keys new``;
``runcard/signing.py``): the signature is over ``SUBMISSION_CONTEXT + bundle sha256``, a message no card
or file signature can be (their context lines differ), so a signature made for one can never be
replayed as another. It is a detached JSON file (``submission sign`` writes ``BUNDLE.sig`` beside the
directory or archive, or ``--out``): the bundle's files, and so its sha256, are what was signed.

Governance registers submitter keys in its hash-chained audit log (``submitter_add`` and
``submitter_revoke`` events; a key is known by its **fingerprint**, the SHA-256 of its raw 32 bytes,
all 64 digits). ``sovereign preflight`` and ``sovereign run`` accept a bundle only with a valid
signature by a registered, unrevoked key (:func:`verify_submission`); their audit events record the
key, and the gold-run budget counts submissions per key (``Governance.check_allowed``), not per
method name, so renaming a bundle buys nothing. A second key is a second budget: sybils are bounded
by whom governance registers (decisions §48).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import asdict, dataclass
from pathlib import Path

from mt_eval.errors import UserError
from mt_eval.runcard.io import write_atomic
from mt_eval.runcard.signing import (
    PublicKey,
    Signature,
    key_signer,
    make_signature,
    parse_public_key,
    parse_signature,
    read_private_key,
    read_public_key,
    read_signature_json,
    signature_path,
)
from mt_eval.sovereign.bundle import Bundle
from mt_eval.sovereign.governance import Governance

SUBMISSION_CONTEXT = b"mt-eval sovereign submission signature v1\n"
SIGNATURE_KIND = "mt-eval sovereign submission signature"
_HEX64 = re.compile(r"[0-9a-f]{64}")
_NAME = re.compile(r"[\w.@+\-]{1,100}")


def submission_message(bundle_sha256: str) -> bytes:
    """What a submission signature signs: the submission context line, then the bundle's sha256."""
    if not _HEX64.fullmatch(bundle_sha256):
        raise UserError(f"not a bundle sha256 (64 lowercase hex digits): {bundle_sha256[:80]!r}")
    return SUBMISSION_CONTEXT + bundle_sha256.encode("ascii")


def fingerprint(public: PublicKey) -> str:
    """A submitter key's identity in the log: SHA-256 of the raw public key (all 64 hex digits)."""
    return hashlib.sha256(public.raw).hexdigest()


def default_signature(bundle_path: str | Path) -> Path:
    """Where a bundle's submission signature is looked for: ``bundles/acme`` → ``bundles/acme.sig``."""
    return signature_path(Path(bundle_path))


@dataclass(frozen=True)
class Submitter:
    """A registered submitter key, as the audit log stands."""

    name: str
    key: str  # fingerprint()
    public_key: str  # base64 of the raw 32 bytes
    revoked: str | None = None  # the reason, when revoked


def sign_submission(bundle: Bundle, bundle_path: str | Path, key_path: str | Path, out: Path | None = None,
                    signer: str | None = None) -> tuple[Path, Signature]:
    """``submission sign``: the detached signature of ``bundle`` by the key at ``key_path``, written to
    ``out`` (default beside the bundle). The signer defaults to the name in the key's ``.pub`` file."""
    private = read_private_key(key_path)
    signature = make_signature(private, submission_message(bundle.sha256), signer or key_signer(key_path))
    path = out or default_signature(bundle_path)
    body = {"kind": SIGNATURE_KIND, "version": 1, "bundle_sha256": bundle.sha256, "signature": asdict(signature)}
    write_atomic(path, (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return path, signature


def read_submission_signature(path: Path) -> tuple[str, Signature]:
    """The bundle sha256 a submission signature file names, and its signature (every value checked)."""
    data = read_signature_json(path, SIGNATURE_KIND)
    digest = data.get("bundle_sha256")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
        raise UserError("bundle_sha256 is not 64 lowercase hex digits", file=str(path), field="bundle_sha256")
    return digest, parse_signature(data.get("signature"), str(path), "signature")


# ---------------------------------------------------------------- the registry (events of the audit log)


def submitters(gov: Governance) -> dict[str, Submitter]:
    """Every submitter key ever registered, by fingerprint, revoked or not, as the verified log stands."""
    out: dict[str, Submitter] = {}
    for ev in gov.events():
        key = str(ev.get("submitter_key"))
        if ev.get("kind") == "submitter_add":
            out[key] = Submitter(str(ev.get("submitter")), key, str(ev.get("public_key")))
        elif ev.get("kind") == "submitter_revoke" and key in out:
            out[key] = Submitter(out[key].name, key, out[key].public_key, str(ev.get("reason") or "no reason given"))
    return out


def public_key_from(value: str) -> PublicKey:
    """``--public-key``: a ``.pub`` file (``keys new``) or the key line itself."""
    path = Path(value)
    if len(value) < 4096 and path.exists():
        return read_public_key(path)
    return parse_public_key(value, file="--public-key")


def add_submitter(gov: Governance, name: str, public: PublicKey, who: str | None = None) -> Submitter:
    """Register ``public`` as submitter ``name``. Refused: a name that is not a plain identifier, a key
    or name already active (a key re-added after its revocation is registered again, logged)."""
    if not _NAME.fullmatch(name):
        raise UserError(f"submitter name {name[:40]!r} is not 1-100 letters, digits or . @ + - _")
    key = fingerprint(public)
    for s in submitters(gov).values():
        if s.revoked is None and (s.key == key or s.name == name):
            what = "this key" if s.key == key else f"the name {name!r}"
            raise UserError(f"{what} is already registered (submitter {s.name!r}, key {s.key[:12]}…)",
                            hint="one key per submitter: revoke the old one first (governance submitter revoke)")
    gov.record({"kind": "submitter_add", "submitter": name, "submitter_key": key, "public_key": public.b64,
                "who": who})
    return Submitter(name, key, public.b64)


def revoke_submitter(gov: Governance, name_or_key: str, reason: str, who: str | None = None) -> Submitter:
    """Revoke an active submitter (by name or key fingerprint, 12+ digits): no further preflight or run."""
    target = name_or_key.strip()
    active = [s for s in submitters(gov).values() if s.revoked is None
              and (s.name == target or (len(target) >= 12 and s.key.startswith(target)))]
    if len(active) != 1 or not reason.strip():
        why = "a reason is needed" if active and not reason.strip() else \
            f"no active submitter {target!r}" if not active else f"{target!r} names {len(active)} submitters"
        raise UserError(f"cannot revoke: {why}", hint="mt-eval governance submitter list")
    gov.record({"kind": "submitter_revoke", "submitter": active[0].name, "submitter_key": active[0].key,
                "reason": reason.strip(), "who": who})
    return Submitter(active[0].name, active[0].key, active[0].public_key, reason.strip())


def verify_submission(gov: Governance, bundle: Bundle, signature: Path) -> Submitter:
    """The registered, unrevoked submitter whose valid signature of ``bundle``'s sha256 is at
    ``signature``; ``UserError`` (one line, how to fix) otherwise. Nothing runs without it."""
    hint_sign = "mt-eval submission sign BUNDLE --key YOUR.key (after any change to the bundle)"
    if not signature.exists():
        raise UserError("the submission is not signed: no signature file", file=str(signature), hint=hint_sign)
    digest, sig = read_submission_signature(signature)
    if digest != bundle.sha256:
        raise UserError(f"the signature is for bundle {digest[:12]}…, not this one ({bundle.sha256[:12]}…)",
                        file=str(signature), hint=hint_sign)
    problem = sig.check(submission_message(bundle.sha256))
    if problem is not None:
        raise UserError(f"the submission signature is not valid: {problem}", file=str(signature), hint=hint_sign)
    key = fingerprint(sig.public)
    found = submitters(gov).get(key)
    if found is None:
        raise UserError(f"the signing key {key[:12]}… is not a registered submitter key", file=str(signature),
                        hint="governance registers it: mt-eval governance submitter add NAME --public-key KEY.pub "
                             f"--governance {shlex.quote(str(gov.dir))}")  # a contest's own folder, not the default
    if found.revoked is not None:
        raise UserError(f"submitter {found.name!r} (key {key[:12]}…) was revoked ({found.revoked})",
                        file=str(signature), hint="governance may register a new key for the submitter")
    return found

"""Contest entries: submission and custodian approval (qualify and execute: ``contest/execution.py``).

An entry is a sandboxed **bundle** (``sovereign/bundle.py``: method.toml and its code, run only in bubblewrap)
or a weights-only **model** (``contest/model_bundle.py``: a seq2seq checkpoint run with no submitted
code). ``submit_entry`` checks it exactly as ``sovereign preflight`` / the model checker do, within the manifest's
``max_artefact_mb``, copies it into ``ROOT/entries/<n>/artefact`` (so what runs later is what was checked: its
sha256 is re-checked before every use) and records ``contest.submit``. The CLI and the web form call this one
function (no second checker).

Who submits. A bundle runs only when signed by a registered submitter key (``sovereign/submitters.py``, §48):
the sovereign runner's preflight and gold run verify it, and the gold-run budget counts per key. A signature
given with the submission is verified and its submitter must be the entrant. Without one (a contest that does
not ``require_signatures``: an account of the web app is the entrant's identity), the harness signs on the
entrant's behalf with a key it keeps for that entrant (``governance/entrant-keys/<entrant>.key``, 0600,
registered as submitter ``<entrant>`` on first use): the runner's checks and budget then apply per entrant,
and the log says the harness signed (``signed_by``). Refused: a submission after close, the same artefact
(sha256) twice from one entrant or once more from another, more than the policy's ``submissions`` per ``days``
from one entrant.
"""

from __future__ import annotations

import fcntl
import json
import shlex
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Literal

from mt_eval.contest.manifest import ENTRIES, GOVERNANCE, SECRET_SEGMENT, VAULT, governance
from mt_eval.contest.model_bundle import check_folder, check_model_bundle, unpack_archive
from mt_eval.contest.state import QUALIFIED, ContestState, EntryState, contest_state, require_open
from mt_eval.errors import UserError
from mt_eval.runcard.signing import new_key, write_atomic
from mt_eval.sovereign.bundle import ARCHIVES, check_bundle, copy_bundle, load_bundle, scan_bundle
from mt_eval.sovereign.bundle import MAX_BYTES as BUNDLE_MAX_BYTES
from mt_eval.sovereign.bundle import MAX_FILES as BUNDLE_MAX_FILES
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.submitters import (
    Submitter,
    add_submitter,
    fingerprint,
    read_submission_signature,
    sign_submission,
    submission_message,
    submitters,
    verify_submission,
)

ARTEFACT, SIGNATURE, SUBMISSION = "artefact", "artefact.sig", "submission.json"
ENTRANT_KEYS = "entrant-keys"
SUBMIT_LOCK = ".contest-submit.lock"
KINDS = ("bundle", "model")
HARNESS = "contest-harness"


def entry_dir(root: Path, number: int) -> Path:
    return Path(root) / ENTRIES / str(number)


def _claim(root: Path, after: int) -> tuple[int, Path]:
    """The next free entry number and its new folder (``mkdir`` is the claim: two submissions at once
    never share a number)."""
    (Path(root) / ENTRIES).mkdir(exist_ok=True)
    number = after + 1
    while True:
        folder = entry_dir(root, number)
        try:
            folder.mkdir()
            return number, folder
        except FileExistsError:
            number += 1


def _check_budget(gov: Governance, state: ContestState, entrant: str) -> None:
    policy = gov.policy()
    since = datetime.now(UTC) - timedelta(days=policy.days)
    recent = [e for e in state.entries if e.entrant == entrant and _when(e.submitted_at) > since]
    if len(recent) >= policy.submissions:
        raise UserError(f"entrant {entrant!r} has made {len(recent)} submissions to contest {state.manifest.id!r} in "
                        f"the last {policy.days} days (at most {policy.submissions})",
                        file=str(gov.policy_path), hint="the organiser sets the budget in the policy ([budget])")


def _when(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        return datetime.now(UTC)  # unreadable: counted as recent (never a way round the budget)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def _stage_bundle(artefact: Path, dest: Path, scratch: Path, max_bytes: int) -> str:
    if artefact.is_file() and not artefact.is_symlink() and artefact.name.endswith(ARCHIVES):
        # unpacked here, under the contest's own limit, into a folder removed when the submission ends (a
        # long-running web app must not keep one temporary folder per upload until it exits)
        artefact = unpack_archive(artefact, scratch, min(max_bytes, BUNDLE_MAX_BYTES), BUNDLE_MAX_FILES)
    bundle, problems = check_bundle(artefact)
    if problems or bundle is None:
        raise problems[0]
    copy_bundle(bundle.root, dest)
    scan = scan_bundle(dest)
    size = sum((dest / rel).stat().st_size for rel in scan.digests)
    if size > max_bytes:
        raise UserError(f"the bundle holds {size} bytes; this contest takes at most {max_bytes >> 20} MiB",
                        file=str(artefact))
    if scan.problems or scan.sha256 != bundle.sha256:
        raise UserError("the bundle changed while it was copied; submit it again", file=str(artefact))
    return bundle.sha256


def _stage_model(artefact: Path, dest: Path, scratch: Path, max_bytes: int) -> str:
    model, problems = check_model_bundle(artefact, max_bytes, scratch=scratch)
    if problems or model is None:
        raise problems[0]
    dest.mkdir()
    for name in model.files:  # flat, regular files only: checked by the walk
        shutil.copyfile(model.root / name, dest / name, follow_symlinks=False)
    copied, again = check_folder(dest, max_bytes)
    if again or copied is None or copied.sha256 != model.sha256:
        raise UserError("the model changed while it was copied; submit it again", file=str(artefact))
    return model.sha256


def _entrant_key(gov: Governance, entrant: str) -> Path:
    """The key the harness signs an unsigned bundle of ``entrant`` with (made and registered on first use)."""
    folder = gov.dir / ENTRANT_KEYS
    folder.mkdir(mode=0o700, exist_ok=True)
    key = folder / f"{entrant}.key"
    active = [s for s in submitters(gov).values() if s.name == entrant and s.revoked is None]
    if key.exists():
        return key
    if active:
        raise UserError(f"entrant {entrant!r} is a registered submitter: sign the bundle with that key",
                        hint="mt-eval submission sign BUNDLE --key YOUR.key, then submit with --signature")
    _, _, public = new_key(key, entrant)
    add_submitter(gov, entrant, public, who=HARNESS)
    return key


def _verify_signature(gov: Governance, sha256: str, signature: Path) -> Submitter:
    """A registered, unrevoked submitter's valid signature over ``sha256`` (a model's, which has no
    method.toml for ``verify_submission``); the same checks in the same order."""
    digest, sig = read_submission_signature(signature)
    if digest != sha256:
        raise UserError(f"the signature is for {digest[:12]}…, not this artefact ({sha256[:12]}…)", file=str(signature))
    problem = sig.check(submission_message(sha256))
    if problem is not None:
        raise UserError(f"the submission signature is not valid: {problem}", file=str(signature))
    found = submitters(gov).get(fingerprint(sig.public))
    if found is None or found.revoked is not None:
        raise UserError("the signing key is not an active registered submitter key", file=str(signature),
                        hint="the organiser registers it: mt-eval governance submitter add NAME --public-key KEY.pub "
                             f"--governance {shlex.quote(str(gov.dir))}")
    return found


def sign_model(checkpoint: Path, key: Path, out: Path | None = None, signer: str | None = None) -> Path:
    """A submission signature over a weights-only model's sha256 (``submission sign`` does it for bundles; the
    same file format, context line and key), written to ``out`` (default ``CHECKPOINT.sig``); its path."""
    from dataclasses import asdict

    from mt_eval.runcard.signing import key_signer, make_signature, read_private_key
    from mt_eval.sovereign.submitters import SIGNATURE_KIND, default_signature

    model, problems = check_model_bundle(checkpoint)
    if problems or model is None:
        raise problems[0]
    signature = make_signature(read_private_key(key), submission_message(model.sha256), signer or key_signer(key))
    path = out or default_signature(checkpoint)
    body = {"kind": SIGNATURE_KIND, "version": 1, "bundle_sha256": model.sha256, "signature": asdict(signature)}
    write_atomic(path, (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return path


@contextmanager
def _submitting(root: Path) -> Iterator[None]:
    """One submission at a time per contest, from re-reading the log to recording the entry: the budget and the
    same-artefact checks read the log, and submissions that all read it before any recorded would all pass
    (the web form and the CLI at once: 3 of 4 concurrent submissions passed a budget of 1 without this lock)."""
    with open(root / GOVERNANCE / SUBMIT_LOCK, "ab") as fh:  # beside the log's own lock, not among the entries
        fcntl.flock(fh, fcntl.LOCK_EX)  # released when the file closes
        yield


def check_may_submit(state: ContestState, entrant: str, *, signed: bool) -> None:
    """Everything that refuses ``entrant``'s submission before any byte of it is read (closed, name, membership,
    deadline, a signature the contest requires, the budget): ``submit_entry`` and the web form ask the same."""
    require_open(state, "submission")
    manifest = state.manifest
    if not entrant or len(entrant) > 100 or not all(c.isalnum() or c in "._@+-" for c in entrant):
        raise UserError(f"entrant {entrant[:40]!r} is not 1-100 letters, digits or . _ @ + -", field="--entrant")
    if not manifest.may_submit(entrant):
        raise UserError(f"{entrant!r} is not a member of {manifest.visibility} contest {manifest.id!r}")
    if manifest.deadline is not None and datetime.now(UTC).date().isoformat() > manifest.deadline:
        raise UserError(f"contest {manifest.id!r} took entries until {manifest.deadline} (UTC); submission refused")
    if not signed and manifest.require_signatures:
        raise UserError(f"contest {manifest.id!r} requires a signed submission", field="--signature",
                        hint="mt-eval submission sign BUNDLE --key YOUR.key, then --signature BUNDLE.sig")
    _check_budget(governance(state.root), state, entrant)  # counted again under the lock before recording


def submit_entry(root: Path, artefact: Path, *, entrant: str, kind: Literal["bundle", "model"],
                 signature: Path | None = None) -> int:
    """Check ``artefact`` (a folder or an archive), copy it into the contest as entry ``n`` and record
    ``contest.submit``; returns ``n``. Every refusal is one line and leaves no entry folder behind."""
    root = Path(root)
    state = contest_state(root)
    if kind not in KINDS:
        raise UserError(f"--kind {kind!r}: one of {', '.join(KINDS)}", field="--kind")
    check_may_submit(state, entrant, signed=signature is not None)
    manifest, gov = state.manifest, governance(root)
    number, folder = _claim(root, len(state.entries))
    scratch = root / ENTRIES / f".incoming-{uuid.uuid4().hex}"
    try:
        max_bytes = manifest.max_artefact_mb << 20
        sha256 = (_stage_bundle(artefact, folder / ARTEFACT, scratch, max_bytes) if kind == "bundle"
                  else _stage_model(artefact, folder / ARTEFACT, scratch, max_bytes))
        # the untrusted archive was unpacked and checked above, outside the lock: a slow upload holds no one up
        with _submitting(root):
            state = contest_state(root)
            require_open(state, "submission")
            _check_budget(gov, state, entrant)
            _refuse_copies(state, entrant, sha256, artefact)
            signed_by = _sign(gov, folder, kind, sha256, entrant, signature)
            when = datetime.now(UTC).isoformat(timespec="seconds")
            record = {"entry": number, "entrant": entrant, "kind": kind, "sha256": sha256, "time": when,
                      "signed_by": signed_by}
            write_atomic(folder / SUBMISSION, (json.dumps(record, indent=1) + "\n").encode())
            gov.record({"kind": "contest.submit", "contest": manifest.id, "entry": number, "entrant": entrant,
                        "entry_kind": kind, "sha256": sha256, "signed_by": signed_by, "who": entrant})
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return number


def _refuse_copies(state: ContestState, entrant: str, sha256: str, artefact: Path) -> None:
    twice = [e.number for e in state.entries if e.entrant == entrant and e.sha256 == sha256]
    if twice:
        raise UserError(f"entrant {entrant!r} already submitted this artefact ({sha256[:12]}…) as entry {twice[0]}",
                        file=str(artefact), hint="change the method, not the submission count")
    # another entrant's copy would tie with it and push every entry below down one competition rank
    copied = [e.number for e in state.entries if e.sha256 == sha256]
    if copied:
        raise UserError(f"this artefact ({sha256[:12]}…) is already entry {copied[0]} of contest "
                        f"{state.manifest.id!r}; a method is entered once", file=str(artefact))


def _sign(gov: Governance, folder: Path, kind: str, sha256: str, entrant: str, signature: Path | None) -> str:
    """Check (or make) the entry's submission signature, kept beside the artefact; who signed it."""
    if signature is not None:
        submitter = (verify_submission(gov, load_bundle(folder / ARTEFACT), signature) if kind == "bundle"
                     else _verify_signature(gov, sha256, signature))
        if submitter.name != entrant:
            raise UserError(f"the signature is submitter {submitter.name!r}'s, not entrant {entrant!r}'s",
                            file=str(signature))
        shutil.copyfile(signature, folder / SIGNATURE)
        return submitter.name
    if kind == "model":
        return "none"  # a model runs no submitted code: nothing for a sandbox key to vouch for
    sign_submission(load_bundle(folder / ARTEFACT), folder / ARTEFACT, _entrant_key(gov, entrant), folder / SIGNATURE)
    return HARNESS


def checked_entry(root: Path, entry: EntryState) -> Path:
    """The entry's artefact folder, its sha256 re-checked against the one submitted (nothing else runs)."""
    folder = entry_dir(root, entry.number) / ARTEFACT
    if entry.kind == "bundle":
        digest = scan_bundle(folder).sha256 if folder.is_dir() else ""
    else:
        model, _ = check_folder(folder) if folder.is_dir() else (None, [])
        digest = model.sha256 if model is not None else ""
    if digest != entry.sha256:
        raise UserError(f"entry {entry.number}'s artefact is not the one submitted (sha256 differs); refused",
                        file=str(folder))
    return folder


def approve_entry(root: Path, number: int, *, custodian: str | None = None, share: Path | None = None) -> str:
    """A custodian's approval of a qualified entry's run on the secret split: with ``share`` (a quorum vault)
    through ``custody.approve`` (the share proves the custodian; the sovereign gold run consumes it), else
    ``custodian`` names the holder of the 1-of-1 vault's identity. Records ``contest.approve``; its line hash."""
    from mt_eval.sovereign.custody import approve, read_share

    root = Path(root)
    state = contest_state(root)
    require_open(state, "approval")
    entry = state.entry(number)
    if entry.state != QUALIFIED:
        raise UserError(f"entry {number} is {entry.state}: only a qualified entry is approved", entry=number)
    if share is not None:
        name = str(read_share(share).custodian)
    elif state.manifest.quorum > 1:
        raise UserError(f"this contest's vault is held by a quorum of {state.manifest.quorum}: approve with your "
                        "custody share", field="--share")
    elif not custodian or not custodian.strip():
        raise UserError("name the custodian who approves (--custodian NAME)", field="--custodian")
    else:
        name = custodian.strip()
    if name == entry.entrant:
        raise UserError(f"custodian {name} entered entry {number}: nobody approves their own entry (another "
                        "custodian does)", entry=number)
    if name in entry.approvals:  # checked before custody logs its own approval
        raise UserError(f"custodian {name} already approved entry {number}", entry=number)
    if share is not None:
        approve(root / GOVERNANCE, root / VAULT, share, entry.sha256, SECRET_SEGMENT, custodian)
    return governance(root).record({"kind": "contest.approve", "contest": state.manifest.id, "entry": number,
                                    "custodian": name, "sha256": entry.sha256, "who": custodian or name})


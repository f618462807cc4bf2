"""Governance controls of sovereign evaluation: the audit log, dynamic consent, the submission budget,
the §9.2 two-run agreement (the governance signing key signs public cards: ``public_card``).

A governance directory (``--governance DIR``, default ``./governance``) holds

* ``audit.jsonl``: one JSON object per line, append-only. Each line carries ``seq`` (1, 2, …),
  ``prev`` (the SHA-256 of the previous line's bytes; 64 zeros for the first) and ``when`` (this log's
  clock, never the caller's: a back-dated run must not escape the budget). Editing, deleting or
  reordering a line breaks the chain at the next line; ``audit.head`` (the last ``seq`` and line hash)
  catches a truncated tail. A hash chain proves the log was not edited piecemeal; someone who may
  rewrite the whole directory can forge a consistent one, which is why each public card records the
  hash of its run's audit line (published, it pins the log up to that point).
* ``policy.toml`` (``sovereign/policy.py``): the submission budget (3 bundles per registered submitter
  key per 30 days, each executed at most twice: the §9.2 pair), the ``organisation`` named on public
  cards, and the LLM models the broker may reach.
* revocations are events of the log itself (``kind = "revoke"`` / ``"reinstate"``), so the consent
  history is as tamper-evident as the runs.

Event kinds: ``run`` (a gold run: counted against its submitter key's budget when its segment is
secret, whatever its status), ``submitter_add`` / ``submitter_revoke`` (``submitters.py``), ``preflight``,
``publish``, ``revoke``, ``reinstate``, ``policy``, ``approve`` (a custodian of a quorum vault approves
one gold run of a bundle on a segment: ``custody.py``; the next ``run`` of that bundle and segment
consumes it), ``revoke_custodian`` (a custodian removed, the vault
re-sealed to a new split), ``consent`` / ``consent_revoke`` / ``consent_reinstate`` (community consent
records: ``consent.py``), ``ownership_*`` (§8.3 ownership transfer: ``ownership.py``) and ``rotate_entries``
(§9.3.2 entries moved between a vault's segments: ``rotation.py``).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mt_eval.errors import UserError
from mt_eval.runcard.reproduce import within_tolerance
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.signing import Signature, card_message, make_signature, read_private_key, write_atomic
from mt_eval.sovereign.policy import Policy, read_policy

DEFAULT_DIR = Path("governance")
LOG, HEAD, POLICY, LOCK = "audit.jsonl", "audit.head", "policy.toml", ".audit.lock"
GENESIS = "0" * 64
# A contest's whole state is its own Governance log (contest/state.py reads these; decisions: contests)
CONTEST_KINDS = ("contest.create", "contest.submit", "contest.qualify", "contest.approve", "contest.execute",
                 "contest.fail", "contest.rank", "contest.close", "contest.publish")
# §8.3 ownership transfer (ownership.py) and §9.3 entry rotation (rotation.py)
OWNERSHIP_KINDS = ("ownership_eligible", "ownership_offer", "ownership_accept", "ownership_decline",
                   "ownership_transfer")
KINDS = ("run", "preflight", "publish", "revoke", "reinstate", "policy", "approve", "revoke_custodian",
         "submitter_add", "submitter_revoke", "consent", "consent_revoke", "consent_reinstate",
         *CONTEST_KINDS, *OWNERSHIP_KINDS, "rotate_entries")
SECRET_MARKERS = ("AGE-SECRET-KEY-", "PRIVATE KEY")  # an identity or a signing key never enters the log


def line_hash(line: bytes) -> str:
    return hashlib.sha256(line).hexdigest()


def _canonical(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _no_secrets(value: Any, path: str = "event") -> None:
    """Refuse an event holding anything that looks like a private key (keys never reach the log)."""
    if isinstance(value, str):
        if any(m in value for m in SECRET_MARKERS):
            raise UserError(f"{path} holds a private key; refused (keys never enter the audit log)")
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _no_secrets(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            _no_secrets(v, f"{path}[{i}]")


def _when(text: object) -> datetime | None:
    try:
        when = datetime.fromisoformat(str(text))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


class Governance:
    """A governance directory: its audit log, policy and consent records."""

    def __init__(self, directory: Path = DEFAULT_DIR) -> None:
        self.dir = Path(directory)
        self.log_path, self.head_path, self.policy_path = self.dir / LOG, self.dir / HEAD, self.dir / POLICY

    # ------------------------------------------------------------ the log

    @contextmanager
    def _locked(self, *, shared: bool = False) -> Iterator[None]:
        """One writer at a time (two runs finishing together must not interleave their lines); readers share the
        lock, so that none reads the log between a line's append and the head's update (one of four concurrent
        contest submissions was refused "the audit log fails verification" instead of by the budget)."""
        fh = self._lock_file(shared)
        with fh if fh is not None else nullcontext():
            if fh is not None:
                fcntl.flock(fh, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
            yield

    def _lock_file(self, shared: bool) -> IO[str] | None:
        """The lock's file; None for a reader where no writer can be (no folder yet: none is made; a folder this
        process cannot write, such as a read-only copy)."""
        if shared and not self.dir.is_dir():
            return None
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            return (self.dir / LOCK).open("a")
        except OSError as exc:
            if shared:
                return None
            raise UserError(f"cannot use the governance folder: {exc.strerror or exc}", file=str(self.dir)) from None

    def _lines(self) -> list[bytes]:
        try:
            data = self.log_path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise UserError(f"cannot read the audit log: {exc.strerror or exc}", file=str(self.log_path)) from None
        return data.splitlines()

    def verify_log(self) -> list[str]:
        """Every break in the chain (empty: the log is intact). Each problem names its line."""
        with self._locked(shared=True):
            return self._problems(self._lines())

    def _problems(self, lines: list[bytes]) -> list[str]:
        """``verify_log`` of lines read under the lock (the head is read here too, under the same lock)."""
        prev, problems = GENESIS, []
        for i, raw in enumerate(lines, start=1):
            try:
                obj = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                obj = None
            if not isinstance(obj, dict):
                problems.append(f"line {i}: not a JSON object (edited or damaged)")
            elif obj.get("seq") != i:
                problems.append(f"line {i}: seq is {obj.get('seq')!r}, expected {i} (a line was deleted or moved)")
            elif obj.get("prev") != prev:
                problems.append(f"line {i}: prev does not match line {i - 1}'s hash (line {i - 1} was edited, "
                                "deleted or moved)")
            prev = line_hash(raw)
        head = self._head()
        if lines and head is None:
            problems.append(f"{HEAD} is missing: the log's end cannot be checked")
        elif head is not None and head != (len(lines), prev):
            problems.append(f"{HEAD} says {head[0]} lines ending in {head[1][:12]}…; the log has {len(lines)} "
                            f"ending in {prev[:12]}… (lines were removed from or added to the end)")
        return problems

    def _head(self) -> tuple[int, str] | None:
        try:
            data = json.loads(self.head_path.read_text(encoding="utf-8"))
            return int(data["seq"]), str(data["sha256"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            return (-1, "unreadable")

    def _require_intact(self, lines: list[bytes]) -> None:
        """Refuse a log that fails verification (``lines`` read under the lock the caller holds)."""
        problems = self._problems(lines)
        if problems:
            raise UserError(f"the audit log fails verification ({problems[0]}); refused until governance "
                            "restores it", file=str(self.log_path), hint="mt-eval governance audit")

    def record(self, event: Mapping[str, Any]) -> str:
        """Append ``event`` (``kind`` defaults to ``run``) and return its line's SHA-256.

        Refused: a broken log, an unknown kind, ``seq``/``prev`` set by the caller, a value holding a
        private key, a value JSON cannot carry. A ``when`` given by the caller is kept as
        ``reported_when``; ``when`` is always this log's clock."""
        fields = dict(event)
        for key in ("seq", "prev"):
            if key in fields:
                raise UserError(f"event field {key!r} is the log's own; refused")
        kind = fields.setdefault("kind", "run")
        if kind not in KINDS:
            raise UserError(f"unknown audit event kind {kind!r} (known: {', '.join(KINDS)})")
        if "when" in fields:
            fields["reported_when"] = str(fields.pop("when"))
        _no_secrets(fields)
        with self._locked():
            lines = self._lines()
            self._require_intact(lines)
            prev = line_hash(lines[-1]) if lines else GENESIS
            body = {**fields, "seq": len(lines) + 1, "prev": prev,
                    "when": datetime.now(UTC).isoformat(timespec="microseconds")}  # fmt: skip
            try:
                line = _canonical(body)
            except (TypeError, ValueError) as exc:
                raise UserError(f"event cannot be logged as JSON: {exc}") from None
            digest = line_hash(line)
            try:
                with self.log_path.open("ab") as fh:
                    fh.write(line + b"\n")
                    fh.flush()
            except OSError as exc:
                raise UserError(f"cannot append: {exc.strerror or exc}", file=str(self.log_path)) from None
            write_atomic(self.head_path, _canonical({"seq": body["seq"], "sha256": digest}) + b"\n")
        return digest

    def events(self) -> list[dict[str, Any]]:
        """Every event of a verified log (``UserError`` when it fails verification), each with its ``hash``."""
        with self._locked(shared=True):  # the lines verified are the lines returned
            lines = self._lines()
            self._require_intact(lines)
        return [{**json.loads(raw), "hash": line_hash(raw)} for raw in lines]

    # ------------------------------------------------------------ policy

    def policy(self) -> Policy:
        """``policy.toml`` (defaults when there is none; ``sovereign/policy.py``)."""
        return read_policy(self.policy_path)

    def set_policy(self, *, submissions: int | None = None, runs_per_submission: int | None = None,
                   days: int | None = None, organisation: str | None = None, models: tuple[str, ...] | None = None,
                   who: str | None = None, publish_after_days: int | None = None) -> Policy:
        """Change the policy file (and log the change); ``None`` keeps a value as it is."""
        old = self.policy()
        asked: dict[str, Any] = {"submissions": submissions, "runs_per_submission": runs_per_submission, "days": days,
                                 "organisation": organisation.strip() if organisation is not None else None,
                                 "models": models, "publish_after_days": publish_after_days}
        new = replace(old, **{k: v for k, v in asked.items() if v is not None}).checked()
        self.dir.mkdir(parents=True, exist_ok=True)
        write_atomic(self.policy_path, new.toml().encode("utf-8"))
        self.record({"kind": "policy", "who": who, "submissions": new.submissions, "days": new.days,
                     "runs_per_submission": new.runs_per_submission, "organisation": new.organisation,
                     "models": list(new.models), "publish_after_days": new.publish_after_days})  # fmt: skip
        return new

    # ------------------------------------------------------------ consent and budget

    def revoked(self) -> dict[str, str]:
        """Revoked bundles (sha256) and methods, each with its reason, as the log stands."""
        out: dict[str, str] = {}
        for ev in self.events():
            if ev.get("kind") == "revoke":
                out[str(ev.get("target"))] = str(ev.get("reason") or "no reason given")
            elif ev.get("kind") == "reinstate":
                out.pop(str(ev.get("target")), None)
        return out

    def revoke(self, bundle_or_method: str, reason: str, who: str | None = None) -> str:
        """Revoke (or refuse in advance) a bundle by sha256 or a method by name: no further run, no publishing."""
        target = bundle_or_method.strip()
        if not target or not reason.strip():
            raise UserError("revoke needs a bundle sha256 or a method name, and a reason")
        return self.record({"kind": "revoke", "target": target, "reason": reason.strip(), "who": who})

    def reinstate(self, bundle_or_method: str, reason: str, who: str | None = None) -> str:
        """Lift a revocation (consent given again); the revocation stays in the log."""
        if bundle_or_method.strip() not in self.revoked():
            raise UserError(f"{bundle_or_method!r} is not revoked")
        return self.record({"kind": "reinstate", "target": bundle_or_method.strip(), "reason": reason.strip(),
                            "who": who})

    def counted_runs(self, now: datetime | None = None) -> list[dict[str, Any]]:
        """The runs the budget counts: kind ``run`` on a budget segment in the policy window, oldest first."""
        policy, now = self.policy(), now or datetime.now(UTC)
        since = now - timedelta(days=policy.days)
        return [ev for ev in self.events() if ev.get("kind") == "run" and ev.get("segment") in policy.segments
                and (when := _when(ev.get("when"))) is not None and when > since]  # fmt: skip

    def submissions(self, submitter_key: str, now: datetime | None = None) -> dict[str, list[datetime]]:
        """The counted runs signed by ``submitter_key`` (``submitters.fingerprint``), by bundle sha256 (one
        key per submission, whatever the bundle's method is called), each bundle's times in order, bundles
        by first run."""
        out: dict[str, list[datetime]] = {}
        for ev in self.counted_runs(now):
            if ev.get("submitter_key") == submitter_key:
                out.setdefault(str(ev.get("bundle_sha256")), []).append(datetime.fromisoformat(ev["when"]))
        return out

    def check_not_revoked(self, bundle_sha256: str, method: str) -> None:
        """``UserError`` when the bundle or the method is revoked (no run, no publishing)."""
        revoked = self.revoked()
        for target, what in ((bundle_sha256, f"bundle {bundle_sha256[:12]}…"), (method, f"method {method!r}")):
            if target in revoked:
                raise UserError(f"{what} was revoked ({revoked[target]}); no run, no publishing",
                                hint="governance may lift it: mt-eval governance revoke --undo")

    def check_allowed(self, bundle_sha256: str, method: str, submitter_key: str, submitter: str = "") -> None:
        """``UserError`` (one line, how to fix) when the bundle or method is revoked, the bundle ran its
        ``runs_per_submission`` (by any key), or the submitter key's gold-run budget is spent; nothing
        when a run may go ahead. The budget is per key, so renaming a bundle does not reset it."""
        self.check_not_revoked(bundle_sha256, method)
        policy, used = self.policy(), self.submissions(submitter_key)
        runs = sum(1 for ev in self.counted_runs() if ev.get("bundle_sha256") == bundle_sha256)
        if runs >= policy.runs_per_submission:  # the same bundle again teaches nothing new, but is bounded
            raise UserError(f"bundle {bundle_sha256[:12]}… already ran {runs} time(s) on the secret segments in "
                            f"the last {policy.days} days (at most {policy.runs_per_submission} per submission)",
                            file=str(self.policy_path))
        if bundle_sha256 not in used and len(used) >= policy.submissions:
            firsts = sorted(times[0] for times in used.values())
            free = firsts[len(firsts) - policy.submissions] + timedelta(days=policy.days) if firsts else None
            when = f"; the next is allowed after {free:%Y-%m-%d %H:%M} UTC" if free else ""
            raise UserError(f"submitter {submitter or '(unnamed)'!r} (key {submitter_key[:12]}…) has used its "
                            f"{policy.submissions} gold submissions of the last {policy.days} days{when}",
                            file=str(self.policy_path),
                            hint="repeated queries overfit a holdout; governance sets the budget in policy.toml")

    def preflight_passed(self, bundle_sha256: str) -> bool:
        """Has this bundle (by sha256) a logged preflight with status ``ok``?"""
        return any(ev.get("kind") == "preflight" and ev.get("bundle_sha256") == bundle_sha256
                   and ev.get("status") == "ok" for ev in self.events())  # fmt: skip

    # ------------------------------------------------------------ custody by quorum (custody.py)

    def approve(self, bundle_sha256: str, segment: str, split: str, custodian: int, who: str | None = None) -> str:
        """Log custodian ``custodian`` (a share id of custody split ``split``: never the share) approving
        one gold run of ``bundle_sha256`` on ``segment``. ``custody.approve`` checks the share first."""
        if len(bundle_sha256) != 64 or any(c not in "0123456789abcdef" for c in bundle_sha256):
            raise UserError("--bundle: a bundle's sha256 is 64 lowercase hex digits (submission check prints it)")
        return self.record({"kind": "approve", "bundle_sha256": bundle_sha256, "segment": segment, "split": split,
                            "custodian": custodian, "who": who})

    def approvals(self, bundle_sha256: str, segment: str, split: str) -> set[int]:
        """The custodians of ``split`` who approved a run of this bundle on this segment since its last
        ``run`` event there (whatever its status): each approval serves one run."""
        approved: set[int] = set()
        for ev in self.events():
            if ev.get("bundle_sha256") != bundle_sha256 or ev.get("segment") != segment:
                continue
            if ev.get("kind") == "run":
                approved.clear()
            elif ev.get("kind") == "approve" and ev.get("split") == split and isinstance(ev.get("custodian"), int):
                approved.add(ev["custodian"])
        return approved


# ---------------------------------------------------------------- the governance signature


def is_sovereign(card: Mapping[str, Any]) -> bool:
    return isinstance(card.get("sovereign"), Mapping)


def private_key(key: Path | Ed25519PrivateKey) -> Ed25519PrivateKey:
    """The governance signing key: a key already read, or the PKCS#8 file (``mt-eval keys new``)."""
    return key if isinstance(key, Ed25519PrivateKey) else read_private_key(key)


def sign_public_card(card: Mapping[str, Any], key: Path | Ed25519PrivateKey, signer: str | None = None) -> Signature:
    """The governance key's signature over the public card's ``run_card_hash`` (Ed25519, the card
    signature of ``runcard.signing``); refused unless the card is a sealed sovereign card."""
    digest = card.get("run_card_hash")
    if not is_sovereign(card) or not isinstance(digest, str) or card_hash(card) != digest:
        raise UserError("not a sealed sovereign public card (make it with public_card); not signed")
    if card.get("results"):
        raise UserError("the card carries entry results; a public sovereign card never does")
    return make_signature(private_key(key), card_message(digest), signer)


# ---------------------------------------------------------------- §9.2 agreement


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def card_scales(card: Mapping[str, Any]) -> dict[str, float]:
    """Each metric's native scale as a card records it (100 for chrF++, 1 for rates; composite 1)."""
    scales = {m: float(info.get("scale") or 1.0) for m, info in (card.get("metrics") or {}).items()
              if isinstance(info, Mapping)}  # fmt: skip
    return {"composite": 1.0, **scales}


def agreement_metrics(card: Mapping[str, Any]) -> list[str]:
    """What §9.2 compares between two runs: the composite and every metric weighted in it (as
    ``reproduce`` does); counts and timings are not a method's quality and may differ."""
    weighted = [m for m, info in (card.get("metrics") or {}).items()
                if isinstance(info, Mapping) and (_finite(info.get("weight")) or 0.0) > 0]
    return ["composite", *sorted(weighted)]


def agree(first: Mapping[str, float | None], second: Mapping[str, float | None],
          scales: Mapping[str, float] | None = None) -> list[str]:
    """The §9.2 check of two runs of one submission: each metric of either within ±2 % of the first run
    (relative; at 0, 2 % of the metric's scale: ``runcard.reproduce.within_tolerance``). Returns one
    line per disagreement (empty: they agree). A metric with a value in one run only disagrees.
    ``scales`` (``card_scales``) default to 1, the scale of the composite and of rates."""
    problems = []
    for metric in sorted(set(first) | set(second)):
        a, b = _finite(first.get(metric)), _finite(second.get(metric))
        if a is None and b is None:
            continue
        if a is None or b is None:
            problems.append(f"{metric}: {a} in the first run, {b} in the second")
            continue
        scale = float((scales or {}).get(metric, 1.0))
        if not within_tolerance(a, b, scale):
            problems.append(f"{metric}: {a:.4g} then {b:.4g} (outside ±2 %)")
    return problems

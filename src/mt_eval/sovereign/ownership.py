"""Ownership transfer of a method that reached Deployable on gold (Benchmark Spec §8.3).

"Methods that achieve a composite score at or above the Deployable threshold (0.70) against gold-standard
evaluation, and that pass human validation (§7), are subject to ownership transfer." The governance
organisation already holds the method: the submission *is* the bundle (§8.2.4), known by its sha256.

A method (a bundle sha256) moves through these states, each step one event of the hash-chained audit log
(``governance.py``) with who and when:

* ``eligible`` (``ownership_eligible``): one of its gold runs (a ``run`` event on ``gold_standard``,
  status ok) has a stored full card whose composite is at or above the Deployable threshold of
  ``scoring.profiles.TIERS`` and whose sealed tier is Deployable or Fluent (a run with too many critical
  errors is capped at functional by ``scoring.composite.quality_tier``), and the §7.2 review gate
  (``review/gate.py``, in the store where governance reviewed the full card) accepted that card. The
  event records the evidence: composite, tier, reviewers, entries, mean rating and its lower bound;
* ``offered`` (``ownership_offer``): the organiser offers terms, recorded by the SHA-256 of the terms
  document (kept in ``DIR/ownership/<sha256>``);
* ``accepted`` / ``declined`` (``ownership_accept`` / ``ownership_decline``): the developer's decision,
  signed with the submitter key that submitted the bundle (``submitters.py``; registered, unrevoked).
  The signature is over ``DECISION_CONTEXT`` and the decision, the bundle, the terms' sha256 and the
  offer's audit line hash, so it cannot be replayed onto other terms or another offer. After a decline
  the organiser may offer new terms;
* ``transferred`` (``ownership_transfer``): the organiser records possession: the bundle whose files hash
  to the sha256 that was run and accepted (already held since the evaluation).

Every other transition is refused in one line. The state is rebuilt from the verified log on every call,
so an edited log refuses everything (``Governance.events``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.review.gate import ReviewVerdict
from mt_eval.runcard.io import write_atomic
from mt_eval.runcard.signing import (
    Signature,
    make_signature,
    parse_signature,
    read_private_key,
    read_signature_json,
)
from mt_eval.scoring.composite import REVIEW_GATED
from mt_eval.scoring.profiles import TIERS
from mt_eval.sovereign.bundle import Bundle
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.submitters import fingerprint, submitters

DEPLOYABLE = "deployable"
DEPLOYABLE_THRESHOLD = next(threshold for threshold, name in TIERS if name == DEPLOYABLE)
GOLD = "gold_standard"
TERMS_DIR = "ownership"  # the terms documents, by sha256, under the governance folder
DECISION_CONTEXT = b"mt-eval ownership decision signature v1\n"
DECISION_KIND = "mt-eval ownership decision"
DECISIONS = ("accept", "decline")
ELIGIBLE, OFFERED, ACCEPTED, DECLINED, TRANSFERRED = "eligible", "offered", "accepted", "declined", "transferred"
# the audit log knows these kinds as governance.OWNERSHIP_KINDS (tests/sovereign/test_ownership.py checks both)
STATE_OF = {"ownership_eligible": ELIGIBLE, "ownership_offer": OFFERED, "ownership_accept": ACCEPTED,
            "ownership_decline": DECLINED, "ownership_transfer": TRANSFERRED}  # fmt: skip
_HEX = re.compile(r"[0-9a-f]{12,64}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Step:
    """One event of a method's ownership trail."""

    state: str
    when: str
    who: str
    event: str  # its audit line hash
    detail: str


@dataclass(frozen=True)
class Ownership:
    """A method's ownership state as the verified log stands."""

    bundle_sha256: str
    method: str
    submitter: str
    submitter_key: str
    run_card_hash: str
    state: str
    terms_sha256: str | None
    offer_event: str | None
    trail: tuple[Step, ...]


def _detail(ev: Mapping[str, Any]) -> str:
    kind = ev.get("kind")
    if kind == "ownership_eligible":
        return (f"gold run {str(ev.get('run_card_hash'))[:12]}: composite {ev.get('composite')} "
                f"(≥ {ev.get('threshold')}), tier {ev.get('tier')}; review accepted by {ev.get('reviewers')} "
                f"reviewers over {ev.get('entries')} entries, mean {ev.get('review_mean')}, "
                f"lower bound {ev.get('review_lower')}")
    if kind == "ownership_offer":
        return f"terms sha256 {ev.get('terms_sha256')}"
    if kind in ("ownership_accept", "ownership_decline"):
        reason = f"; reason: {ev['reason']}" if ev.get("reason") else ""
        return f"signed by submitter {ev.get('submitter')} (key {str(ev.get('submitter_key'))[:12]}…){reason}"
    return f"bundle {str(ev.get('bundle_sha256'))[:12]}… held ({ev.get('files')} files)"


def ownerships(gov: Governance) -> dict[str, Ownership]:
    """Every method with an ownership event, by bundle sha256, in the order first made eligible."""
    out: dict[str, Ownership] = {}
    for ev in gov.events():
        state = STATE_OF.get(str(ev.get("kind")))
        if state is None:
            continue
        bundle = str(ev.get("bundle_sha256"))
        step = Step(state, str(ev.get("when")), str(ev.get("who") or ev.get("submitter") or ""), str(ev["hash"]),
                    _detail(ev))
        old = out.get(bundle)
        if old is None:  # the first event of a trail (offer() always logs eligibility first)
            out[bundle] = Ownership(bundle, str(ev.get("method")), str(ev.get("submitter")),
                                    str(ev.get("submitter_key")), str(ev.get("run_card_hash")), state, None, None,
                                    (step,))
            continue
        terms = str(ev.get("terms_sha256")) if state == OFFERED else old.terms_sha256
        offer = str(ev["hash"]) if state == OFFERED else old.offer_event
        out[bundle] = Ownership(old.bundle_sha256, old.method, old.submitter, old.submitter_key, old.run_card_hash,
                                state, terms, offer, (*old.trail, step))
    return out


def ownership_of(gov: Governance, bundle: str) -> Ownership | None:
    """The ownership state of the bundle named by its sha256 (12+ leading digits); ``None`` when it has none."""
    target = bundle.strip().lower()
    if not _HEX.fullmatch(target):
        raise UserError(f"not a bundle sha256 (12 to 64 lowercase hex digits): {bundle[:80]!r}")
    found = [o for sha, o in ownerships(gov).items() if sha.startswith(target)]
    if len(found) > 1:
        raise UserError(f"{target} names {len(found)} methods; give more digits of the bundle sha256")
    return found[0] if found else None


def _require(gov: Governance, bundle: str, states: tuple[str, ...], doing: str) -> Ownership:
    current = ownership_of(gov, bundle)
    if current is None:
        raise UserError(f"cannot {doing}: bundle {bundle[:12]}… has no ownership record (not offered)",
                        hint="mt-eval governance ownership offer RUN --terms TERMS first")
    if current.state not in states:
        raise UserError(f"cannot {doing}: the method of bundle {current.bundle_sha256[:12]}… is {current.state} "
                        f"(only from {' or '.join(states)})", hint="mt-eval governance ownership status BUNDLE")
    gov.check_not_revoked(current.bundle_sha256, current.method)  # governance may revoke at any step (§8.2.6)
    return current


# ---------------------------------------------------------------- eligibility and the offer


def gold_run_event(gov: Governance, run_card_hash: str) -> dict[str, Any]:
    """The audit ``run`` event whose full card is ``run_card_hash``: a gold run that finished ok."""
    runs = [ev for ev in gov.events() if ev.get("kind") == "run" and ev.get("run_card_hash") == run_card_hash]
    if not runs:
        raise UserError(f"card {run_card_hash[:12]}… is not the card of a gold run in this governance log")
    run = runs[-1]
    if run.get("segment") != GOLD or run.get("status") != "ok":
        raise UserError(f"run {run_card_hash[:12]}… was on {run.get('segment')} with status {run.get('status')}: "
                        f"§8.3 counts a {GOLD} run that finished ok")
    return run


def eligibility_problems(card: Mapping[str, Any], verdict: ReviewVerdict) -> list[str]:
    """Why the full card of a gold run does not make its method eligible (empty: it does)."""
    scores = card.get("scores") or {}
    composite, tier = scores.get("composite"), scores.get("quality_tier")
    problems = []
    if not isinstance(composite, int | float) or composite < DEPLOYABLE_THRESHOLD:
        problems.append(f"composite {composite if composite is None else round(float(composite), 4)} is below the "
                        f"Deployable threshold {DEPLOYABLE_THRESHOLD}")
    elif tier not in REVIEW_GATED:
        problems.append(f"composite {composite:.4f} reaches {DEPLOYABLE_THRESHOLD} but the card's tier is {tier} "
                        f"(critical_error_rate {scores.get('critical_error_rate')})")
    if verdict.run_card_hash != card.get("run_card_hash"):
        problems.append("the review verdict is for another card")
    elif not verdict.accepted:
        problems.append("human validation (§7.2) has not accepted it: " + ("; ".join(verdict.reasons) or "no review"))
    return problems


def offer(gov: Governance, card: Mapping[str, Any], verdict: ReviewVerdict, terms: Path,
          who: str | None = None) -> Ownership:
    """Record the method of gold run ``card`` (a full card, ``public_card.load_full_card``) eligible and
    offer it ``terms``: refused, with nothing logged, unless the card reaches Deployable, ``verdict`` (the
    §7.2 gate on this card) accepts it, neither bundle nor method is revoked, and the method is not
    already offered, accepted or transferred (after a decline, new terms may be offered)."""
    digest = str(card.get("run_card_hash"))
    run = gold_run_event(gov, digest)
    bundle, method = str(run.get("bundle_sha256")), str(run.get("method"))
    gov.check_not_revoked(bundle, method)
    problems = eligibility_problems(card, verdict)
    if problems:
        raise UserError(f"cannot offer ownership transfer of {method!r} (run {digest[:12]}…): {'; '.join(problems)}")
    current = ownership_of(gov, bundle)
    if current is not None and current.state not in (DECLINED, ELIGIBLE):
        raise UserError(f"cannot offer: the method of bundle {bundle[:12]}… is already {current.state}",
                        hint="mt-eval governance ownership status " + bundle[:12])
    try:
        text = Path(terms).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the terms: {exc.strerror or exc}", file=str(terms)) from None
    if not text.strip():
        raise UserError("the terms document is empty", file=str(terms))
    terms_sha = hashlib.sha256(text).hexdigest()
    kept = gov.dir / TERMS_DIR / terms_sha
    kept.parent.mkdir(parents=True, exist_ok=True)
    if not kept.exists():  # the bytes hashed above, not the path read again
        write_atomic(kept, text, what="the terms")
    common = {"bundle_sha256": bundle, "method": method, "submitter": run.get("submitter"),
              "submitter_key": run.get("submitter_key"), "run_card_hash": digest, "who": who}
    if current is None:
        scores = card.get("scores") or {}
        gov.record({"kind": "ownership_eligible", **common, "composite": scores.get("composite"),
                    "tier": scores.get("quality_tier"), "threshold": DEPLOYABLE_THRESHOLD,
                    "reviewers": verdict.reviewers, "entries": verdict.entries, "review_mean": verdict.mean,
                    "review_lower": verdict.ci_lower})  # fmt: skip
    gov.record({"kind": "ownership_offer", **common, "terms_sha256": terms_sha})
    found = ownership_of(gov, bundle)
    assert found is not None  # just logged
    return found


# ---------------------------------------------------------------- the developer's signed decision


def decision_message(decision: str, bundle_sha256: str, terms_sha256: str, offer_event: str) -> bytes:
    """What a developer signs: the context line, then the decision, bundle, terms and offer, canonically."""
    body = {"decision": decision, "bundle_sha256": bundle_sha256, "terms_sha256": terms_sha256,
            "offer_event": offer_event}
    return DECISION_CONTEXT + json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")


def sign_decision(gov: Governance, bundle: str, decision: str, key: Path) -> Signature:
    """The developer's signature of ``decision`` on the current offer, with the submitter key at ``key``."""
    current = _require(gov, bundle, (OFFERED,), decision)
    assert current.terms_sha256 is not None and current.offer_event is not None  # set by the offer
    message = decision_message(decision, current.bundle_sha256, current.terms_sha256, current.offer_event)
    return make_signature(read_private_key(key), message, None)


def write_decision(path: Path, decision: str, bundle_sha256: str, terms: Path, offer_event: str,
                   key: Path) -> Path:
    """``ownership sign``: the developer's detached decision file, made where the developer's key is (no
    governance folder needed): the terms document as received, the offer's audit line hash as
    ``ownership offer`` printed it. Governance records it with ``decide``."""
    if decision not in DECISIONS:
        raise UserError(f"--decision: {decision!r} is not accept or decline", field="--decision")
    for name, value in (("bundle sha256", bundle_sha256), ("--offer", offer_event)):
        if not _HEX64.fullmatch(value):
            raise UserError(f"{name}: 64 lowercase hex digits (ownership offer prints them)", field=name)
    try:
        terms_sha = hashlib.sha256(Path(terms).read_bytes()).hexdigest()
    except OSError as exc:
        raise UserError(f"cannot read the terms: {exc.strerror or exc}", file=str(terms)) from None
    signature = make_signature(read_private_key(key), decision_message(decision, bundle_sha256, terms_sha,
                                                                       offer_event), None)
    body = {"kind": DECISION_KIND, "version": 1, "decision": decision, "bundle_sha256": bundle_sha256,
            "terms_sha256": terms_sha, "offer_event": offer_event, "signature": asdict(signature)}
    write_atomic(Path(path), (json.dumps(body, indent=2) + "\n").encode("utf-8"))
    return Path(path)


def read_decision(path: Path, decision: str) -> Signature:
    """The signature of a decision file (``write_decision``) made for ``decision``."""
    data = read_signature_json(Path(path), DECISION_KIND)
    if data.get("decision") != decision:
        raise UserError(f"this file records the decision {data.get('decision')!r}, not {decision!r}",
                        file=str(path), field="decision")
    return parse_signature(data.get("signature"), str(path), "signature")


def decide(gov: Governance, bundle: str, decision: str, signature: Signature, reason: str = "") -> Ownership:
    """Record the developer's ``accept`` or ``decline`` of the current offer. Refused: no open offer (never
    offered, accepted or declined already), a signature not over this offer's terms, a key that is not a
    registered, unrevoked submitter key, or a registered key other than the one that submitted the bundle."""
    if decision not in DECISIONS:
        raise UserError(f"unknown decision {decision!r} (accept or decline)")
    current = _require(gov, bundle, (OFFERED,), decision)
    assert current.terms_sha256 is not None and current.offer_event is not None
    message = decision_message(decision, current.bundle_sha256, current.terms_sha256, current.offer_event)
    problem = signature.check(message)
    if problem is not None:
        raise UserError(f"cannot {decision}: the signature is not valid for this offer ({problem})")
    key = fingerprint(signature.public)
    registered = submitters(gov).get(key)
    if registered is None or registered.revoked is not None:
        why = "not a registered submitter key" if registered is None else f"revoked ({registered.revoked})"
        raise UserError(f"cannot {decision}: signing key {key[:12]}… is {why}",
                        hint="the developer signs with the key that submitted the bundle")
    if key != current.submitter_key:
        raise UserError(f"cannot {decision}: key {key[:12]}… ({registered.name}) did not submit bundle "
                        f"{current.bundle_sha256[:12]}… (submitter {current.submitter})")
    gov.record({"kind": f"ownership_{decision}", "bundle_sha256": current.bundle_sha256, "method": current.method,
                "submitter": registered.name, "submitter_key": key, "terms_sha256": current.terms_sha256,
                "offer_event": current.offer_event, "signature": asdict(signature),
                **({"reason": reason.strip()} if reason.strip() else {})})  # fmt: skip
    found = ownership_of(gov, current.bundle_sha256)
    assert found is not None
    return found


def transfer(gov: Governance, bundle: Bundle, who: str | None = None) -> Ownership:
    """Record possession of an accepted method: ``bundle`` (loaded from where governance keeps it) must hash
    to the sha256 that was run, offered and accepted."""
    if ownership_of(gov, bundle.sha256) is None:
        raise UserError(f"cannot record the transfer: the bundle at {bundle.root} hashes to {bundle.sha256[:12]}…, "
                        "which is no method offered here (a changed file changes the sha256)", file=str(bundle.root))
    current = _require(gov, bundle.sha256, (ACCEPTED,), "record the transfer")
    gov.record({"kind": "ownership_transfer", "bundle_sha256": bundle.sha256, "method": current.method,
                "files": len(bundle.files()), "terms_sha256": current.terms_sha256, "who": who})
    found = ownership_of(gov, bundle.sha256)
    assert found is not None
    return found

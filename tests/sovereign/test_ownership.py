"""§8.3 ownership transfer (issue 25 item 2): eligible → offered → accepted | declined → transferred, each step
one event of the hash-chained audit log, every illegal transition refused in one line.

Real parts throughout: the full cards are sealed cards scored by ``mt_eval.api.score`` on 12 NTREX-128
eng→spa entries (the references as outputs: composite 1.0, fluent; their first word only: below 0.70),
stored encrypted to the vault's custodian as a gold run stores them; the human-validation verdicts come
from the §7.2 gate's own ``judge`` (3 reviewers over 40 entries rated 2.6 are accepted, 2 reviewers are
not) or, through the command, from an (empty) review store; signatures are real Ed25519 submitter keys
registered in the log.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner
from vault_fixtures import Custodian

from mt_eval.api import score
from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.review.gate import judge
from mt_eval.runcard.signing import make_signature, new_key, read_private_key
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.governance import LOG, OWNERSHIP_KINDS, Governance
from mt_eval.sovereign.ownership import (
    DEPLOYABLE_THRESHOLD,
    STATE_OF,
    decide,
    decision_message,
    eligibility_problems,
    offer,
    ownership_of,
    sign_decision,
)
from mt_eval.sovereign.public_card import store_full_card
from mt_eval.sovereign.submitters import add_submitter, revoke_submitter
from support.sovereign import CORPUS, EXAMPLES

runner = CliRunner()
ENTRIES = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:12]


def _invoke(*args: object) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args], terminal_width=400)
    return result.exit_code, result.output


def _card(outputs: list[str]) -> dict[str, Any]:
    return dict(score(outputs, [e["reference"] for e in ENTRIES], [e["source"] for e in ENTRIES], lang="en-es",
                      skip_analyser=True, system="acme").card)


@dataclass
class World:
    gov: Governance
    bundle: Path
    bundle_sha256: str
    key: Path  # the submitter's private key
    other_key: Path  # a registered key of another submitter
    good: dict[str, Any]  # a gold run's full card at composite 1.0
    terms: Path


def _run_event(gov: Governance, card: dict[str, Any], bundle: str, segment: str = "gold_standard") -> None:
    """The ``run`` event a gold run logs (``sovereign/runner.py``)."""
    key = next(e for e in gov.events() if e.get("submitter") == "alice")["submitter_key"]
    gov.record({"kind": "run", "bundle_sha256": bundle, "method": "acme", "segment": segment, "status": "ok",
                "run_card_hash": card["run_card_hash"], "submitter": "alice", "submitter_key": key})


@pytest.fixture
def world(tmp_path: Path, sealed: Path) -> World:
    gov = Governance(tmp_path / "governance")
    bundle = tmp_path / "bundle"
    shutil.copytree(EXAMPLES / "glossary-python", bundle, ignore=shutil.ignore_patterns("__pycache__"))
    digest = load_bundle(bundle).sha256
    key, _, public = new_key(tmp_path / "alice.key", "alice")
    add_submitter(gov, "alice", public)
    other, _, other_public = new_key(tmp_path / "bob.key", "bob")
    add_submitter(gov, "bob", other_public)
    good = _card([e["reference"] for e in ENTRIES])
    assert good["scores"]["composite"] >= DEPLOYABLE_THRESHOLD and good["scores"]["quality_tier"] == "fluent"
    store_full_card(good, sealed, gov.dir)
    _run_event(gov, good, digest)
    terms = tmp_path / "terms.txt"
    terms.write_text("The developer transfers the method's rights for Spanish to the Council (§8.3).\n")
    return World(gov, bundle, digest, key, other, good, terms)


def _accepted(card: dict[str, Any]) -> Any:
    verdict = judge(card["run_card_hash"], [2.6] * 40, 3)
    assert verdict.accepted  # the gate's own rule: 3 reviewers, 40 entries, mean 2.6
    return verdict


def _kinds(gov: Governance) -> list[str]:
    return [e["kind"] for e in gov.events() if e["kind"].startswith("ownership")]


def test_the_full_trail_offer_accept_transfer(world: World) -> None:
    assert tuple(STATE_OF) == OWNERSHIP_KINDS  # every state's event kind is one the log accepts
    gov, bundle = world.gov, world.bundle_sha256
    state = offer(gov, world.good, _accepted(world.good), world.terms, who="council")
    assert state.state == "offered" and state.submitter == "alice"
    assert state.run_card_hash == world.good["run_card_hash"]
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--key", world.key,
                           "--governance", gov.dir)
    assert code == 0 and "accepted, signed by alice" in output, output
    code, output = _invoke("governance", "ownership", "transfer", world.bundle, "--who", "council",
                           "--governance", gov.dir)
    assert code == 0 and "transferred" in output, output
    assert _kinds(gov) == ["ownership_eligible", "ownership_offer", "ownership_accept", "ownership_transfer"]
    eligible = next(e for e in gov.events() if e["kind"] == "ownership_eligible")
    assert eligible["composite"] == world.good["scores"]["composite"] and eligible["reviewers"] == 3
    assert eligible["threshold"] == DEPLOYABLE_THRESHOLD == 0.70
    code, output = _invoke("governance", "ownership", "status", bundle[:16], "--governance", gov.dir)
    assert code == 0 and f"bundle {bundle}, submitter alice): transferred" in output, output
    rows = [line for line in output.splitlines() if line.strip()[:4].isdigit()]
    assert [r.split("│")[1].strip() for r in rows] == ["eligible", "offered", "accepted", "transferred"]
    assert "council" in rows[0] and "alice" in rows[2] and "review accepted by 3 reviewers" in output
    code, output = _invoke("governance", "ownership", "list", "--governance", gov.dir)
    assert code == 0 and "transferred" in output and "acme" in output


def test_offers_below_the_threshold_or_without_human_validation_are_refused(
        world: World, sealed: Path, tmp_path: Path, custodians: list[Custodian]) -> None:
    gov = world.gov
    low = _card([e["reference"].split()[0] for e in ENTRIES])  # one word per entry
    assert low["scores"]["composite"] < DEPLOYABLE_THRESHOLD
    store_full_card(low, sealed, gov.dir)
    _run_event(gov, low, "b" * 64)
    with pytest.raises(UserError, match=r"is below the Deployable threshold 0\.7") as caught:
        offer(gov, low, _accepted(low), world.terms)
    assert "\n" not in caught.value.one_line()
    unreviewed = judge(world.good["run_card_hash"], [2.6] * 40, 2)  # two reviewers are not a community
    with pytest.raises(UserError, match=r"human validation \(§7.2\) has not accepted it: 2 reviewer"):
        offer(gov, world.good, unreviewed, world.terms)
    with pytest.raises(UserError, match="review verdict is for another card"):
        offer(gov, world.good, _accepted(low), world.terms)
    assert _kinds(gov) == []  # a refused offer logs nothing

    # through the command: the §7.2 gate read from the review store, where nobody reviewed the card
    store = tmp_path / "private.db"
    from mt_eval.store import open_store

    open_store(str(store)).close()
    code, output = _invoke("governance", "ownership", "offer", world.good["run_card_hash"][:16], "--terms",
                           world.terms, "--review-db", store, "--identity", custodians[0].key,
                           "--governance", gov.dir)
    assert code == 2 and "human validation (§7.2) has not accepted it: 0 reviewer(s)" in output, output
    assert _kinds(gov) == []


def test_a_run_that_is_not_gold_or_a_revoked_method_is_not_offered(world: World, sealed: Path) -> None:
    gov = world.gov
    _run_event(gov, world.good, world.bundle_sha256, segment="held_out")  # the latest run of that card
    with pytest.raises(UserError, match="was on held_out with status ok"):
        offer(gov, world.good, _accepted(world.good), world.terms)
    _run_event(gov, world.good, world.bundle_sha256)
    gov.revoke(world.bundle_sha256, "consent withdrawn by the developer")
    with pytest.raises(UserError, match="was revoked"):
        offer(gov, world.good, _accepted(world.good), world.terms)
    assert _kinds(gov) == []


def test_illegal_decisions_and_transitions_are_refused(world: World, tmp_path: Path) -> None:
    gov, bundle = world.gov, world.bundle_sha256
    with pytest.raises(UserError, match="has no ownership record"):
        sign_decision(gov, bundle, "accept", world.key)  # nothing offered yet
    code, output = _invoke("governance", "ownership", "transfer", world.bundle, "--governance", gov.dir)
    assert code == 2 and "no method offered here" in output
    offer(gov, world.good, _accepted(world.good), world.terms)
    with pytest.raises(UserError, match="already offered"):
        offer(gov, world.good, _accepted(world.good), world.terms)
    stranger, _, _ = new_key(tmp_path / "mallory.key", "mallory")  # never registered
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--key", stranger,
                           "--governance", gov.dir)
    assert code == 2 and "is not a registered submitter key" in output, output
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--key", world.other_key,
                           "--governance", gov.dir)
    assert code == 2 and "(bob) did not submit bundle" in output, output
    state = ownership_of(gov, bundle)
    assert state is not None and state.terms_sha256 is not None and state.offer_event is not None
    as_decline = make_signature(read_private_key(world.key),
                                decision_message("decline", bundle, state.terms_sha256, state.offer_event), None)
    with pytest.raises(UserError, match="signature is not valid for this offer"):
        decide(gov, bundle, "accept", as_decline)  # a decline's signature is not an acceptance
    code, output = _invoke("governance", "ownership", "transfer", world.bundle, "--governance", gov.dir)
    assert code == 2 and "is offered (only from accepted)" in output
    assert decide(gov, bundle, "accept", sign_decision(gov, bundle, "accept", world.key)).state == "accepted"
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--key", world.key,
                           "--governance", gov.dir)
    assert code == 2 and "cannot accept: the method of bundle" in output and "is accepted (only from offered)" in output
    code, output = _invoke("governance", "ownership", "decline", bundle[:12], "--key", world.key,
                           "--governance", gov.dir)
    assert code == 2 and "is accepted (only from offered)" in output
    (world.bundle / "extra.txt").write_text("a file added after the run\n")  # not the method that was run
    code, output = _invoke("governance", "ownership", "transfer", world.bundle, "--governance", gov.dir)
    assert code == 2 and "no method offered here" in output
    assert _kinds(gov) == ["ownership_eligible", "ownership_offer", "ownership_accept"]


def test_a_decline_allows_new_terms_and_an_old_signature_does_not_accept_them(world: World) -> None:
    gov, bundle = world.gov, world.bundle_sha256
    offer(gov, world.good, _accepted(world.good), world.terms)
    first_accept = sign_decision(gov, bundle, "accept", world.key)  # signed, never sent
    code, output = _invoke("governance", "ownership", "decline", bundle[:12], "--key", world.key, "--reason",
                           "terms too broad", "--governance", gov.dir)
    assert code == 0 and "declined" in output, output
    world.terms.write_text("Revised terms: rights for Spanish only, 90/10 revenue.\n")
    second = offer(gov, world.good, _accepted(world.good), world.terms)
    assert second.state == "offered" and second.offer_event != first_accept.signature
    with pytest.raises(UserError, match="not valid for this offer"):
        decide(gov, bundle, "accept", first_accept)  # made over the first offer's terms
    assert _kinds(gov) == ["ownership_eligible", "ownership_offer", "ownership_decline", "ownership_offer"]


def test_a_tampered_log_refuses_every_ownership_step(world: World) -> None:
    gov = world.gov
    offer(gov, world.good, _accepted(world.good), world.terms)
    log = gov.dir / LOG
    lines = log.read_bytes().splitlines(keepends=True)
    eligible = next(i for i, ln in enumerate(lines) if b'"ownership_eligible"' in ln)
    lines[eligible] = lines[eligible].replace(b'"reviewers":3', b'"reviewers":9')  # a rewritten record
    log.write_bytes(b"".join(lines))
    with pytest.raises(UserError, match="audit log fails verification"):
        ownership_of(gov, world.bundle_sha256)
    code, output = _invoke("governance", "ownership", "accept", world.bundle_sha256[:12], "--key", world.key,
                           "--governance", gov.dir)
    assert code == 2 and "audit log fails verification" in output
    code, output = _invoke("governance", "ownership", "status", world.bundle_sha256[:12], "--governance", gov.dir)
    assert code == 2 and "audit log fails verification" in output


def test_a_deployable_composite_capped_by_critical_errors_or_a_revoked_key_does_not_pass(world: World) -> None:
    capped = {"run_card_hash": world.good["run_card_hash"],
              "scores": {"composite": 0.72, "quality_tier": "functional", "critical_error_rate": 0.12}}
    [problem] = eligibility_problems(capped, _accepted(world.good))
    assert "reaches 0.7 but the card's tier is functional (critical_error_rate 0.12)" in problem
    assert eligibility_problems(world.good, _accepted(world.good)) == []
    offer(world.gov, world.good, _accepted(world.good), world.terms)
    revoke_submitter(world.gov, "alice", "key lost")
    code, output = _invoke("governance", "ownership", "accept", world.bundle_sha256[:12], "--key", world.key,
                           "--governance", world.gov.dir)
    assert code == 2 and "is revoked (key lost)" in output, output


def test_the_developer_signs_a_decision_file_away_from_governance(world: World, tmp_path: Path) -> None:
    gov, bundle = world.gov, world.bundle_sha256
    state = offer(gov, world.good, _accepted(world.good), world.terms)
    code, output = _invoke("governance", "ownership", "status", bundle[:12], "--governance", gov.dir)
    assert f"terms sha256 {state.terms_sha256}, offer {state.offer_event}" in output  # what the developer is sent
    received = tmp_path / "received-terms.txt"
    received.write_bytes(world.terms.read_bytes())
    made = tmp_path / "developer" / "decision.json"
    made.parent.mkdir()
    code, output = _invoke("governance", "ownership", "sign", bundle, "--decision", "accept", "--terms", received,
                           "--offer", state.offer_event, "--key", world.key, "--out", made)
    assert code == 0, output
    assert not (tmp_path / "developer" / "governance").exists()  # no governance folder on the developer's side
    code, output = _invoke("governance", "ownership", "decline", bundle[:12], "--signature", made,
                           "--governance", gov.dir)
    assert code == 2 and "records the decision 'accept', not 'decline'" in output
    forged = json.loads(made.read_text())
    forged["decision"] = "decline"  # the field edited, the signature kept
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    code, output = _invoke("governance", "ownership", "decline", bundle[:12], "--signature", tmp_path / "forged.json",
                           "--governance", gov.dir)
    assert code == 2 and "signature is not valid for this offer" in output
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--signature", made, "--key", world.key,
                           "--governance", gov.dir)
    assert code == 2 and "one of them" in output
    code, output = _invoke("governance", "ownership", "accept", bundle[:12], "--signature", made,
                           "--governance", gov.dir)
    assert code == 0 and "accepted, signed by alice" in output, output
    assert _kinds(gov) == ["ownership_eligible", "ownership_offer", "ownership_accept"]


def test_a_method_revoked_after_the_offer_is_neither_accepted_nor_transferred(world: World) -> None:
    """Governance may revoke at any time (§8.2.6): a revocation between the offer and the decision stops the
    trail, as it stops a new offer."""
    gov, bundle = world.gov, world.bundle_sha256
    offer(gov, world.good, _accepted(world.good), world.terms)
    accept = sign_decision(gov, bundle, "accept", world.key)
    gov.revoke(bundle, "the community withdrew consent")
    with pytest.raises(UserError, match="was revoked"):
        decide(gov, bundle, "accept", accept)
    gov.reinstate(bundle, "consent given again")
    decide(gov, bundle, "accept", accept)
    gov.revoke(bundle, "cheating found")
    code, output = _invoke("governance", "ownership", "transfer", world.bundle, "--governance", gov.dir)
    assert code == 2 and "was revoked" in output, output
    assert _kinds(gov)[-1] == "ownership_accept"

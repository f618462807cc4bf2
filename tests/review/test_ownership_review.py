"""§8.3 ownership transfer through the real §7.2 gate (issue 25 item 2): ``governance ownership offer`` reads
the review verdict from the store where governance reviewed the full card, as ``governance promote`` does.

The full card is the review tests' ``near`` card (the 200-entry eng→spa references with one word dropped
in every fifth line: a deployable or fluent tier), published in a real SQLite store; three attentive
simulated reviewers rate a 60-entry campaign of it (``review_helpers``), the gate accepts it, and only then
does the offer go through; before the third reviewer it is refused with the gate's own reason. The card is
stored encrypted to a real age custodian as a gold run stores it, and the log names it as a gold run.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from review_helpers import cli, review

from mt_eval.runcard.signing import new_key
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import store_full_card
from mt_eval.sovereign.submitters import add_submitter
from mt_eval.sovereign.vault import keygen, seal

REPO = Path(__file__).resolve().parents[2]


def _gold_run_store(tmp_path: Path, card: dict[str, object]) -> tuple[Governance, Path, Path, str]:
    """A governance folder holding ``card`` as the stored full card of a gold run of a signed bundle."""
    corpus = json.loads((REPO / "examples" / "ntrex128-eng-spa.json").read_text(encoding="utf-8"))
    corpus["entries"] = corpus["entries"][:6]
    for i, entry in enumerate(corpus["entries"]):
        entry["segment"] = "gold_standard" if i < 3 else "development"
    (tmp_path / "corpus.json").write_text(json.dumps(corpus, ensure_ascii=False), encoding="utf-8")
    identity = tmp_path / "custodian.key"
    seal(tmp_path / "corpus.json", ["gold_standard"], [keygen(identity)], tmp_path / "vault")
    gov = Governance(tmp_path / "governance")
    store_full_card(card, tmp_path / "vault", gov.dir)
    bundle = tmp_path / "bundle"
    shutil.copytree(REPO / "examples" / "bundles" / "glossary-python", bundle,
                    ignore=shutil.ignore_patterns("__pycache__"))
    digest = load_bundle(bundle).sha256
    key, _, public = new_key(tmp_path / "dev.key", "dev")
    submitter = add_submitter(gov, "dev", public)
    gov.record({"kind": "run", "bundle_sha256": digest, "method": "near", "segment": "gold_standard",
                "status": "ok", "run_card_hash": card["run_card_hash"], "submitter": "dev",
                "submitter_key": submitter.key})
    return gov, identity, key, digest


@pytest.mark.slow
def test_an_offer_goes_through_only_once_the_review_gate_accepts_the_full_card(
        published: tuple[str, dict[str, str]], verified: dict[str, object], tmp_path: Path) -> None:
    db, hashes = published
    card = verified["near"].card  # type: ignore[attr-defined]
    assert card["run_card_hash"] == hashes["near"] and card["scores"]["quality_tier"] in ("deployable", "fluent")
    gov, identity, key, bundle = _gold_run_store(tmp_path, card)
    terms = tmp_path / "terms.txt"
    terms.write_text("Rights for Spanish to the Council; attribution kept (§8.3).\n")
    made = cli("review", "create", "--db", db, "--card", hashes["near"], "--card", hashes["half"], "--size", 60,
               "--seed", 4, "--name", "es-own")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    offer = ("governance", "ownership", "offer", hashes["near"][:16], "--terms", terms, "--review-db", db,
             "--identity", identity, "--governance", gov.dir)
    for seed, name in enumerate(("ana", "ben")):
        done = cli("review", "import", review(db, "es-own", name, "attentive", seed, tmp_path), "--db", db)
        assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    refused = cli(*offer)
    assert refused.exit_code == 2  # type: ignore[attr-defined]
    assert "human validation (§7.2) has not accepted it: 2 reviewer(s) passed" in refused.output  # type: ignore[attr-defined]
    done = cli("review", "import", review(db, "es-own", "cem", "attentive", 9, tmp_path), "--db", db)
    assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    offered = cli(*offer)
    assert offered.exit_code == 0 and f"bundle {bundle})" in offered.output, offered.output  # type: ignore[attr-defined]
    eligible = next(e for e in gov.events() if e["kind"] == "ownership_eligible")
    assert eligible["reviewers"] == 3 and eligible["entries"] == 60 and eligible["review_lower"] >= 1.5
    accepted = cli("governance", "ownership", "accept", bundle[:12], "--key", key, "--governance", gov.dir)
    assert accepted.exit_code == 0 and "accepted, signed by dev" in accepted.output  # type: ignore[attr-defined]

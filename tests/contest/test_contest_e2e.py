"""The must-show contest (issue 25): created, entered by three entrants (an Apertium bundle, a weights-only tiny
model, a hostile bundle), qualified on the public dev split, approved, executed on the sealed secret split,
results hidden before close (the public view and a public export), ranked, closed, exported with ranks, all
through the CLI (typer's CliRunner) against the real parts: bubblewrap, Apertium eng-spa, a transformers
checkpoint run in-process with no submitted code, age vaults, the hash-chained log.

References: the exported values are recomputed with sacrebleu (``CHRF(word_order=2)``) on the outputs and
references of each decrypted full card; the ranking's signature is checked from the export alone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sacrebleu.metrics import CHRF
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.contest.ranking import CONTEXT
from mt_eval.runcard.signing import Signature, new_key
from mt_eval.sovereign.public_card import load_full_card
from support.contest import CORPUS, apertium_bundle, custodian, hostile_bundle, record_consent, tiny_model
from support.sovereign import write_policy

runner = CliRunner()


def cli(*args: str | Path | int) -> Any:
    return runner.invoke(app, [str(a) for a in args])


def ok(*args: str | Path | int) -> Any:
    result = cli(*args)
    assert result.exit_code == 0, result.output
    return result


def _numbers(value: float) -> list[str]:
    return [repr(value), f"{value:.2f}", f"{value:.1f}"]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("apertium") is None,
                    reason="needs bubblewrap and Apertium eng-spa")
def test_contest_from_create_to_export(tmp_path: Path) -> None:
    root = tmp_path / "contests" / "eng-spa"
    key, recipient = custodian(tmp_path)
    organiser, _, _ = new_key(tmp_path / "organiser.key", signer="Language Council")
    record_consent(root, tmp_path)
    write_policy(root / "governance")  # tiny sandbox limits: the hostile bundle ends in seconds
    # a bar of 0 so the weights-only model, which translates nonsense, runs too: two executed entries to rank
    ok("contest", "create", root, "--corpus", CORPUS, "--id", "eng-spa", "--title", "eng→spa", "--organiser",
       "Language Council", "--seed", "11", "--dev-size", "12", "--secret-size", "20", "--threshold", "0",
       "--recipient", recipient)  # fmt: skip
    entrants = [("alice", apertium_bundle(tmp_path), "bundle"), ("tiny-lab", tiny_model(tmp_path), "model"),
                ("mallory", hostile_bundle(tmp_path, root, key), "bundle")]  # fmt: skip
    for who, artefact, kind in entrants:
        ok("contest", "submit", root, artefact, "--entrant", who, "--kind", kind)
    verdicts = [ok("contest", "qualify", root, n).output for n in (1, 2, 3)]
    assert "qualified" in verdicts[0] and "qualified" in verdicts[1] and "not qualified" in verdicts[2]
    assert "failed" in verdicts[2] and not (root / "pwned").exists() and not Path("/usr/pwned").exists()
    refused = cli("contest", "approve", root, 3, "--custodian", "custodian")  # the hostile entry stops here
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    for n in (1, 2):
        ok("contest", "approve", root, n, "--custodian", "custodian")
        ok("contest", "execute", root, n, "--identity", key)

    # before close: the organiser sees values, the public view and a public export show none of them
    inside = json.loads(ok("contest", "show", root, "--organiser", "--json").stdout)
    values = [v for e in inside["entries"] if e["value"] is not None for v in (e["value"], *e["ci"])]
    assert len(values) == 6 and [e["state"] for e in inside["entries"]] == ["executed", "executed", "not-qualified"]
    public = ok("contest", "show", root, "--json").stdout
    assert json.loads(public)["results_hidden"] is True
    assert not [n for v in values for n in _numbers(v) if n in public]
    assert not [name for name in ("alice", "tiny-lab", "mallory") if name in public]
    table = ok("contest", "show", root).output
    assert "hidden until close" in table and not [n for v in values for n in _numbers(v)[1:] if n in table]
    early = cli("contest", "export", root, "-o", tmp_path / "early.json")
    assert early.exit_code == 2 and "hidden until close; export refused" in early.output
    assert len(early.output.strip().splitlines()) == 1 and not (tmp_path / "early.json").exists()

    ok("contest", "rank", root, "--identity", key, "--key", organiser)
    ok("contest", "close", root, "--key", organiser)
    late = cli("contest", "submit", root, apertium_bundle(tmp_path / "late"), "--entrant", "late")
    assert late.exit_code == 2 and "closed" in late.output

    ok("contest", "export", root, "-o", tmp_path / "results.json")
    exported = json.loads((tmp_path / "results.json").read_text())
    rows = {r["entry"]: r for r in exported["entries"]}
    assert (rows[1]["rank"], rows[2]["rank"], rows[3]["rank"]) == (1, 2, None)  # Apertium beats nonsense
    assert (rows[1]["entrant"], rows[3]["state"], rows[3]["value"]) == ("Entrant 1", "not-qualified", None)
    for n in (1, 2):  # each exported value is sacrebleu's chrF++ on the entry's own secret-split outputs
        full = load_full_card(root / "governance", rows[n]["full_run_card_hash"], key)
        hyps = [r.get("predicted") or "" for r in full["results"]]
        chrf = CHRF(word_order=2).corpus_score(hyps, [[r["reference"] for r in full["results"]]]).score
        assert rows[n]["value"] == pytest.approx(chrf, abs=0.01) and len(hyps) == 20
    ranking = exported["ranking"]
    signature = Signature(ranking["key_id"], ranking["public_key"], ranking["signature"], None, "")
    assert signature.check(CONTEXT + ranking["ranking_sha256"].encode()) is None
    shown = ok("contest", "show", root).output
    assert "closed" in shown and "hidden until close" not in shown

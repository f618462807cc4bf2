"""Community consent records gate sealing and gold runs (Benchmark Spec §11.1.7, §8.2.6; issue 25 item 2).

Through the commands, on a small real corpus (NTREX-128 eng→spa: 4 gold, 4 development entries): sealing
without a record is refused in one line naming the command that records one; a record for another
dataset, or one not covering the segments sealed, does not count; with a record the vault is sealed;
revoking consent refuses the next preflight and gold run, reinstating allows them again; the audit log's
hash chain holds every consent event, and deleting the revocation from it does not bring the runs back.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from pathlib import Path

import pytest
from submitter_fixtures import sign_up
from typer.testing import CliRunner
from vault_fixtures import DATASET_ID, Custodian, give_consent

from mt_eval.cli import app
from mt_eval.corpus.loaders import load_corpus
from mt_eval.errors import UserError
from mt_eval.sovereign.consent import consents, require_consent
from mt_eval.sovereign.governance import LOG, Governance
from support.sovereign import CORPUS, EXAMPLES, write_policy

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args), terminal_width=400)
    return result.exit_code, result.output


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:8]
    for i, entry in enumerate(data["entries"]):
        entry["segment"] = "gold_standard" if i < 4 else "development"
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def _seal(corpus: Path, gov: Path, out: Path, recipient: str, segments: str = "gold_standard") -> tuple[int, str]:
    return _invoke("vault", "seal", str(corpus), "--segments", segments, "--recipient", recipient, "--out", str(out),
                   "--governance", str(gov))


def test_sealing_without_a_consent_record_is_refused_in_one_line(tmp_path: Path, corpus: Path,
                                                                  custodians: list[Custodian]) -> None:
    code, output = _seal(corpus, tmp_path / "gov", tmp_path / "vault", custodians[0].recipient)
    assert code == 2, output
    first = output.strip().splitlines()[0]
    assert DATASET_ID in first and "no community consent record" in first
    assert "mt-eval governance consent add --dataset ntrex128-eng-spa-demo --language es" in " ".join(output.split())
    assert not (tmp_path / "vault").exists()  # nothing encrypted, nothing written


def test_consent_for_another_dataset_or_a_narrower_scope_does_not_count(tmp_path: Path, corpus: Path,
                                                                         custodians: list[Custodian]) -> None:
    gov = tmp_path / "gov"
    give_consent(gov, dataset="some-other-set")  # consent given for another dataset is not this one's
    code, output = _seal(corpus, gov, tmp_path / "v1", custodians[0].recipient)
    assert code == 2 and "no community consent record" in output
    give_consent(gov, segments=("held_out",))  # the community allowed held_out only
    code, output = _seal(corpus, gov, tmp_path / "v2", custodians[0].recipient)
    assert code == 2 and "covers segments held_out" in output and not (tmp_path / "v2").exists()


def test_a_consent_record_names_its_document_by_sha256_and_keeps_a_copy(tmp_path: Path) -> None:
    gov = give_consent(tmp_path / "gov")
    document = tmp_path / "consent-ntrex128-eng-spa-demo-es.txt"
    digest = hashlib.sha256(document.read_bytes()).hexdigest()
    [record] = consents(Governance(gov))
    assert record.document_sha256 == digest and (gov / "consent" / digest).read_bytes() == document.read_bytes()
    assert record.segments == ("gold_standard", "held_out") and record.uses == ("evaluation",) and record.in_force
    with pytest.raises(UserError, match="already has consent in force"):
        give_consent(gov)
    code, output = _invoke("governance", "consent", "list", "--governance", str(gov))
    assert code == 0 and "ntrex128-eng-spa-demo (es): in force" in output and digest in output


def test_revoking_consent_blocks_the_next_run_and_reinstating_allows_it(tmp_path: Path, corpus: Path,
                                                                         custodians: list[Custodian]) -> None:
    gov = write_policy(tmp_path / "gov")
    code, output = _invoke("governance", "consent", "add", "--dataset", DATASET_ID, "--language", "es",
                           "--given-by", "Example Language Council", "--representative", "A. Speaker",
                           "--document", str(corpus), "--date", "2026-11-01", "--governance", str(gov))
    assert code == 0, output
    vault = tmp_path / "vault"
    code, output = _seal(corpus, gov, vault, custodians[0].recipient)
    assert code == 0, output
    bundle = tmp_path / "bundle"
    shutil.copytree(EXAMPLES / "glossary-python", bundle, ignore=shutil.ignore_patterns("__pycache__"))
    sign_up(gov, bundle)
    preflight = ("sovereign", "preflight", str(bundle), "--corpus", str(vault / "public.json"), "--governance",
                 str(gov), "--out", str(tmp_path / "P.json"), "--logs", str(tmp_path / "logs"))
    code, output = _invoke(*preflight)
    assert code == 0 and "preflight passed" in output, output

    def gold_run(out: str) -> tuple[int, str]:
        return _invoke("sovereign", "run", "--bundle", str(bundle), "--vault", str(vault), "--identity",
                       str(custodians[0].key), "--governance", str(gov), "--out", str(tmp_path / out))

    code, output = _invoke("governance", "consent", "revoke", "--dataset", DATASET_ID, "--language", "es",
                           "--reason", "council decision", "--date", "2026-11-20", "--governance", str(gov))
    assert code == 0, output
    code, output = gold_run("R1.json")
    assert code == 2 and not (tmp_path / "R1.json").exists()
    assert "consent (es) was revoked on 2026-11-20 (council decision)" in output.strip().splitlines()[0]
    code, output = _invoke(*preflight)
    assert code == 2 and "was revoked" in output
    assert not [e for e in Governance(gov).events() if e.get("kind") == "run"]  # a refused run never started

    code, output = _invoke("governance", "consent", "revoke", "--undo", "--dataset", DATASET_ID, "--language", "es",
                           "--reason", "consent given again", "--governance", str(gov))
    assert code == 0, output
    code, output = gold_run("R2.json")
    assert code == 0, output
    assert json.loads((tmp_path / "R2.json").read_text())["sovereign"]["entries"] == 4

    events = Governance(gov).events()  # verified: the chain holds every consent event
    kinds = [e["kind"] for e in events if e["kind"].startswith("consent")]
    assert kinds == ["consent", "consent_revoke", "consent_reinstate"]
    for before, after in itertools.pairwise(events):
        assert after["prev"] == before["hash"]


def test_deleting_the_revocation_from_the_log_does_not_bring_consent_back(tmp_path: Path, corpus: Path) -> None:
    gov = give_consent(tmp_path / "gov")
    Governance(gov).record({"kind": "consent_revoke", "dataset": DATASET_ID, "language": "es",
                            "reason": "withdrawn", "on": "2026-11-20"})
    info = load_corpus(corpus).info
    with pytest.raises(UserError, match="was revoked"):
        require_consent(Governance(gov), info, ["gold_standard"])
    log = gov / LOG
    log.write_bytes(b"".join(log.read_bytes().splitlines(keepends=True)[:-1]))  # the revocation removed
    with pytest.raises(UserError, match="audit log fails verification"):
        require_consent(Governance(gov), info, ["gold_standard"])

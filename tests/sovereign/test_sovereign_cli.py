"""End to end through the commands: a sealed gold segment (part A's vault fixtures), ``submission check``,
``sovereign preflight``, ``sovereign run``; then everything the submitter receives (RESULT.json, every
line the commands print, error messages) is grepped for every secret source and reference: none found.

The submitted bundle behaves on the public segment (so it passes preflight) and misbehaves on gold
entries: it prints their sources on stdout and stderr, emits a malformed line, exits non-zero, and
answers the others with their source (so the outputs scored are the secret texts themselves: only
scores may leave).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import vault_fixtures
from submitter_fixtures import sign_up
from typer.testing import CliRunner
from vault_fixtures import Custodian, give_consent, secret_strings

from mt_eval.cli import app
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import load_full_card
from mt_eval.sovereign.ranking import sealed_statistics
from support.sovereign import BUNDLES, EXAMPLES, write_policy

GOLD_ATTACKS = {3: ["stdout_source", None], 4: ["stderr_source", None], 5: ["malformed", None], 6: ["exit", None],
                7: ["read", "/etc/shadow"]}


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    dest = tmp_path / "submission"
    shutil.copytree(BUNDLES / "hostile", dest)
    (dest / "attacks.json").write_text(json.dumps(GOLD_ATTACKS))
    return dest


def test_seal_check_preflight_run_and_nothing_secret_reaches_the_submitter(
        tmp_path: Path, sealed: Path, custodians: list[Custodian], sovereign_corpus: Path, bundle: Path) -> None:
    gov = give_consent(write_policy(tmp_path / "governance"))  # the community consented to gold runs
    sign_up(gov, bundle)  # a registered submitter key signed it: BUNDLE.sig beside it, where the commands look
    key = str(custodians[0].key)
    received: list[str] = []

    def submitter(*args: str) -> tuple[int, str]:
        code, output = _invoke(*args)
        received.append(output)
        return code, output

    code, output = submitter("submission", "check", str(bundle))
    assert code == 0 and "sha256" in output
    code, output = submitter("sovereign", "run", "--bundle", str(bundle), "--vault", str(sealed), "--identity", key,
                             "--governance", str(gov), "--out", str(tmp_path / "R0.json"))
    assert code == 2 and "has not passed preflight" in output and not (tmp_path / "R0.json").exists()
    code, output = submitter("sovereign", "preflight", str(bundle), "--corpus", str(sealed / "public.json"),
                             "--governance", str(gov), "--out", str(tmp_path / "P.json"), "--logs",
                             str(tmp_path / "plogs"))
    assert code == 0 and "preflight passed" in output
    received += [(tmp_path / "P.json").read_text(), *(p.read_text() for p in (tmp_path / "plogs").iterdir())]
    result_path = tmp_path / "RESULT.json"
    code, output = submitter("sovereign", "run", "--bundle", str(bundle), "--vault", str(sealed), "--identity", key,
                             "--governance", str(gov), "--out", str(result_path))
    assert code == 0, output
    released = result_path.read_text()
    received.append(released)
    result = json.loads(released)
    assert set(result) == {"status", "scores", "failed", "breakdowns", "sovereign"}  # the release schema (§44)
    assert result["status"] == "ok"
    assert result["failed"] == "few" and result["breakdowns"] == {}  # 3 of 50 failed; per class: governance's log
    assert set(result["scores"]) == {"composite", "chrf_plus_plus"} and result["scores"]["chrf_plus_plus"] % 1 == 0
    sov = result["sovereign"]
    assert sov["segment"] == "gold_standard" and sov["entries"] == vault_fixtures.GOLD
    assert sov["egress"] == {"mode": "none"} and sov["terms_version"] == "sovereign-terms-1"
    assert sov["sandbox"]["memory_mb"] == 256 and sov["sandbox"]["seccomp_blocked"]

    secrets = secret_strings(sovereign_corpus)
    text = "\n".join(received)
    assert [s for s in secrets if s in text] == []  # no source or reference reaches the submitter

    # governance keeps what the submitter does not get: the stderr with the printed source, the full card
    events = Governance(gov).events()
    run = next(e for e in events if e.get("kind") == "run")
    assert run["status"] == "ok" and run["result_sha256"]
    registered = next(e for e in events if e.get("kind") == "submitter_add")
    assert run["submitter_key"] == registered["submitter_key"] and run["submitter"] == "dev"
    logs = next((gov / "sandbox-logs").iterdir())
    report = json.loads((logs / "sandbox_report.json").read_text())
    assert report["errors"] == {"protocol_error": 2, "crashed": 1}  # stdout_source and malformed; exit
    gold = json.loads(sovereign_corpus.read_text())["entries"][3]
    assert gold["source"] in (logs / "stderr.log").read_text()
    assert oct((logs / "stderr.log").stat().st_mode & 0o777) == "0o600"
    full = load_full_card(gov, run["run_card_hash"], custodians[0].key)
    assert full["method"]["config"]["bundle_sha256"] == sov["bundle_sha256"]
    # every gold entry but the 3 failed ones and the one that tried /etc/shadow answered with its source
    assert sum(1 for r in full["results"] if r["predicted"] == r["source"]) == vault_fixtures.GOLD - 4
    # the full card seals its statistics, so governance rank can test it (a gold run's card once sealed none)
    assert sealed_statistics(full).entry_ids == [r["entry_id"] for r in full["results"]]


def test_a_bundle_changed_after_preflight_is_refused(tmp_path: Path, sealed: Path, custodians: list[Custodian],
                                                     bundle: Path) -> None:
    gov = give_consent(write_policy(tmp_path / "governance"))  # the community consented to gold runs
    sign_up(gov, bundle)
    code, _ = _invoke("sovereign", "preflight", str(bundle), "--corpus", str(sealed / "public.json"),
                      "--governance", str(gov), "--out", str(tmp_path / "P.json"), "--logs", str(tmp_path / "l"))
    assert code == 0
    (bundle / "README.md").write_text("changed\n")
    code, output = _invoke("sovereign", "run", "--bundle", str(bundle), "--vault", str(sealed), "--identity",
                           str(custodians[0].key), "--governance", str(gov), "--out", str(tmp_path / "R.json"))
    assert code == 2 and "the signature is for bundle" in output  # the old signature does not cover the change
    sign_up(gov, bundle, name="dev2")  # signed again, it still has not passed preflight
    code, output = _invoke("sovereign", "run", "--bundle", str(bundle), "--vault", str(sealed), "--identity",
                           str(custodians[0].key), "--governance", str(gov), "--out", str(tmp_path / "R.json"))
    assert code == 2 and "has not passed preflight" in output and "Traceback" not in output


def test_a_failing_preflight_says_which_error_class(tmp_path: Path, sealed: Path) -> None:
    dest = tmp_path / "crashy"
    shutil.copytree(BUNDLES / "hostile", dest)
    public = json.loads((sealed / "public.json").read_text())["entries"]
    first = next(e["id"] for e in public if e.get("segment", "development") == "development")
    (dest / "attacks.json").write_text(json.dumps({first: ["exit", None]}))
    gov = write_policy(tmp_path / "governance")
    sign_up(gov, dest)
    code, output = _invoke("sovereign", "preflight", str(dest), "--corpus", str(sealed / "public.json"),
                           "--governance", str(gov), "--out", str(tmp_path / "P.json"), "--logs", str(tmp_path / "l"))
    assert code == 1 and "preflight failed: crashed" in output
    assert json.loads((tmp_path / "P.json").read_text())["failed"] != "none"
    assert json.loads((tmp_path / "l" / "sandbox_report.json").read_text())["errors"] == {"crashed": 1}
    assert not Governance(gov).preflight_passed(json.loads((tmp_path / "P.json").read_text())["sovereign"]
                                                ["bundle_sha256"])


def test_a_result_carrying_a_secret_n_gram_is_not_released(tmp_path: Path, sealed: Path, sovereign_corpus: Path,
                                                           custodians: list[Custodian]) -> None:
    gold_source = json.loads(sovereign_corpus.read_text())["entries"][0]["source"]
    dest = tmp_path / "guess"
    shutil.copytree(EXAMPLES / "glossary-python", dest)
    manifest = (dest / "method.toml").read_text().replace('version = "1.0"', f"version = {json.dumps(gold_source)}")
    (dest / "method.toml").write_text(manifest)  # a name that happens to (or tries to) probe a secret text
    gov = give_consent(write_policy(tmp_path / "governance"))
    sign_up(gov, dest)
    code, _ = _invoke("sovereign", "preflight", str(dest), "--corpus", str(sealed / "public.json"),
                      "--governance", str(gov), "--out", str(tmp_path / "P.json"), "--logs", str(tmp_path / "l"))
    assert code == 0
    code, output = _invoke("sovereign", "run", "--bundle", str(dest), "--vault", str(sealed), "--identity",
                           str(custodians[0].key), "--governance", str(gov), "--out", str(tmp_path / "R.json"))
    assert code == 2 and "release refused" in output and gold_source not in output
    assert not (tmp_path / "R.json").exists()
    assert [e["status"] for e in Governance(gov).events() if e.get("kind") == "run"] == ["release_refused"]

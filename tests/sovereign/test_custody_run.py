"""A gold run on a vault held by quorum, end to end through the commands (the sandbox runs here).

``vault keygen --shares 3 --threshold 2``, ``vault seal --custody``, ``sovereign preflight``, then
``sovereign run``: refused with an identity file (even the real identity, rebuilt and saved), refused
with shares until two distinct custodians approved in the audit log, run once with the approvals, and
refused again afterwards (each approval serves one run). Nothing a command prints holds a share or the
identity.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import vault_fixtures
from submitter_fixtures import sign_up
from typer.testing import CliRunner
from vault_fixtures import give_consent

from mt_eval.cli import app
from mt_eval.sovereign import custody
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import load_full_card
from support.sovereign import write_policy

sovereign_corpus = vault_fixtures.sovereign_corpus
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None,
                                reason="bubblewrap (bwrap) is not installed: apt-get install bubblewrap")


def test_a_gold_run_on_a_quorum_vault_needs_shares_and_fresh_approvals(
        tmp_path: Path, sovereign_corpus: Path, make_bundle: Callable[..., Path]) -> None:
    runner, printed = CliRunner(), []

    def invoke(*args: str) -> tuple[int, str]:
        result = runner.invoke(app, list(args))
        printed.append(result.output)
        return result.exit_code, result.output

    shares_dir, vault_dir = tmp_path / "custody", tmp_path / "vault"
    assert invoke("vault", "keygen", "--shares", "3", "--threshold", "2", "--out", str(shares_dir))[0] == 0
    assert invoke("vault", "seal", str(sovereign_corpus), "--custody", str(shares_dir / "custody.json"),
                  "--out", str(vault_dir), "--governance", str(give_consent(tmp_path / "governance")))[0] == 0
    share = {i: str(shares_dir / f"custodian-{i}.share") for i in (1, 2, 3)}
    bundle = make_bundle("glossary-python")
    gov = write_policy(tmp_path / "governance")
    sign_up(gov, bundle)
    sha = load_bundle(bundle).sha256
    code, output = invoke("sovereign", "preflight", str(bundle), "--corpus", str(vault_dir / "public.json"),
                          "--governance", str(gov), "--out", str(tmp_path / "P.json"), "--logs", str(tmp_path / "l"))
    assert code == 0, output

    run = ["sovereign", "run", "--bundle", str(bundle), "--vault", str(vault_dir), "--governance", str(gov),
           "--out", str(tmp_path / "RESULT.json")]  # fmt: skip
    record = custody.read_record(shares_dir / "custody.json")
    rebuilt = custody.reconstruct([custody.read_share(Path(share[i])) for i in (1, 2)], record)
    saved = tmp_path / "rebuilt.key"
    saved.write_text(f"{rebuilt}\n")
    saved.chmod(0o600)
    code, output = invoke(*run, "--identity", str(saved))
    assert code == 2 and "held by a quorum of 2 custodians" in output
    code, output = invoke(*run, "--identity", str(saved), "--share", share[1])
    assert code == 2 and "not both and not neither" in output
    code, output = invoke(*run, "--share", share[1], "--share", share[2])
    assert code == 2 and "needs 2 custodians' approvals since its last run; has 0" in output
    approve = ["governance", "approve", "--vault", str(vault_dir), "--bundle", sha, "--governance", str(gov)]
    for i in (1, 1):
        code, output = invoke(*approve, "--share", share[i], "--who", "ana")
        assert code == 0 and "custodian 1 approved one gold_standard run" in output
    code, output = invoke(*run, "--share", share[1], "--share", share[2])
    assert code == 2 and "has 1 (custodians 1)" in output  # one custodian approving twice is one custodian
    assert not (tmp_path / "RESULT.json").exists()
    assert invoke(*approve, "--share", share[3])[0] == 0
    code, output = invoke(*run, "--share", share[2], "--share", share[3])
    assert code == 0, output
    assert json.loads((tmp_path / "RESULT.json").read_text())["status"] == "ok"
    events = Governance(gov).events()
    gold = [e for e in events if e["kind"] == "run"]
    assert len(gold) == 1 and gold[0]["custody"] == {"split": record.split, "approved_by": [1, 3]}
    full = load_full_card(gov, gold[0]["run_card_hash"], custody.opening_key(None, [Path(share[1]),
                                                                                    Path(share[3])]))
    assert len(full["results"]) == vault_fixtures.GOLD  # stored for the quorum's recipient, opened by its shares
    code, output = invoke(*run, "--share", share[2], "--share", share[3])
    assert code == 2 and "has 0" in output  # the run consumed the approvals
    secrets = [str(rebuilt), *(custody.read_share(Path(p)).data.hex() for p in share.values())]
    assert not [s for s in secrets for text in printed if s in text]

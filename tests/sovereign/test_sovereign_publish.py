"""End to end to the leaderboard: seal a gold segment, preflight and run a real bundle twice in the sandbox
(``examples/bundles/glossary-python``: a Python class behind the harness's shim), make the public card from
the two agreeing runs, publish it, and grep every public face (the leaderboard and export output, the web
pages and API of the run, the board, the dataset) for every secret source and reference: none found.

What is public is also checked for what it must hold: the run's scores as the full card has them, the
``sovereign`` block, the tier "sovereign" and no entries.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import vault_fixtures
from fastapi.testclient import TestClient
from typer.testing import CliRunner
from vault_fixtures import Custodian, all_text, give_consent, secret_strings

from mt_eval.cli import app
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.public_card import load_full_card

REPO = Path(__file__).resolve().parents[2]
ORG = "Example Language Council"
sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed
pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (make deps)")


def _cli(*args: object) -> str:
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_two_agreeing_sandboxed_runs_published_without_a_secret_text(
        sealed: Path, custodians: list[Custodian], sovereign_corpus: Path, tmp_path: Path) -> None:
    gov, key, db = tmp_path / "governance", str(custodians[0].key), str(tmp_path / "board.db")
    bundle = shutil.copytree(REPO / "examples" / "bundles" / "glossary-python", tmp_path / "bundle")
    _cli("governance", "policy", "--organisation", ORG, "--governance", gov)
    give_consent(gov)  # the community's consent record: gold runs need it
    _cli("keys", "new", "-o", tmp_path / "dev.key", "--signer", "dev")  # the submitter's key, registered by governance
    _cli("governance", "submitter", "add", "dev", "--public-key", tmp_path / "dev.pub", "--governance", gov)
    _cli("submission", "sign", bundle, "--key", tmp_path / "dev.key")  # bundle.sig beside it, where preflight looks
    _cli("sovereign", "preflight", bundle, "--corpus", sealed / "public.json", "--governance", gov,
         "--out", tmp_path / "P.json", "--logs", tmp_path / "plogs")
    for name in ("R1", "R2"):
        _cli("sovereign", "run", "--bundle", bundle, "--vault", sealed, "--identity", key, "--governance", gov,
             "--out", tmp_path / f"{name}.json")
    runs = [e for e in Governance(gov).events() if e.get("kind") == "run"]
    assert [e["status"] for e in runs] == ["ok", "ok"]
    first, second = runs[0]["run_card_hash"], runs[1]["run_card_hash"]
    _cli("keys", "new", "-o", tmp_path / "gov.key", "--signer", ORG)
    _cli("governance", "card", first[:12], second[:12], "--identity", key, "--key", tmp_path / "gov.key",
         "--governance", gov, "--out", tmp_path / "public_card.json")
    _cli("keys", "register", tmp_path / "gov.pub", "--submitter", ORG, "--db", db)
    assert "inserted" in _cli("governance", "publish", tmp_path / "public_card.json", "--db", db, "--governance", gov)

    card: dict[str, Any] = json.loads((tmp_path / "public_card.json").read_text())
    full = load_full_card(gov, first, custodians[0].key)
    assert card["scores"]["composite"] == int(full["scores"]["composite"] * 100 + 1e-9) / 100  # floored (§44)
    assert card["results"] == []
    assert card["sovereign"]["bundle_sha256"] == runs[0]["bundle_sha256"]
    assert card["sovereign"]["agreement"]["second_run_card_hash"] == second
    assert card["sovereign"]["audit_line_sha256"] == runs[0]["hash"]

    faces = [json.dumps(card, ensure_ascii=False), all_text(card),
             _cli("leaderboard", "--db", db, "--json"), _cli("leaderboard", "--db", db),
             _cli("export", "--db", db, "--format", "jsonl"),
             _cli("export", "--db", db, "--entries", "--format", "jsonl")]
    board = json.loads(faces[2])
    assert [(r["verification_tier"], r["submitter"]) for r in board] == [("sovereign", ORG)]
    assert faces[5].strip() == ""  # no per-entry row: nothing to drill into
    from mt_eval.web.app import create_app

    with TestClient(create_app(db)) as client:
        for url in ("/", "/api/leaderboard", f"/runs/{card['run_card_hash']}", f"/api/runs/{card['run_card_hash']}",
                    f"/api/runs/{card['run_card_hash']}/entries", f"/datasets/{card['dataset']['id']}", "/datasets"):
            response = client.get(url)
            assert response.status_code == 200, (url, response.status_code)
            faces.append(response.text)
            if response.headers.get("content-type", "").startswith("application/json"):
                faces.append(all_text(response.json()))
    text = "\n".join(faces)
    secrets = secret_strings(sovereign_corpus)
    assert all(s in all_text(full) for s in secrets[: 2 * vault_fixtures.GOLD])  # the run saw every gold text
    assert [s for s in secrets if s in text] == []

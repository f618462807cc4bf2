"""Governance: the hash-chained audit log (every edit, deletion, reordering or truncation found), dynamic
consent (revoke, reinstate), the gold-run budget, the §9.2 two-run agreement.

References: ``hashlib`` over the log file's own bytes (the chain), hand-computed ±2 % bands (agreement).
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mt_eval.errors import UserError
from mt_eval.sovereign.governance import Governance, agree, card_scales

BUNDLE = "ab" * 32
KEY = "5e" * 32  # a submitter key's fingerprint (the budget counts per key: test_submitters.py)


def _run(gov: Governance, method: str = "acme-mt", segment: str = "gold_standard", bundle: str = BUNDLE,
         status: str = "ok", key: str = KEY) -> str:
    return gov.record({"kind": "run", "who": "dev@acme", "bundle_sha256": bundle, "method": method,
                       "segment": segment, "result_sha256": "cd" * 32, "status": status, "submitter_key": key})


def _lines(gov: Governance) -> list[bytes]:
    return gov.log_path.read_bytes().splitlines()


def test_the_log_is_a_hash_chain_of_its_own_bytes(tmp_path: Path) -> None:
    gov = Governance(tmp_path / "gov")
    hashes = [_run(gov), _run(gov, segment="development"), gov.revoke("other-method", "withdrawn")]
    lines = _lines(gov)
    assert hashes == [hashlib.sha256(line).hexdigest() for line in lines]
    objs = [json.loads(line) for line in lines]
    assert [o["seq"] for o in objs] == [1, 2, 3]
    assert objs[0]["prev"] == "0" * 64 and objs[1]["prev"] == hashes[0] and objs[2]["prev"] == hashes[1]
    assert objs[0]["who"] == "dev@acme" and objs[0]["bundle_sha256"] == BUNDLE
    assert abs(datetime.fromisoformat(objs[0]["when"]) - datetime.now(UTC)) < timedelta(minutes=1)
    assert gov.verify_log() == []
    assert [e["hash"] for e in gov.events()] == hashes


@pytest.mark.parametrize("damage, expected", [
    ("edit", "line 3: prev does not match line 2"),
    ("delete", "line 2: seq is 3"),
    ("swap", "line 2: seq is 3"),
    ("truncate", "audit.head says 4 lines"),
    ("head", "audit.head is missing"),
    ("append", "audit.head says 4 lines"),
    ("garbage", "line 4: not a JSON object"),
])
def test_every_kind_of_tampering_is_found(tmp_path: Path, damage: str, expected: str) -> None:
    gov = Governance(tmp_path / "gov")
    for _ in range(4):
        _run(gov)
    lines = _lines(gov)
    if damage == "edit":  # a run made to look like a development run (so it escapes the budget)
        lines[1] = lines[1].replace(b'"segment":"gold_standard"', b'"segment":"development"')
    elif damage == "delete":
        del lines[1]
    elif damage == "swap":
        lines[1], lines[2] = lines[2], lines[1]
    elif damage == "truncate":
        del lines[-1]
    elif damage == "head":
        gov.head_path.unlink()
    elif damage == "append":  # a well-chained forged line: only the head catches it
        forged = {**json.loads(lines[-1]), "seq": 5, "prev": hashlib.sha256(lines[-1]).hexdigest()}
        lines.append(json.dumps(forged, sort_keys=True, separators=(",", ":")).encode())
    else:
        lines[3] = b"{oops"
    gov.log_path.write_bytes(b"\n".join(lines) + b"\n")
    problems = gov.verify_log()
    assert problems and any(p.startswith(expected) for p in problems), problems
    with pytest.raises(UserError, match="the audit log fails verification"):
        gov.check_allowed(BUNDLE, "acme-mt", KEY)
    with pytest.raises(UserError, match="the audit log fails verification"):
        _run(gov)  # nothing more is appended to a broken log


def test_record_refusals_and_the_logs_own_clock(tmp_path: Path) -> None:
    gov = Governance(tmp_path / "gov")
    with pytest.raises(UserError, match="'seq' is the log's own"):
        gov.record({"seq": 1})
    with pytest.raises(UserError, match="unknown audit event kind 'party'"):
        gov.record({"kind": "party"})
    key = "AGE-SECRET-KEY-1QQQ"
    with pytest.raises(UserError, match=r"event\.detail\.env holds a private key") as refused:
        gov.record({"detail": {"env": f"KEY={key}"}})
    assert key not in str(refused.value)
    assert not gov.log_path.exists() or key.encode() not in gov.log_path.read_bytes()
    gov.record({"method": "m", "when": "2001-01-01T00:00:00+00:00"})  # a back-dated run is not believed
    event = gov.events()[-1]
    assert event["reported_when"] == "2001-01-01T00:00:00+00:00"
    assert event["when"].startswith(str(datetime.now(UTC).year))


def test_budget_three_submissions_per_thirty_days_each_run_twice(tmp_path: Path) -> None:
    gov = Governance(tmp_path / "gov")
    bundles = [f"{i:02d}" * 32 for i in range(4)]
    for bundle in bundles[:3]:
        gov.check_allowed(bundle, "acme-mt", KEY, "acme")
        _run(gov, bundle=bundle)
    _run(gov, bundle=bundles[3], segment="development")  # runs on public segments are free
    with pytest.raises(UserError, match=r"'acme' \(key 5e5e5e5e5e5e…\) has used its 3 gold submissions of the last "
                                        "30 days; the next is allowed after") as spent:
        gov.check_allowed(bundles[3], "acme-mt", KEY, "acme")
    assert "\n" not in str(spent.value)
    gov.check_allowed(bundles[0], "acme-mt", KEY)  # the same bundle again: the §9.2 second execution
    _run(gov, bundle=bundles[0], status="timeout")  # failed runs count too
    with pytest.raises(UserError, match="already ran 2 time"):
        gov.check_allowed(bundles[0], "acme-mt", KEY)
    gov.check_allowed(bundles[3], "acme-mt", "6f" * 32)  # per submitter key
    assert {b: len(t) for b, t in gov.submissions(KEY).items()} == {bundles[0]: 2, bundles[1]: 1, bundles[2]: 1}
    assert gov.submissions(KEY, now=datetime.now(UTC) + timedelta(days=31)) == {}
    gov.set_policy(submissions=4, organisation="Fundació Exemple", models=("test/translator", "m2"))
    gov.check_allowed(bundles[3], "acme-mt", KEY)
    assert gov.policy().organisation == "Fundació Exemple" and gov.policy().days == 30
    assert gov.policy().models == ("test/translator", "m2")  # [egress] models, read back from policy.toml
    assert gov.events()[-1]["kind"] == "policy" and gov.events()[-1]["models"] == ["test/translator", "m2"]
    gov.policy_path.write_text('[budget]\nsubmissions = "three"\n')
    with pytest.raises(UserError, match="submissions must be a whole number ≥ 0"):
        gov.check_allowed(bundles[3], "acme-mt", KEY)
    gov.policy_path.write_text("[egress]\nmodel = ['m']\n")
    with pytest.raises(UserError, match="unknown policy key 'model'"):
        gov.policy()
    gov.policy_path.write_text("[egress]\nmodels = 'm'\n")
    with pytest.raises(UserError, match="models must be a list of model names"):
        gov.policy()
    gov.policy_path.write_text("[budget]\ngold_runs = 5\n")  # a misspelt key is not silently ignored
    with pytest.raises(UserError, match="unknown policy key 'gold_runs'"):
        gov.policy()
    gov.policy_path.write_text("[budget\n")
    with pytest.raises(UserError, match="not a readable policy file"):
        gov.policy()


def test_revocation_of_a_bundle_or_a_method_and_reinstatement(tmp_path: Path) -> None:
    gov = Governance(tmp_path / "gov")
    gov.revoke(BUNDLE, "the developer withdrew consent", who="dev@acme")
    with pytest.raises(UserError, match=r"bundle abababababab… was revoked \(the developer withdrew consent\)"):
        gov.check_allowed(BUNDLE, "acme-mt", KEY)
    gov.check_allowed("ef" * 32, "acme-mt", KEY)  # another bundle of the same method may run
    gov.revoke("acme-mt", "terms breached")
    with pytest.raises(UserError, match="method 'acme-mt' was revoked"):
        gov.check_allowed("ef" * 32, "acme-mt", KEY)
    gov.reinstate("acme-mt", "resolved")
    gov.check_allowed("ef" * 32, "acme-mt", KEY)
    assert set(gov.revoked()) == {BUNDLE}
    assert [e["kind"] for e in gov.events()] == ["revoke", "revoke", "reinstate"]  # history kept
    with pytest.raises(UserError, match="is not revoked"):
        gov.reinstate("acme-mt", "again")


def _append_many(directory: str, n: int) -> None:
    gov = Governance(Path(directory))
    for i in range(n):
        gov.record({"kind": "preflight", "method": f"m{i}", "status": "ok"})


def test_concurrent_writers_keep_the_chain(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path / "gov"), 15)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    gov = Governance(tmp_path / "gov")
    assert all(p.exitcode == 0 for p in procs)
    assert gov.verify_log() == [] and len(_lines(gov)) == 30


def test_two_run_agreement_is_two_percent(cards: dict[str, Path]) -> None:
    scales = card_scales(json.loads(cards["near"].read_text()))
    assert scales["chrf_plus_plus"] == 100.0 and scales["exact_match_rate"] == 1.0 and scales["composite"] == 1.0
    assert agree({"composite": 0.50, "chrf_plus_plus": 60.0}, {"composite": 0.51, "chrf_plus_plus": 58.8}, scales) == []
    off = agree({"composite": 0.50, "chrf_plus_plus": 60.0}, {"composite": 0.5101, "chrf_plus_plus": 58.7}, scales)
    assert [p.split(":")[0] for p in off] == ["chrf_plus_plus", "composite"]
    # at 0 the band is 2 % of the scale: 2 chrF++ points, 0.02 on a rate
    assert agree({"chrf_plus_plus": 0.0, "exact_match_rate": 0.0}, {"chrf_plus_plus": 1.9, "exact_match_rate": 0.019},
                 scales) == []
    assert len(agree({"chrf_plus_plus": 0.0}, {"chrf_plus_plus": 2.1}, scales)) == 1
    assert agree({"comet_score": None}, {"comet_score": None}) == []
    assert agree({"bleu": 30.0}, {"bleu": None}) == ["bleu: 30.0 in the first run, None in the second"]


def test_cli_audit_revoke_policy(tmp_path: Path) -> None:
    from typer.testing import CliRunner, Result

    from mt_eval.cli import app

    runner, gov_dir = CliRunner(), tmp_path / "gov"

    def cli(*args: str) -> Result:
        return runner.invoke(app, [*args, "--governance", str(gov_dir)])

    set_policy = cli("governance", "policy", "--submissions", "2", "--organisation", "Example Council",
                     "--model", "test/translator")
    assert set_policy.exit_code == 0 and "budget: 2 gold submissions per 30 days per submitter key, each run at " \
        "most 2 times" in set_policy.output, set_policy.output
    assert "egress models: test/translator" in set_policy.output
    revoked = cli("governance", "revoke", "acme-mt", "--reason", "consent withdrawn", "--who", "board")
    assert revoked.exit_code == 0 and "revoked acme-mt" in revoked.output
    assert "revoked: acme-mt (consent withdrawn)" in cli("governance", "policy").output
    audit = cli("governance", "audit")
    assert audit.exit_code == 0 and "chain intact: 2 events" in audit.output
    lines = cli("governance", "audit", "--json").output.splitlines()
    assert [json.loads(x)["kind"] for x in lines] == ["policy", "revoke"]
    log = gov_dir / "audit.jsonl"
    log.write_bytes(log.read_bytes().replace(b"consent withdrawn", b"no reason"))
    broken = cli("governance", "audit")
    assert broken.exit_code == 1 and "audit log broken" in broken.output
    undo = cli("governance", "revoke", "acme-mt", "--reason", "x", "--undo")
    assert undo.exit_code == 2 and "fails verification" in undo.output

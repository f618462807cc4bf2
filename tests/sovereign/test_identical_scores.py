"""A well-behaved Python bundle and the Apertium command bundle score identically inside the sandbox
(``preflight``, development entries) and outside it (``mt-eval run`` with the same method:
``plugin:glossary:GlossaryMethod``, and the harness's own ``apertium:eng-spa``, which is byte-identical
to ``apertium -u eng-spa`` per segment).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from submitter_fixtures import sign_up
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus.loaders import load_corpus
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.runner import preflight
from mt_eval.sovereign.sandbox import SandboxPolicy
from support.sovereign import EXAMPLES, TINY, write_policy, write_small_corpus


def _outside(corpus: Path, method: str, out: Path) -> dict:
    result = CliRunner().invoke(app, ["run", "-c", str(corpus), "--segment", "development", "--method", method,
                                      "-o", str(out), "--runs-dir", str(out.parent / "runs")])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


@pytest.mark.parametrize(("bundle", "method", "n"), [
    ("glossary-python", "plugin:glossary:GlossaryMethod", 30),
    ("apertium-command", "apertium:eng-spa", 10),
])
def test_inside_and_outside_the_sandbox_score_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        bundle: str, method: str, n: int) -> None:
    monkeypatch.syspath_prepend(str(EXAMPLES / "glossary-python"))
    corpus = write_small_corpus(tmp_path / "corpus.json", n)
    outside = _outside(corpus, method, tmp_path / "outside.json")
    policy = SandboxPolicy(**{**vars(TINY), "wall_seconds_per_entry": 10.0, "memory_mb": 1024})
    gov = write_policy(tmp_path / "gov", policy)
    signature = sign_up(gov, EXAMPLES / bundle, out=tmp_path / "bundle.sig")
    inside = preflight(load_bundle(EXAMPLES / bundle), load_corpus(corpus), gov, policy, signature=signature)
    assert inside.result["status"] == "ok" and inside.card is not None
    assert [r["predicted"] for r in inside.card["results"]] == [r["predicted"] for r in outside["results"]]
    for metric in [*outside["metrics"], "composite"]:
        assert inside.card["scores"][metric] == outside["scores"][metric], metric
    assert inside.result["scores"]["composite"] == int(outside["scores"]["composite"] * 100 + 1e-9) / 100  # §44

"""``--comet-model`` on run/score/verify: comet_score on the card with its checkpoint's name and sha256 (never its
path), in the fingerprint and never in the composite; verify recomputes it only with the same checkpoint (exit 2,
one line, without it or with another one) and catches a changed value. The tiny COMET checkpoints are the
comet tests' own fixture (tests/comet/conftest.py ``tiny``); skipped where unbabel-comet is not installed, except
the bad-path refusal, which needs no model."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from data_paths import NTREX
from mt_eval.cli import app
from mt_eval.runcard.layout import dumps
from mt_eval.runcard.seal import card_hash

# the slow stage (CI's second stage runs it on every submission): it imports torch (6-8 s per process)
pytestmark = pytest.mark.slow

COMET_TESTS = Path(__file__).resolve().parents[1] / "comet"
sys.path.insert(0, str(COMET_TESTS))  # the fixture imports tiny_comet from there
_spec = importlib.util.spec_from_file_location("comet_fixtures", COMET_TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)
tiny = _fixtures.tiny  # the comet tests' session fixture, not a second builder

runner = CliRunner()
N = 6


def _files(tmp: Path) -> list[str]:
    src = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:N]
    ref = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]
    hyp = [r if i % 2 else "Esto no tiene nada que ver." for i, r in enumerate(ref)]
    for name, lines in (("src", src), ("ref", ref), ("hyp", hyp)):
        (tmp / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ["score", "--source-file", str(tmp / "src.txt"), "--reference-file", str(tmp / "ref.txt"), "-l", "en-es",
            "-p", str(tmp / "hyp.txt"), "-b", "20", "--runs-dir", str(tmp / "runs")]


def test_a_bad_comet_path_is_one_line_before_any_work(tmp_path: Path) -> None:
    args = _files(tmp_path)
    assert runner.invoke(app, [*args, "-b", "0", "-o", str(tmp_path / "plain.json")]).exit_code == 0
    bad = ["--comet-model", str(tmp_path / "no-such-model")]
    for command in ([*args, "-o", str(tmp_path / "x.json")], ["verify", str(tmp_path / "plain.json")]):
        result = runner.invoke(app, [*command, *bad])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
        assert "--comet-model" in result.output and "no-such-model" in result.output
    assert not (tmp_path / "x.json").exists()


@pytest.fixture(scope="module")
def cards(tiny: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("comet-cards")
    args = _files(tmp)
    for name, extra in (("comet", ["--comet-model", str(tiny["a"])]), ("plain", [])):
        result = runner.invoke(app, [*args, "-o", str(tmp / f"{name}.json"), *extra])
        assert result.exit_code == 0, result.output
    return {"dir": tmp, "tiny": tiny}


def _card(cards: dict[str, Any], name: str) -> dict[str, Any]:
    return json.loads((cards["dir"] / f"{name}.json").read_text(encoding="utf-8"))


def test_the_card_records_the_checkpoint_and_keeps_comet_out_of_the_composite(cards: dict[str, Any]) -> None:
    from mt_eval.metrics.comet import CometConfig

    card, plain = _card(cards, "comet"), _card(cards, "plain")
    config = CometConfig.parse(str(cards["tiny"]["a"]))
    assert card["comet"] == config.card_block("es") and str(cards["tiny"]["a"]) not in json.dumps(card["comet"])
    # The registry block (decisions §69): an unregistered checkpoint is never validated for the run's target.
    assert card["comet"]["validated_for_target"] is False and "not a registered model" in card["comet"]["caveat"]
    components = card["fingerprint"]["components"]
    assert components["comet_checkpoint_sha256"] == config.sha256 and components["comet_model"] == "tiny-comet-a"
    assert card["fingerprint"]["hash"] != plain["fingerprint"]["hash"]
    values = [r["metrics"]["comet_score"] for r in card["results"]]
    assert all(isinstance(v, float) for v in values) and card["scores"]["comet_score"] == pytest.approx(sum(values) / N)
    assert plain["scores"]["comet_score"] is None and "comet" not in plain
    assert card["scores"]["composite"] == plain["scores"]["composite"]  # never in the composite
    assert [r["metrics"]["composite"] for r in card["results"]] == [r["metrics"]["composite"] for r in plain["results"]]


def test_verify_needs_the_same_checkpoint(cards: dict[str, Any]) -> None:
    path, tiny = str(cards["dir"] / "comet.json"), cards["tiny"]
    refused = runner.invoke(app, ["verify", path])
    assert refused.exit_code == 2 and "--comet-model" in refused.output and "tiny-comet-a" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    other = runner.invoke(app, ["verify", path, "--comet-model", str(tiny["b"])])
    assert other.exit_code == 2 and "hashes to" in other.output, other.output
    ok = runner.invoke(app, ["verify", path, "--comet-model", str(tiny["a"])])
    assert ok.exit_code == 0, ok.output
    assert runner.invoke(app, ["verify", str(cards["dir"] / "plain.json")]).exit_code == 0


def test_a_changed_comet_value_fails_verify(cards: dict[str, Any], tmp_path: Path) -> None:
    card = _card(cards, "comet")
    card["scores"]["comet_score"] += 0.01
    card["run_card_hash"] = card_hash(card)  # resealed: only recomputing COMET can catch it
    forged = tmp_path / "forged.json"
    forged.write_bytes(dumps(card))
    result = runner.invoke(app, ["verify", str(forged), "--comet-model", str(cards["tiny"]["a"])])
    assert result.exit_code == 1 and "scores.comet_score" in result.output, result.output

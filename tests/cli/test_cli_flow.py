"""The command line end to end: score a real output file, verify, show, and located errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
from cli_helpers import write_text_pair
from typer.testing import CliRunner

from mt_eval.cli import app

runner = CliRunner()
N = 40


@pytest.fixture(scope="module")
def pair(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_text_pair(ntrex_dir, tmp_path_factory.mktemp("cli"), "deu", N, ("en", "de"))


def _score(pair: dict[str, Path], *extra: str) -> tuple[int, dict, str]:
    out = pair["dir"] / f"card{len(extra)}.json"
    args = ["score", "--source-file", str(pair["src"]), "--reference-file", str(pair["ref"]),
            "--source-lang", "en", "--target-lang", "de", "--predictions", str(pair["hyp"]),
            "--runs-dir", str(pair["dir"] / "runs"), "--out", str(out), *extra]
    result = runner.invoke(app, args)
    card = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    return result.exit_code, card, result.output


def test_score_text_files_equals_sacrebleu(pair):
    code, card, output = _score(pair)
    assert code == 0, output
    hyps = pair["hyp"].read_text(encoding="utf-8").splitlines()
    refs = pair["ref"].read_text(encoding="utf-8").splitlines()
    s = card["scores"]
    assert s["chrf_plus_plus"] == sacrebleu.corpus_chrf(hyps, [refs], word_order=2).score
    assert s["chrf"] == sacrebleu.corpus_chrf(hyps, [refs]).score
    assert s["bleu"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert s["ter"] == sacrebleu.corpus_ter(hyps, [refs]).score
    assert card["metrics"]["bleu"]["signature"].startswith("nrefs:1|case:mixed|eff:no|tok:13a")
    assert card["dataset"]["entry_count"] == N and card["scores"]["errors"] == 0
    assert "composite" in output and "chrF++" in output


def test_selection_is_recorded_and_applied(pair):
    code, card, output = _score(pair, "--ids", "1-10,20")
    assert code == 0, output
    assert [r["entry_id"] for r in card["results"]] == [*range(1, 11), 20]
    assert card["dataset"]["selection"] == {"ids": "1-10,20"}


def test_verify_and_show(pair):
    code, card, output = _score(pair)
    assert code == 0, output
    path = pair["dir"] / "card0.json"
    ok = runner.invoke(app, ["verify", str(path)])
    assert ok.exit_code == 0 and "OK" in ok.output
    shown = runner.invoke(app, ["show", str(path), "--worst", "3"])
    assert shown.exit_code == 0
    for text in ("Scores", "Worst 3 entries", "cost: unknown", "not measured"):
        assert text in shown.output
    assert "by difficulty" not in shown.output  # plain text carries no difficulty: no one-group table
    assert "Cost" not in shown.output and "entries_per_minute" not in shown.output  # a replayed file: no usage
    card["scores"]["bleu"] += 0.5
    bad = pair["dir"] / "tampered.json"
    bad.write_text(json.dumps(card), encoding="utf-8")
    failed = runner.invoke(app, ["verify", str(bad)])
    assert failed.exit_code == 1
    assert "scores.bleu" in failed.output


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mt_eval", *args], capture_output=True, text=True, timeout=120)


def test_bad_input_is_one_line_exit_2_no_traceback(tmp_path, pair):
    corpus = tmp_path / "bad.json"
    corpus.write_text(json.dumps({
        "dataset": {"id": "d", "source_language": "en", "target_language": "es"},
        "entries": [{"id": 1, "source": "a", "reference": "b", "difficulty": 7}],
    }), encoding="utf-8")
    proc = _cli("validate", str(corpus))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "bad.json" in proc.stderr and "entry 1" in proc.stderr and "difficulty" in proc.stderr
    proc = _cli("run", "--corpus", str(corpus), "--method", "nosuch:thing")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = _cli("verify", str(tmp_path / "missing.json"))
    assert proc.returncode == 2 and "missing.json" in proc.stderr
    proc = _cli("score", "--source-file", str(pair["src"]), "--reference-file", str(pair["ref"]),
                "--source-lang", "en", "--target-lang", "not a code!", "--predictions", str(pair["hyp"]))
    assert proc.returncode == 2 and "BCP-47" in proc.stderr and "Traceback" not in proc.stderr


def test_debug_shows_the_traceback(tmp_path):
    proc = _cli("--debug", "verify", str(tmp_path / "missing.json"))
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_unknown_language_gets_a_generic_card_with_a_warning(pair, tmp_path):
    code, card, output = _score(pair, "--target-lang", "nv")  # Navajo: no shipped card
    assert code == 0, output
    assert card["dataset"]["target_language"] == "nv"
    assert any("generic card" in w for w in card["warnings"])
    assert card["profile"] == "B"

"""The metrics on the real XQuAD data (12 languages, ids shared across languages).

The repository's copy (``tests/data/xquad``) keeps ar, el, en, hi, th and zh whole (1190 questions: the tests
below pin numbers measured on all of them) and the first 12 of 48 articles (322 questions) of the rest.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qa_helpers import write_jsonl
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.qa.data import GoldSet, Prediction, load_gold
from mt_eval.qa.evaluate import score_system
from mt_eval.qa.run import RunOptions, run_qa
from mt_eval.stats.config import BootstrapConfig

XQUAD_LANGS = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]
WHOLE = {"ar", "el", "en", "hi", "th", "zh"}  # the languages tests/data/xquad keeps whole; the rest are sliced


def _gold(xquad_dir: Path, lang: str) -> GoldSet:
    return load_gold(xquad_dir / f"xquad.{lang}.json")


@pytest.mark.parametrize("lang", XQUAD_LANGS)
def test_gold_answers_as_predictions_score_one(xquad_dir: Path, lang: str) -> None:
    gold = _gold(xquad_dir, lang)
    assert len(gold.items) == (1190 if lang in WHOLE else 322)
    preds = {it.id: Prediction(it.id, it.answers[0]) for it in gold.items}
    result = score_system("gold", gold.items, preds, lang=lang)
    summary = result.summary()
    assert summary["em"] == summary["f1"] == 1.0
    assert summary["em_std"] == summary["f1_std"] == 0.0
    assert summary["rlc"] > 0.85  # some gold answers keep Latin names (Greek: "Lady Gaga")


def test_gold_as_predictions_through_the_cli(xquad_dir: Path, tmp_path: Path) -> None:
    gold = _gold(xquad_dir, "zh")
    preds = write_jsonl(tmp_path / "zh.jsonl", ({"id": it.id, "prediction": it.answers[0]} for it in gold.items))
    out = tmp_path / "metrics.json"
    result = CliRunner().invoke(app, ["qa",
        "score", "--gold", str(xquad_dir / "xquad.zh.json"), "--predictions", str(preds),
        "--lang", "zh", "--system", "gold", "--out", str(out), "--spec-block",  # the plain block (§56)
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "gold     | EM=1.000±0.000 | F1=1.000±0.000 | RLC=0.951±0.195 |" in result.stdout
    metrics = json.loads(out.read_text("utf-8"))["metrics"]["gold"]
    assert metrics["n"] == 1190.0 and metrics["em"] == metrics["f1"] == 1.0


@pytest.mark.parametrize("lang", ["th", "zh", "ar", "hi"])
def test_english_answers_scored_as_another_language_have_low_rlc(xquad_dir: Path, lang: str) -> None:
    english = _gold(xquad_dir, "en").by_id()
    gold = _gold(xquad_dir, lang)
    native = score_system("native", gold.items, {it.id: Prediction(it.id, it.answers[0]) for it in gold.items},
                          lang=lang)  # fmt: skip
    eng = score_system("english", gold.items, {it.id: Prediction(it.id, english[it.id].answers[0])
                                               for it in gold.items}, lang=lang)  # fmt: skip
    # Only the English answers without letters (numbers, years: 145 of 1190) escape: RLC 0.122.
    assert eng.rlc.mean() == pytest.approx(145 / 1190)
    assert eng.rlc_ok.mean() < 0.15
    assert native.rlc.mean() > 0.94 and native.rlc_ok.mean() > 0.94


@pytest.mark.parametrize("lang", ["th", "zh", "ar", "hi"])
def test_wrong_language_is_ranked_below_on_rlc_but_not_on_f1(xquad_dir: Path, tmp_path: Path, lang: str) -> None:
    """Two systems on the same questions:

    * ``wrong-lang`` answers every question correctly but in English (the XQuAD English answer);
    * ``right-lang`` answers in the target language, but with the answer to the *next* question.

    F1 does not see the language: it ranks ``wrong-lang`` at least as high (shared digits and names
    even make it higher). RLC ranks it far below, and the paired test says so significantly.
    """
    english = _gold(xquad_dir, "en").by_id()
    gold = _gold(xquad_dir, lang)
    items = gold.items
    wrong = write_jsonl(tmp_path / "wrong.jsonl",
                        ({"id": it.id, "prediction": english[it.id].answers[0]} for it in items))  # fmt: skip
    right = write_jsonl(tmp_path / "right.jsonl", (
        {"id": it.id, "prediction": items[(i + 1) % len(items)].answers[0]} for i, it in enumerate(items)
    ))  # fmt: skip
    report = run_qa(
        xquad_dir / f"xquad.{lang}.json",
        [("right-lang", right), ("wrong-lang", wrong)],
        RunOptions(lang=lang, bootstrap=BootstrapConfig(n_resamples=300)),
        baseline="right-lang",
    )
    r, w = report.systems["right-lang"].summary(), report.systems["wrong-lang"].summary()
    assert w["rlc"] < 0.2 < 0.9 < r["rlc"]
    assert w["rlc_ok"] < r["rlc_ok"]
    assert w["f1"] >= r["f1"]  # F1 does not rank the wrong-language system below
    rlc_test = report.paired_tests["wrong-lang"]["rlc"]
    assert rlc_test["delta"] < -0.7 and rlc_test["significant"] is True

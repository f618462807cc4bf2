"""``mt-eval qa score`` / ``qa compare`` through typer's CliRunner: outputs and user errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qa_helpers import write_jsonl
from typer.testing import CliRunner, Result

from mt_eval.cli import app

GOLD = [
    {"id": "q1", "question": "Capital of China?", "answers": ["北京"], "lang": "zh"},
    {"id": "q2", "question": "Height?", "answers": ["4429米", "4429 米"], "lang": "zh"},
    {"id": "q3", "question": "Year?", "answers": ["1990年"], "lang": "zh"},
]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, ["qa", *args])


@pytest.fixture
def gold(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "gold.jsonl", GOLD)


def _preds(tmp_path: Path, rows: list[dict[str, object]], name: str = "p.jsonl") -> Path:
    return write_jsonl(tmp_path / name, rows)


def _assert_user_error(result: Result, *fragments: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0]


def test_score_prints_spec_block_and_writes_metrics(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [
        {"id": "q1", "prediction": "北京"},
        {"id": "q2", "prediction": "4429m"},  # the spec's example: EM 0, F1 0.8
        {"id": "q3", "prediction": "答案是 1990 years"},  # RLC 3/8
    ])  # fmt: skip
    out = tmp_path / "out" / "metrics.json"
    result = invoke("score", "--gold", str(gold), "--predictions", str(preds), "--system", "lbrag",
                    "--out", str(out), "--spec-block")  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:3] == ["=" * 80, "Experiment Results Summary", "=" * 80]
    assert lines[3].startswith("lbrag    | EM=0.333±0.471 | F1=")
    assert "| Cost=0.0±0.0 | CNBE=0.00000±0.00000" in lines[3]  # nothing translated: CNBE is 0
    assert lines[4] == "=" * 80
    m = json.loads(out.read_text("utf-8"))["metrics"]["lbrag"]
    # q3: 答案是 1990 years vs 1990年 (chars): pred 答案是1990years (12), gold 1990年 (5), overlap 4
    f1_q3 = 2 * (4 / 12) * (4 / 5) / (4 / 12 + 4 / 5)
    assert m["f1"] == pytest.approx((1 + 0.8 + f1_q3) / 3)
    assert m["rlc"] == pytest.approx((1 + 0 + 3 / 8) / 3)  # the "m" of 4429m is not Chinese
    assert m["rlc_ok"] == pytest.approx(1 / 3)


def test_score_without_baseline_omits_cnbe_when_something_was_translated(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京", "token_count": 30}])
    out = tmp_path / "m.json"
    result = invoke("score", "--gold", str(gold), "--predictions", str(preds), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "CNBE" not in result.stdout
    assert "cnbe" not in json.loads(out.read_text("utf-8"))["metrics"]["system"]
    # the two unanswered questions are scored as empty answers and reported
    assert "system: 2 of 3 questions have no prediction" in result.stderr


def test_score_with_baseline_predictions(gold: Path, tmp_path: Path) -> None:
    base = _preds(tmp_path, [{"id": q["id"], "prediction": "不知道"} for q in GOLD], "base.jsonl")
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京", "token_count": 50},
                              {"id": "q2", "prediction": "4429米", "token_count": 0},
                              {"id": "q3", "prediction": "1990年", "token_count": 10}])  # fmt: skip
    out = tmp_path / "m.json"
    result = invoke("score", "--gold", str(gold), "--predictions", str(preds), "--system", "rag",
                    "--baseline-predictions", str(base), "--out", str(out))  # fmt: skip
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text("utf-8"))
    assert list(doc["metrics"]) == ["rag"]
    assert doc["metrics"]["rag"]["cnbe"] == pytest.approx((1 / 50 + 0 + 1 / 10) / 3)
    assert doc["paired_tests"]["baseline"] == "baseline"
    assert "Paired bootstrap vs baseline" in result.stdout


def test_only_predicted_and_null_predictions(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}, {"id": "q2", "prediction": None}])
    out = tmp_path / "m.json"
    result = invoke("score", "--gold", str(gold), "--predictions", str(preds), "--only-predicted", "--out", str(out))
    assert result.exit_code == 0, result.output
    doc = json.loads(out.read_text("utf-8"))
    assert doc["metrics"]["system"]["n"] == 2.0
    assert doc["metrics"]["system"]["em"] == 0.5
    assert doc["coverage"]["system"] == {"n": 2, "missing": 0, "failed": 1, "semantic_errors": 0}
    assert "1 predictions are null" in result.stderr


def test_long_system_names_stay_aligned(gold: Path, tmp_path: Path) -> None:
    p = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}])
    result = invoke("compare", "--gold", str(gold), "--baseline", "a", f"a={p}", f"a-much-longer-name={p}",
                    "--spec-block")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "| EM=" in line]
    assert [row.index("|") for row in rows] == [19, 19]


def test_bad_json_line_names_file_and_line(gold: Path, tmp_path: Path) -> None:
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "q1", "prediction": "北京"}\n{"id": "q2", "prediction": \n', encoding="utf-8")
    _assert_user_error(invoke("score", "--gold", str(gold), "--predictions", str(preds)),
                       "p.jsonl", "line 2", "invalid JSON")  # fmt: skip


def test_prediction_id_not_in_gold_is_named(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}, {"id": "q99", "prediction": "x"}])
    _assert_user_error(invoke("score", "--gold", str(gold), "--predictions", str(preds)), "'q99'", "line 2")


def test_unknown_language(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}])
    _assert_user_error(invoke("score", "--gold", str(gold), "--predictions", str(preds), "--lang", "xx"),
                       "unknown language 'xx'")  # fmt: skip


def test_language_is_required_somewhere_and_must_agree(tmp_path: Path) -> None:
    no_lang = write_jsonl(tmp_path / "g.jsonl", [{"id": "q1", "question": "?", "answers": ["a"]}])
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "a"}])
    _assert_user_error(invoke("score", "--gold", str(no_lang), "--predictions", str(preds)), "pass --lang")
    zh = write_jsonl(tmp_path / "zh.jsonl", [{"id": "q1", "question": "?", "answers": ["a"], "lang": "zh"}])
    _assert_user_error(invoke("score", "--gold", str(zh), "--predictions", str(preds), "--lang", "th"),
                       "contradicts --lang th")  # fmt: skip
    xx = write_jsonl(tmp_path / "xx.jsonl", [{"id": "q1", "question": "?", "answers": ["a"], "lang": "xx"}])
    _assert_user_error(invoke("score", "--gold", str(xx), "--predictions", str(preds)),
                       "entry q1: field 'lang': unknown language 'xx'")  # fmt: skip
    ok = invoke("score", "--gold", str(zh), "--predictions", str(preds), "--lang", "zh-CN")
    assert ok.exit_code == 0, ok.output


def test_compare_errors(gold: Path, tmp_path: Path) -> None:
    p = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}])
    _assert_user_error(invoke("compare", "--gold", str(gold), "--baseline", "direct", f"lbrag={p}"),
                       "baseline 'direct' is not one of the systems")  # fmt: skip
    _assert_user_error(invoke("compare", "--gold", str(gold), "--baseline", "a", f"a={p}", str(p)),
                       "expected SYSTEM=PREDICTIONS.jsonl")  # fmt: skip
    _assert_user_error(invoke("compare", "--gold", str(gold), "--baseline", "a", f"a={p}", f"a={p}"), "unique")
    _assert_user_error(invoke("compare", "--gold", str(tmp_path / "nope.json"), "--baseline", "a", f"a={p}"),
                       "nope.json", "file not found")  # fmt: skip
    _assert_user_error(invoke("compare", "--gold", str(gold), "--baseline", "a", f"a={p}", "--rlc-threshold", "2"),
                       "rlc-threshold")  # fmt: skip


def test_rlc_threshold_is_configurable(gold: Path, tmp_path: Path) -> None:
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "答案是 4429 meters"}])  # RLC 1/3
    out = tmp_path / "m.json"
    for threshold, expected in (("0.3", 1.0), ("0.6", 0.0)):
        result = invoke("score", "--gold", str(gold), "--predictions", str(preds), "--only-predicted",
                        "--rlc-threshold", threshold, "--out", str(out))  # fmt: skip
        assert result.exit_code == 0, result.output
        doc = json.loads(out.read_text("utf-8"))
        assert doc["metrics"]["system"]["rlc_ok"] == expected
        assert doc["config"]["rlc_threshold"] == float(threshold)


def test_judge_options_need_a_model_and_a_key(gold: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}])
    _assert_user_error(invoke("score", "--gold", str(gold), "--predictions", str(p), "--judge-provider", "openai"),
                       "without --judge-model")  # fmt: skip
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    _assert_user_error(invoke("score", "--gold", str(gold), "--predictions", str(p), "--judge-model", "m"),
                       "OPENROUTER_API_KEY is not set")  # fmt: skip


def test_score_prints_a_rich_table_like_show_and_compare(gold: Path, tmp_path: Path) -> None:
    """By default the scores are a table in show's and compare's style (no spec block), its numbers those
    of metrics.json; --spec-block gives the spec's plain block instead, for scripts."""
    base = _preds(tmp_path, [{"id": q["id"], "prediction": "不知道"} for q in GOLD], "base.jsonl")
    preds = _preds(tmp_path, [{"id": "q1", "prediction": "北京"}, {"id": "q2", "prediction": "4429m"},
                              {"id": "q3", "prediction": "1990年"}])
    out = tmp_path / "metrics.json"
    result = CliRunner().invoke(app, ["qa", "score", "--gold", str(gold), "--predictions", str(preds), "--system",
                                      "lbrag", "--baseline-predictions", str(base), "--out", str(out)],
                                env={"COLUMNS": "160"})
    assert result.exit_code == 0, result.output
    assert "=" * 80 not in result.stdout and "Experiment Results Summary" not in result.stdout
    assert "Scores (mean ± standard deviation over questions)" in result.stdout
    header = next(line for line in result.stdout.splitlines() if "EM ↑" in line)
    for column in ("system", "F1 ↑", "RLC ↑", "Cost ↓", "CNBE ↑"):
        assert column in header
    metrics = json.loads(out.read_text("utf-8"))["metrics"]
    rows: dict[str, str] = {}
    for line in result.stdout.splitlines():  # the scores table's row of each system comes first
        if line.split()[:1] in (["lbrag"], ["baseline"]):
            rows.setdefault(line.split()[0], line)
    m = metrics["lbrag"]  # qa score reports the scored system; the baseline serves CNBE and the paired tests
    assert set(rows) == {"lbrag"} and f"{m['em']:.3f} ±{m['em_std']:.3f}" in rows["lbrag"]
    assert f"{m['f1']:.3f} ±{m['f1_std']:.3f}" in rows["lbrag"] and f"{m['cnbe']:.5f} ±" in rows["lbrag"]
    assert "Paired bootstrap vs baseline" in result.stdout  # the statistics tables follow, unchanged

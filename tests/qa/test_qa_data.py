"""Gold and prediction loaders: formats, cost, and located errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from qa_helpers import write_jsonl

from mt_eval.errors import UserError
from mt_eval.qa.data import load_gold, load_predictions

SQUAD = {
    "version": "1.1",
    "data": [
        {
            "title": "T",
            "paragraphs": [
                {
                    "context": "…",
                    "qas": [
                        {"id": "q1", "question": "Who?", "answers": [
                            {"answer_start": 0, "text": "Denver Broncos"},
                            {"answer_start": 0, "text": "Broncos"},
                            {"answer_start": 0, "text": "Denver Broncos"},
                        ]},
                        {"id": "q2", "question": "How many?", "answers": [{"answer_start": 3, "text": "308"}]},
                    ],
                }
            ],
        }
    ],
}  # fmt: skip


def test_squad_json_keeps_every_distinct_gold_answer(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text(json.dumps(SQUAD), encoding="utf-8")
    gold = load_gold(path)
    assert [i.id for i in gold.items] == ["q1", "q2"]
    assert gold.items[0].answers == ("Denver Broncos", "Broncos")
    assert gold.items[0].question == "Who?"
    assert gold.items[0].lang is None


def test_jsonl_gold(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "gold.jsonl", [
        {"id": "a", "question": "首都？", "answers": ["北京", "北京市"], "lang": "zh"},
        {"id": 7, "question": "Capital?", "answers": ["Paris"], "lang": "en"},
    ])  # fmt: skip
    gold = load_gold(path)
    assert [(i.id, i.answers, i.lang) for i in gold.items] == [
        ("a", ("北京", "北京市"), "zh"),
        ("7", ("Paris",), "en"),
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"id": "a", "answers": ["x"]}\n{bad json\n', r"gold.jsonl: entry line 2: invalid JSON"),
        ('{"id": "a", "answers": "x"}\n', r"entry a: field 'answers': 'answers' must be a list of strings"),
        ('{"id": "a", "answers": []}\n', r"entry a: field 'answers': no gold answers"),
        ('{"answers": ["x"]}\n', r"entry line 1: field 'id': missing string 'id'"),
        ('{"id": "a", "answers": ["x"]}\n{"id": "a", "answers": ["y"]}\n', r"entry a: field 'id': duplicate"),
        ("[1, 2]\n", r"entry line 1: each line must be a JSON object"),
        ("\n\n", r"no questions found"),
    ],
)
def test_gold_errors_are_located(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        load_gold(path)


def test_squad_errors(tmp_path: Path) -> None:
    path = tmp_path / "gold.json"
    path.write_text('{"version": "1.1", "data": [', encoding="utf-8")
    with pytest.raises(UserError, match=r"gold\.json: invalid JSON at line 1"):
        load_gold(path)
    path.write_text('{"version": "1.1"}', encoding="utf-8")
    with pytest.raises(UserError, match="not a SQuAD file"):
        load_gold(path)
    with pytest.raises(UserError, match="file not found"):
        load_gold(tmp_path / "missing.json")


def _gold(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "gold.jsonl", [
        {"id": "q1", "question": "?", "answers": ["a"], "lang": "en"},
        {"id": "q2", "question": "?", "answers": ["b"], "lang": "en"},
    ])  # fmt: skip


def test_predictions_cost_from_token_count_or_evidence(tmp_path: Path) -> None:
    gold = load_gold(_gold(tmp_path))
    path = write_jsonl(tmp_path / "p.jsonl", [
        {"id": "q1", "prediction": "a", "token_count": 12},
        {"id": "q2", "prediction": None, "evidence": [
            {"text": "…", "metadata": {"token_count": 30}},
            {"text": "…", "metadata": {"lang": "en"}},
            {"text": "…", "metadata": {"token_count": 4.5}},
        ]},
    ])  # fmt: skip
    preds = load_predictions(path, gold)
    assert preds["q1"].cost == 12.0 and preds["q1"].prediction == "a"
    assert preds["q2"].cost == 34.5 and preds["q2"].prediction is None


def test_prediction_id_not_in_gold_is_named(tmp_path: Path) -> None:
    gold = load_gold(_gold(tmp_path))
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "q1", "prediction": "a"}, {"id": "zzz", "prediction": "b"}])
    with pytest.raises(UserError, match=r"p.jsonl: entry line 2: field 'id': prediction id 'zzz' is not in the gold"):
        load_predictions(path, gold)


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "q1"}, "missing 'prediction'"),
        ({"id": "q1", "prediction": 3}, "must be a string or null"),
        ({"id": "q1", "prediction": "a", "token_count": -1}, "field 'token_count': .*non-negative"),
        ({"id": "q1", "prediction": "a", "token_count": "many"}, "non-negative"),
        ({"id": "q1", "prediction": "a", "evidence": {"x": 1}}, "'evidence' must be a list"),
        ({"id": "q1", "prediction": "a", "evidence": [{"metadata": {"token_count": True}}]},
         r"evidence\[0\].metadata.token_count"),
        ({"id": "q1", "prediction": "a", "token_count": 5, "evidence": [{"metadata": {"token_count": 6}}]},
         "disagrees"),
    ],
)  # fmt: skip
def test_prediction_errors(tmp_path: Path, row: dict[str, object], message: str) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [row])
    with pytest.raises(UserError, match=message):
        load_predictions(path)


def test_duplicate_prediction_and_bad_line(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "p.jsonl", [{"id": "q1", "prediction": "a"}, {"id": "q1", "prediction": "b"}])
    with pytest.raises(UserError, match="entry line 2: duplicate prediction id 'q1'"):
        load_predictions(path)
    path.write_text('{"id": "q1", "prediction": "a"}\n\n{"id": "q2", "prediction": \n', encoding="utf-8")
    with pytest.raises(UserError, match=r"p\.jsonl: entry line 3: invalid JSON"):
        load_predictions(path)

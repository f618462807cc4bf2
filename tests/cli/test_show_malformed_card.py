"""`mt-eval show` on a card whose fields do not have a run card's shape: the NOT VERIFIED banner
names the validation problem and only the parts whose fields are sound are rendered, never a
traceback. `report` survives the same cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app

runner = CliRunner()

CASES = {
    "results-null": ("results", [None], "results.0"),
    "results-no-fields": ("results", [{"entry_id": "x"}], "results.0"),
    "results-int": ("results", [1], "results.0"),
    "fingerprint-list": ("fingerprint", [1], "fingerprint"),
    "warnings-ints": ("warnings", [1], "warnings.0"),
    "cost-list": ("cost", [1], "cost"),
    "profile-list": ("profile", [1], "profile"),
}


def _malformed(card_path: Path, tmp: Path, field: str, value: object) -> Path:
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card[field] = value
    bad = tmp / "malformed.json"
    bad.write_text(json.dumps(card), encoding="utf-8")
    return bad


@pytest.mark.parametrize("case", list(CASES))
def test_show_names_the_problem_and_renders_what_is_safe(corpus_cards, tmp_path: Path, case: str) -> None:
    field, value, where = CASES[case]
    bad = _malformed(corpus_cards["near"], tmp_path, field, value)
    result = runner.invoke(app, ["show", str(bad)], terminal_width=200)
    assert result.exception is None, result.output  # no traceback
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert "NOT VERIFIED" in text and f"{where}" in text and "not a valid run card" in text
    assert (f"not shown (malformed {field})" in text) == (field != "fingerprint")  # the run line reads it safely
    assert ("Worst" in text) == (field != "results")
    assert "Scores" in text  # the scores do not depend on the malformed field
    assert text.rstrip().splitlines()[-1].startswith("NOT VERIFIED:")


@pytest.mark.parametrize("case", ["results-null", "results-no-fields", "results-int", "fingerprint-list"])
def test_show_json_and_report_survive(corpus_cards, tmp_path: Path, case: str) -> None:
    field, value, where = CASES[case]
    bad = _malformed(corpus_cards["near"], tmp_path, field, value)
    shown = runner.invoke(app, ["show", str(bad), "--json"])
    assert shown.exception is None and shown.exit_code == 0, shown.output
    data = json.loads(shown.stdout)
    assert data["verified"] is False and data["problems"][0].startswith(where)
    report = runner.invoke(app, ["report", str(bad), "-o", str(tmp_path / "r.html")])
    assert report.exception is None and report.exit_code == 0, report.output
    assert "Not verified:" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_sound_card_shows_every_part(corpus_cards) -> None:
    result = runner.invoke(app, ["show", str(corpus_cards["near"])], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "NOT VERIFIED" not in result.stdout and "not shown" not in result.stdout and "Worst" in result.stdout

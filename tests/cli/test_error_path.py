"""One error path for every command: one located line and exit 2; ``--debug`` anywhere shows the traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError

runner = CliRunner()


@pytest.fixture
def bad_cards(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    from mt_eval.languages import card

    (tmp_path / "xx.json").write_text('{"code": "xx", "name": 5}', encoding="utf-8")
    monkeypatch.setenv(card.ENV_DIRS, str(tmp_path))
    card.clear_cache()
    yield tmp_path
    monkeypatch.delenv(card.ENV_DIRS)
    card.clear_cache()


def test_languages_with_a_malformed_card_gives_one_line(bad_cards: Path) -> None:
    result = runner.invoke(app, ["languages"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {bad_cards / 'xx.json'}: field 'name': is required "
                                                  "(a non-empty string)"]
    assert "Traceback" not in result.output


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_anywhere_raises_the_original_error(bad_cards: Path, where: str) -> None:
    args = ["--debug", "languages"] if where == "before" else ["languages", "--debug"]
    result = runner.invoke(app, args)
    assert isinstance(result.exception, UserError) and result.exit_code == 1


def test_qa_errors_take_the_same_path(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text("not json\n", encoding="utf-8")
    preds = tmp_path / "p.jsonl"
    preds.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["qa", "score", "--gold", str(gold), "--predictions", str(preds)])
    assert result.exit_code == 2 and result.stderr.startswith("error: ") and str(gold) in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    debug = runner.invoke(app, ["qa", "score", "--gold", str(gold), "--predictions", str(preds), "--debug"])
    assert isinstance(debug.exception, UserError)


def test_version_and_short_help() -> None:
    from mt_eval.version import __version__

    assert runner.invoke(app, ["--version"]).stdout.strip() == f"mt-eval {__version__}"
    for command in (["run"], ["score"], ["compare"], ["qa", "score"], ["verify"]):
        result = runner.invoke(app, [*command, "-h"])
        assert result.exit_code == 0 and "Usage" in result.stdout, command

"""One error path for every command: one located line and exit 2; ``--debug`` anywhere shows the traceback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def _one_line(result: Any, *needles: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    for needle in needles:
        assert needle in " ".join(result.stderr.split()), result.stderr


@pytest.fixture
def hyp(tmp_path: Path) -> Path:
    import json

    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    path = tmp_path / "hyp.jsonl"
    path.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": e["reference"]}) + "\n" for e in entries),
                    encoding="utf-8")
    return path


def _score(hyp: Path, tmp_path: Path, *extra: str) -> list[str]:
    return ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"),
            *extra]


def test_a_negative_seed_is_one_line(hyp: Path, tmp_path: Path, corpus_cards: dict[str, Path]) -> None:
    _one_line(runner.invoke(app, _score(hyp, tmp_path, "-o", str(tmp_path / "x.json"), "--seed", "-1")), "--seed")
    assert not (tmp_path / "x.json").exists()
    card = str(corpus_cards["near"])
    _one_line(runner.invoke(app, ["compare", card, card, "--seed", "-1"]), "--seed")


def test_writing_the_card_onto_a_directory_is_one_line_naming_it(hyp: Path, tmp_path: Path) -> None:
    target = tmp_path / "a-directory"
    target.mkdir()
    _one_line(runner.invoke(app, _score(hyp, tmp_path, "-o", str(target))), str(target), "directory")
    assert list(target.iterdir()) == [] and not list(tmp_path.glob("*.tmp"))


def test_a_runs_dir_that_is_not_a_directory_is_one_line(hyp: Path, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("", encoding="utf-8")
    result = runner.invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "0",
                                 "--runs-dir", str(not_a_dir)])
    _one_line(result, str(not_a_dir))


def test_the_journal_cannot_be_created_under_a_file(tmp_path: Path) -> None:
    from mt_eval.engine.journal import Journal

    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="journal"):
        Journal(tmp_path / "file" / "run" / "journal.jsonl")


@pytest.mark.parametrize(("args", "flag"), [
    (["--temperature", "-1"], "--temperature"),
    (["--temperature", "nan"], "--temperature"),
    (["--budget-usd", "-1"], "--budget-usd"),
])
def test_run_range_checks(tmp_path: Path, args: list[str], flag: str) -> None:
    result = runner.invoke(app, ["run", "-c", str(CORPUS), "--method", "llm", "--model", "x/y", "--dry-run",
                                 "--runs-dir", str(tmp_path), *args])
    _one_line(result, flag)


def test_show_worst_negative_is_one_line(corpus_cards: dict[str, Path]) -> None:
    _one_line(runner.invoke(app, ["show", str(corpus_cards["near"]), "--worst", "-1"]), "--worst")


PLUGIN = '''
from pathlib import Path
from mt_eval.methods.base import MethodIdentity, Translation

MARKER = Path(__file__).with_name("TRANSLATED")


class _Echo:
    resumable = False

    async def translate(self, requests):
        MARKER.write_text("yes")
        return [Translation(r.entry_id, r.source) for r in requests]


class Named(_Echo):
    identity = MethodIdentity(name="echo", method_class="custom-plugin", version="1", model_slug="echo")


class Bogus(_Echo):
    identity = MethodIdentity(name="echo", method_class="made-up", version="1", model_slug="echo")


def explodes():
    raise RuntimeError("boom")
'''


@pytest.fixture
def plugin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    import sys

    where = tmp_path / "plugins"
    where.mkdir()
    (where / "echo_plugin_err.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(where))
    yield where
    sys.modules.pop("echo_plugin_err", None)


def _run_plugin(tmp_path: Path, spec: str) -> Any:
    return runner.invoke(app, ["run", "-c", str(CORPUS), "--method", spec, "--bootstrap", "0", "--skip-analyser",
                               "--runs-dir", str(tmp_path / "runs"), "-o", str(tmp_path / "card.json")])


def test_a_plugin_method_class_given_as_its_string_is_recorded(plugin_dir: Path, tmp_path: Path) -> None:
    from mt_eval.runcard.io import load_card

    result = _run_plugin(tmp_path, "plugin:echo_plugin_err:Named")
    assert result.exit_code == 0, (result.output, result.exception)
    assert load_card(tmp_path / "card.json")["method_class"] == "custom-plugin"


def test_a_plugin_with_an_unknown_method_class_is_refused_before_translating(plugin_dir: Path,
                                                                            tmp_path: Path) -> None:
    _one_line(_run_plugin(tmp_path, "plugin:echo_plugin_err:Bogus"), "made-up", "method class")
    assert not (plugin_dir / "TRANSLATED").exists()


@pytest.mark.parametrize("spec", ["plugin:echo_plugin_err:explodes", "plugin:os:system", "plugin:os:sep"])
def test_a_plugin_factory_that_fails_is_one_line_naming_it(plugin_dir: Path, tmp_path: Path, spec: str) -> None:
    _one_line(_run_plugin(tmp_path, spec), spec.partition(":")[2])


def test_qa_bootstrap_options_are_checked_like_the_others(tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"id": "q1", "question": "?", "answers": ["北京"], "lang": "zh"}\n', encoding="utf-8")
    preds = tmp_path / "p.jsonl"
    preds.write_text('{"id": "q1", "prediction": "北京"}\n', encoding="utf-8")
    for option, value in (("--seed", "-1"), ("--alpha", "1.5")):
        result = runner.invoke(app, ["qa", "score", "--gold", str(gold), "--predictions", str(preds), option, value])
        assert result.exit_code == 2 and result.stderr.startswith("error: "), (option, result.output)
        assert "Traceback" not in result.output

"""What a scored output file is, said on the command line: ``score --system`` names it on the card and
``--method-class`` records what produced it in the spec's vocabulary (§9.6 + rbmt); a scored file never
becomes an engine whose $0 counts as measured whatever class it claims."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import write_text_pair
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.methods.base import MethodClass
from mt_eval.methods.predictions import method_class_named
from mt_eval.runcard.model import RunCard

runner = CliRunner()


@pytest.fixture(scope="module")
def texts(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_text_pair(ntrex_dir, tmp_path_factory.mktemp("identity"), "spa", 8, ("txt", "txt"))


def _score(texts: dict[str, Path], name: str, *extra: str) -> tuple[object, dict]:
    out = texts["dir"] / f"{name}.json"
    result = runner.invoke(app, ["score", "--source-file", str(texts["src"]), "--reference-file", str(texts["ref"]),
                                 "-l", "en-es", "-p", str(texts["hyp"]), "--runs-dir", str(texts["dir"] / "runs"),
                                 "-o", str(out), "--bootstrap", "0", *extra])
    card = json.loads(out.read_text(encoding="utf-8")) if out.exists() and result.exit_code == 0 else {}
    return result, card


def test_system_and_method_class_are_recorded_and_verify(texts):
    result, card = _score(texts, "human", "--system", "translator-1", "--method-class", "human")
    assert result.exit_code == 0, result.output
    assert card["method"]["name"] == "translator-1" and card["method"]["method_class"] == "human"
    typed = RunCard.model_validate(card)
    assert typed.method.method_class == "human" and typed.method.name == "translator-1"
    assert "--system" not in result.stderr  # named: no note
    verified = runner.invoke(app, ["verify", str(texts["dir"] / "human.json")])
    assert verified.exit_code == 0, verified.output


def test_a_different_class_is_a_different_fingerprint(texts):
    _, api = _score(texts, "api", "--system", "same", "--method-class", "api")
    _, human = _score(texts, "human2", "--system", "same", "--method-class", "human")
    assert api["method"]["method_class"] == "api"
    assert api["fingerprint"] != human["fingerprint"]  # a class is part of what was run, not a label on top


def test_default_says_how_to_name_the_system(texts):
    result, card = _score(texts, "plain")
    assert result.exit_code == 0, result.output
    assert (card["method"]["name"], card["method"]["method_class"]) == ("predictions", "custom-plugin")
    assert "--system NAME" in result.stderr and "--method-class" in result.stderr


@pytest.mark.parametrize(("word", "meant"), [("rule-based", "rbmt"), ("llm", "raw-llm or coached-llm"),
                                             ("local-nmt", "nmt"), ("robot", None)])
def test_a_word_that_is_no_class_is_one_line_naming_the_classes(texts, word, meant):
    result, _ = _score(texts, f"bad-{word}", "--system", "x", "--method-class", word)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "--method-class" in lines[0] and all(c.value in lines[0] for c in MethodClass)
    assert (f"did you mean {meant}" in lines[0]) if meant else "did you mean" not in lines[0]
    assert not (texts["dir"] / f"bad-{word}.json").exists()


def test_class_names_are_read_case_insensitively_and_never_invented():
    assert method_class_named(" RBMT ") is MethodClass.RBMT
    assert method_class_named("coached-llm") is MethodClass.COACHED_LLM
    with pytest.raises(Exception, match="not a method class"):
        method_class_named("rule based")


def test_claiming_a_local_engine_does_not_make_a_files_zero_cost_measured(texts):
    """A file labelled rbmt (Apertium's class, whose $0 is measured) is still a replayed file: its cost is
    unknown and unranked by cost, as for any other class."""
    result, card = _score(texts, "rbmt", "--system", "fake-apertium", "--method-class", "rbmt")
    assert result.exit_code == 0, result.output
    assert card["method"]["method_class"] == "rbmt"
    assert card["cost"]["status"] == "unknown" and card["cost"]["total_cost_usd"] is None
    assert card["speed"]["status"] == "unknown"

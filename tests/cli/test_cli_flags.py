"""Flags people know from sacrebleu, the same across commands: -l, --system, -m, an example in every --help,
and the generic-language-card warning said on stderr when it happens."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from cli_helpers import write_text_pair
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.cli.common import language_pair

runner = CliRunner()
N = 12


@pytest.fixture(scope="module")
def texts(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_text_pair(ntrex_dir, tmp_path_factory.mktemp("flags"), "spa", N, ("txt", "txt"))


def _score(texts: dict[str, Path], name: str, *extra: str) -> tuple[typer.testing.Result, dict]:
    out = texts["dir"] / f"{name}.json"
    result = runner.invoke(app, ["score", "--source-file", str(texts["src"]), "--reference-file", str(texts["ref"]),
                                 "-p", str(texts["hyp"]), "--runs-dir", str(texts["dir"] / "runs"), "-o", str(out),
                                 "--bootstrap", "0", *extra])
    card = json.loads(out.read_text(encoding="utf-8")) if out.exists() and result.exit_code == 0 else {}
    return result, card


def test_language_pair_shorthand_sets_both(texts):
    result, card = _score(texts, "short", "-l", "en-es")
    assert result.exit_code == 0, result.output
    assert (card["dataset"]["source_language"], card["dataset"]["target_language"]) == ("en", "es")
    long_result, long_card = _score(texts, "long", "--source-lang", "en", "--target-lang", "es")
    assert long_result.exit_code == 0 and long_card["scores"]["chrf_plus_plus"] == card["scores"]["chrf_plus_plus"]
    agree, _ = _score(texts, "agree", "--language-pair", "en-es", "--target-lang", "es")
    assert agree.exit_code == 0, agree.output


@pytest.mark.parametrize(("args", "needle"), [
    (["-l", "en-es", "--target-lang", "fr"], "--target-lang says fr"),
    (["-l", "en-es", "--source-lang", "de"], "--source-lang says de"),
    (["-l", "english"], "give SRC-TGT"),
    (["-l", "en-es-fr"], "give SRC-TGT"),
])
def test_language_pair_inconsistent_is_one_line(texts, args, needle):
    result, _ = _score(texts, "bad", *args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0]


def test_language_pair_with_subtags(texts):
    assert language_pair("en:sr-Latn", None, None) == ("en", "sr-Latn")
    assert language_pair(None, "en", "es") == ("en", "es")
    assert language_pair("EN-es", "en", None) == ("EN", "es")  # agreement ignores case
    result, card = _score(texts, "subtags", "-l", "en:es-MX")
    assert result.exit_code == 0, result.output
    assert card["dataset"]["source_language"] == "en" and card["dataset"]["target_language"].startswith("es")


def test_run_takes_language_pair_too(texts):
    out = texts["dir"] / "run.json"
    result = runner.invoke(app, ["run", "--method", f"predictions:{texts['hyp']}", "--source-file", str(texts["src"]),
                                 "--reference-file", str(texts["ref"]), "-l", "en-es", "-o", str(out),
                                 "--runs-dir", str(texts["dir"] / "runs"), "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    card = json.loads(out.read_text(encoding="utf-8"))
    assert (card["dataset"]["source_language"], card["dataset"]["target_language"]) == ("en", "es")


def test_system_names_the_card_and_default_reads_predictions(texts):
    named, card = _score(texts, "named", "-l", "en-es", "--system", "my-nmt v2")
    assert named.exit_code == 0, named.output
    assert card["method"]["name"] == "my-nmt v2" and named.stdout.startswith("my-nmt v2 on ")
    _, plain = _score(texts, "plain", "-l", "en-es")
    assert plain["method"]["name"] == "predictions"
    blank, _ = _score(texts, "blank", "-l", "en-es", "--system", " ")
    assert blank.exit_code == 2 and "--system" in blank.output


def test_m_means_metrics_not_method(texts):
    result = runner.invoke(app, ["run", "-m", f"predictions:{texts['hyp']}", "--source-file", str(texts["src"]),
                                 "--reference-file", str(texts["ref"]), "-l", "en-es"])
    assert result.exit_code == 2 and "No such option" in result.output and "-m" in result.output
    for command in (["show"], ["report"], ["compare"]):
        help_text = runner.invoke(app, [*command, "--help"]).output
        assert any(" -m " in line and "--metric" in line for line in help_text.splitlines()), command
    run_help = runner.invoke(app, ["run", "--help"]).output
    assert "--method" in run_help and not any("--method" in line and " -m " in line for line in run_help.splitlines())


def _commands() -> list[list[str]]:
    """Every leaf command as its words (groups nested in groups included: ``governance submitter add``)."""
    from typer.main import get_command

    def leaves(cmd: object, path: list[str]) -> list[list[str]]:
        subs = getattr(cmd, "commands", None)
        return [leaf for name, sub in subs.items() for leaf in leaves(sub, [*path, name])] if subs else [path]

    return leaves(get_command(app), [])


def test_every_command_has_an_example():
    from click.testing import CliRunner as ClickRunner
    from typer.main import get_command

    commands = _commands()
    assert ["qa", "score"] in commands and ["report"] in commands and len(commands) >= 10
    # typer's runner builds the whole click tree again on every invoke (~0.25 s of the 0.38 s a --help took, for
    # each of ~100 commands); the tree built once prints the same help, byte for byte
    tree, click_runner = get_command(app), ClickRunner()
    for command in commands:
        help_text = click_runner.invoke(tree, [*command, "--help"], terminal_width=200, prog_name="mt-eval").output
        assert "Example" in help_text, command
        example = help_text.split("Example", 1)[1]
        assert f"mt-eval {' '.join(command)}" in " ".join(example.split()), command


def test_generic_card_warning_on_stderr_at_score_time(texts):
    result, card = _score(texts, "navajo", "-l", "en-nv")
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "no language card for 'nv'" in result.stderr
    assert "no language card" not in result.stdout
    assert any("no language card for 'nv'" in w for w in card["warnings"])
    known, _ = _score(texts, "spanish", "-l", "en-es")
    assert "no language card" not in known.stderr

"""The benchmark file: the cell plan it declares, and malformed files refused with one located line."""

from __future__ import annotations

from pathlib import Path

import pytest
from sweep_helpers import CORPUS
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.sweep.plan import load_plan

HEAD = f'[sweep]\nname = "s"\ncorpus = "{CORPUS}"\n\n[method]\nspec = "llm:{{model}}"\nbase_url = "http://127.0.0.1:9/v1"\n'


def _file(tmp: Path, body: str) -> Path:
    path = tmp / "bench.toml"
    path.write_text(body, encoding="utf-8")
    return path


def test_cells_are_the_product_less_exclusions_plus_extra_cells(tmp_path: Path) -> None:
    (tmp_path / "v2.txt").write_text("prompt", encoding="utf-8")
    _, cells = load_plan(_file(tmp_path, HEAD + (
        '\n[axes]\nmodel = ["a/x", "b"]\ntemperature = [0.0, 0.7]\nprompt = [false, "v2.txt"]\n'
        '\n[[exclude]]\nmodel = "b"\ntemperature = 0.7\n\n[[cell]]\nspec = "apertium:eng-spa"\n')))
    keys = [c.key for c in cells]
    assert len(cells) == 2 * 2 * 2 - 2 + 1 and len(set(keys)) == len(keys)
    assert keys[0] == "model=a/x,temperature=0.0,prompt=none" and keys[1] == "model=a/x,temperature=0.0,prompt=v2"
    assert not any(k.startswith("model=b,temperature=0.7") for k in keys)
    assert keys[-1] == "cell=apertium:eng-spa" and cells[-1].spec == "apertium:eng-spa"
    first, second = cells[0], cells[1]
    assert first.spec == "llm:a/x" and first.options["model"] == "a/x" and first.options["temperature"] == 0.0
    assert first.options["system_prompt_file"] is None
    assert second.options["system_prompt_file"] == str((tmp_path / "v2.txt").resolve())  # relative to the file
    assert first.slug == "model=a_x,temperature=0.0,prompt=none" and "/" not in cells[-1].slug
    # a cell's options are what `mt-eval run` records, with the sweep's concurrency and cache
    assert first.run_options(3, None)["concurrency"] == 3 and first.run_options(3, None)["cache_path"] is None


def test_coaching_and_tools_axes_choose_the_method(tmp_path: Path) -> None:
    (tmp_path / "coach.txt").write_text("grammar notes", encoding="utf-8")
    _, cells = load_plan(_file(tmp_path, HEAD + '\n[axes]\nmodel = ["m"]\ncoaching = [false, "coach.txt"]\n'
                                                'tools = [false, "wordlist:words.txt"]\n'))
    specs = {c.key: c.spec for c in cells}
    assert specs == {"model=m,coaching=none,tools=none": "llm:m", "model=m,coaching=coach,tools=none": "coached:m",
                     "model=m,coaching=none,tools=words": "pipeline:validate-retry",
                     "model=m,coaching=coach,tools=words": "pipeline:validate-retry"}


BAD = {
    "unknown axis": ('\n[axes]\nmodel = ["a"]\ncolour = ["red"]\n', "field 'axes.colour': unknown axis"),
    "empty product": ('\n[axes]\nmodel = ["a"]\n\n[[exclude]]\nmodel = "a"\n',
                      "field 'exclude': the sweep has no cells: every combination of the axes is excluded"),
    "empty axis": ('\n[axes]\nmodel = []\n', "field 'axes.model': an axis needs a non-empty list"),
    "unknown key": ('\n[axes]\nmodel = ["a"]\n\n[[cell]]\nspec = "apertium:eng-spa"\nflavour = 1\n',
                    "field 'cell[0].flavour': unknown key in [[cell]]"),
    "unknown table": ('\n[axis]\nmodel = ["a"]\n', "field 'axis': unknown table"),
    "excluded value no axis has": ('\n[axes]\nmodel = ["a"]\n\n[[exclude]]\nmodel = "z"\n',
                                   "field 'exclude[0].model': 'z' is not a value of axis model"),
    "placeholder without axis": ('\n[axes]\ntemperature = [0.0]\n', "field 'method.spec': {model} is not an axis"),
    "wrong type": ('\n[axes]\nmodel = ["a"]\ntemperature = ["hot"]\n', "field 'axes.temperature': temperatures"),
    "not TOML": ("\n[axes\n", "not a valid TOML file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_benchmark_file_is_one_line_exit_2_and_nothing_written(tmp_path: Path, case: str,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    body, message = BAD[case]
    file = _file(tmp_path, HEAD + body)
    monkeypatch.chdir(tmp_path)
    before = sorted(tmp_path.rglob("*"))
    for args in (["sweep", str(file)], ["sweep", str(file), "--dry-run"], ["sweep", "report", str(file)]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, (case, result.output)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {file}: "), lines
        assert message in lines[0], lines
        assert "Traceback" not in result.output
    assert sorted(tmp_path.rglob("*")) == before  # no runs folder, no journal, no database


def test_missing_file_and_unknown_executor_are_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["sweep", str(tmp_path / "none.toml")])
    assert result.exit_code == 2 and "cannot read the benchmark file" in result.stderr
    file = _file(tmp_path, HEAD + '\n[axes]\nmodel = ["a"]\n')
    result = CliRunner().invoke(app, ["sweep", str(file), "--executor", "dask"])
    assert result.exit_code == 2 and "unknown executor 'dask'" in result.stderr
    result = CliRunner().invoke(app, ["sweep", str(file), "--executor", "ray"])
    assert result.exit_code == 2 and "--executor ray needs --ray-address" in result.stderr
    assert not (tmp_path / "runs").exists()


def test_unset_key_or_missing_prompt_stops_the_sweep_before_it_writes(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MT_EVAL_SWEEP_TEST_KEY", raising=False)
    keyed = _file(tmp_path, HEAD + 'api_key_env = "MT_EVAL_SWEEP_TEST_KEY"\n\n[axes]\nmodel = ["a"]\n')
    result = CliRunner().invoke(app, ["sweep", str(keyed)])
    assert result.exit_code == 2 and result.stderr.strip().splitlines() == [
        "error: environment variable MT_EVAL_SWEEP_TEST_KEY is not set (export it with the provider's API key)"]
    assert CliRunner().invoke(app, ["sweep", str(keyed), "--dry-run"]).exit_code == 0  # a dry run sends nothing
    prompt = _file(tmp_path, HEAD + '\n[axes]\nmodel = ["a"]\nprompt = ["missing.txt"]\n')
    result = CliRunner().invoke(app, ["sweep", str(prompt)])
    assert result.exit_code == 2 and "cannot read system prompt" in result.stderr and "missing.txt" in result.stderr
    assert not (tmp_path / "runs").exists()

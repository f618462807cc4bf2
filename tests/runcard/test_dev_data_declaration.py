"""The development-data declaration (Benchmark Spec §9.2.2: development entries may be used for few-shot
prompting, but it must be declared): ``method_config.development_data`` on every card, "none declared"
by default, set by ``run --dev-data-declaration TEXT|FILE``; sealed (editing it breaks the card's seal,
as someone quietly removing "used the development segment as few-shot examples" would) and shown by ``show``.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard.model import NONE_DECLARED

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
runner = CliRunner()


def _run(tmp_path: Path, name: str, *extra: str) -> dict:
    out = tmp_path / f"{name}.json"
    result = runner.invoke(app, ["run", "-c", str(EXAMPLE), "--ids", "1-3", "--method", "apertium:eng-spa",
                                 "--no-semantic", "--bootstrap", "50", "--runs-dir", str(tmp_path / "runs"),
                                 "-o", str(out), *extra], terminal_width=300)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8"))


def _show(path: Path) -> tuple[int, str]:
    result = runner.invoke(app, ["show", str(path), "--worst", "0"], terminal_width=300)
    return result.exit_code, result.output


def test_the_declaration_is_on_the_card_sealed_and_shown(tmp_path: Path) -> None:
    plain = _run(tmp_path, "plain")
    assert plain["method_config"]["development_data"] == NONE_DECLARED
    code, output = _show(tmp_path / "plain.json")
    assert code == 0 and "development data: none declared" in output and "NOT VERIFIED" not in output

    declared_file = tmp_path / "dev-data.txt"
    declared_file.write_text("8 development entries (ids 101-108) as few-shot examples in the prompt\n")
    card = _run(tmp_path, "declared", "--dev-data-declaration", str(declared_file))
    text = "8 development entries (ids 101-108) as few-shot examples in the prompt"
    assert card["method_config"]["development_data"] == text
    assert card["method"]["config"]["development_data"] == text  # the method's configuration: config_sha256 too
    assert card["method"]["config_sha256"] != plain["method"]["config_sha256"]
    code, output = _show(tmp_path / "declared.json")
    assert code == 0 and f"development data: {text}" in output and "NOT VERIFIED" not in output

    inline = _run(tmp_path, "inline", "--dev-data-declaration", "none: rule-based, no data seen")
    assert inline["method_config"]["development_data"] == "none: rule-based, no data seen"


def test_removing_a_declaration_breaks_the_seal(tmp_path: Path) -> None:
    card = _run(tmp_path, "declared", "--dev-data-declaration", "the development segment as few-shot examples")
    card["method_config"]["development_data"] = NONE_DECLARED  # hide the few-shot use after the fact
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    result = runner.invoke(app, ["verify", str(forged)], terminal_width=300)
    assert result.exit_code != 0
    _, output = _show(forged)
    assert "NOT VERIFIED" in output


def test_an_empty_declaration_is_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["run", "-c", str(EXAMPLE), "--ids", "1-3", "--method", "apertium:eng-spa",
                                 "--dev-data-declaration", "  ", "-o", str(tmp_path / "c.json")])
    assert result.exit_code == 2 and "--dev-data-declaration is empty" in result.output


def test_a_sovereign_bundle_declares_it_in_method_toml(tmp_path: Path) -> None:
    import shutil

    from mt_eval.methods.base import Translation
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.runner import SandboxReport, score
    from support.sovereign import EXAMPLES, TINY, small_dataset

    dest = shutil.copytree(EXAMPLES / "glossary-python", tmp_path / "b", ignore=shutil.ignore_patterns("__pycache__"))
    dataset = small_dataset(3)
    translations = [Translation(e.id, e.reference) for e in dataset.entries]
    plain = score(dataset, load_bundle(dest), translations, SandboxReport(), TINY, "test")
    assert plain["method_config"]["development_data"] == NONE_DECLARED
    manifest = dest / "method.toml"
    manifest.write_text(manifest.read_text().replace('readme = "README.md"\n', 'readme = "README.md"\n'
                                                     'development_data = "30 development entries, few-shot"\n'))
    bundle = load_bundle(dest)  # the declaration is in method.toml: the bundle's sha256 pins it too
    card = score(dataset, bundle, translations, SandboxReport(), TINY, "test")
    assert card["method_config"]["development_data"] == "30 development entries, few-shot"
    assert card["method"]["config"]["bundle_sha256"] == bundle.sha256 != plain["method"]["config"]["bundle_sha256"]

"""The baselines in a sweep benchmark file: each cell's spec goes through the same registry as ``run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from support.mt_apis import FakeMTApi, fake_translation

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def test_lexicon_deepl_and_google_cells(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dictionary = tmp_path / "en-es.tsv"
    dictionary.write_text("the\tel\nof\tde\n", encoding="utf-8")
    with FakeMTApi("deepl", key="d-key") as deepl, FakeMTApi("google", key="g-key") as google:
        monkeypatch.setenv("DEEPL_AUTH_KEY", deepl.key)
        monkeypatch.setenv("GOOGLE_TRANSLATE_API_KEY", google.key)
        file = tmp_path / "baselines.toml"
        file.write_text("\n".join([
            "[sweep]", 'name = "baselines"', f'corpus = "{CORPUS}"', 'ids = "1-4"', "",
            "[[cell]]", 'name = "lexicon"', f'spec = "lexicon:{dictionary}"', "",
            "[[cell]]", 'name = "deepl"', 'spec = "deepl"', f'base_url = "{deepl.base_url}"', "",
            "[[cell]]", 'name = "google"', 'spec = "google"', f'base_url = "{google.base_url}"', ""]),
            encoding="utf-8")
        result = CliRunner().invoke(app, ["sweep", "run", str(file), "-b", "0", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    cards = {p.parent.name: json.loads(p.read_text(encoding="utf-8"))
             for p in sorted((tmp_path / "runs" / "baselines").glob("*/run_card.json"))}
    assert {k: c["method"]["method_class"] for k, c in cards.items()} == {
        "cell=lexicon": "rbmt", "cell=deepl": "api", "cell=google": "api"}
    sources = [r["source"] for r in cards["cell=deepl"]["results"]]
    assert [r["predicted"] for r in cards["cell=deepl"]["results"]] == [fake_translation(s, "ES") for s in sources]
    assert [r["predicted"] for r in cards["cell=google"]["results"]] == [fake_translation(s, "es") for s in sources]

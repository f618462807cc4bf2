"""lingua against the script/word-list rules on NTREX (tests/langid/evalset.py), the figures of
docs/language-id.md on the first 150 lines, and the backend recorded and honoured by verify."""

from __future__ import annotations

from pathlib import Path

import evalset
import numpy as np
import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError
from mt_eval.languages import langid
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.behavioral import CodeSwitching
from mt_eval.qa.measures import QASamples

N = 150
runner = CliRunner()


def test_lingua_fills_the_pairs_the_rules_cannot_measure_as_well_as_the_rules_measure_spanish() -> None:
    table = evalset.code_switching_table(N, [("es", False), ("fr", False), ("pt", False)])
    rules = table["es"]
    assert rules["clean_flagged"] <= 0.02 and rules["mixed50_flagged"] >= 0.95  # the rules, where they apply
    for code in ("fr", "pt"):  # null before lingua: same script, no analyser on the target card
        row = table[code]
        assert row["clean_mean"] < 0.03 and row["clean_flagged"] <= 0.06, (code, row)
        assert row["mixed50_flagged"] >= 0.93 and row["mixed25_flagged"] >= 0.65, (code, row)
        assert row["english_mean"] > 0.75 and row["english_flagged"] >= 0.99, (code, row)
        assert abs(row["mixed50_flagged"] - rules["mixed50_flagged"]) < 0.05


def test_rlc_with_lingua_catches_same_script_wrong_languages_that_the_script_share_cannot() -> None:
    table = evalset.rlc_table(N)
    assert all(row["script"] == 0.0 for row in table.values())  # every Latin text is 100 % "Spanish" by script
    assert table["es"]["lingua"] <= 0.03  # a few Spanish references misjudged
    for code in ("ca", "pt", "it", "fr", "en"):
        assert table[code]["lingua"] >= 0.9, (code, table[code])
    short = QASamples(items=(), langs=("es",), langid="lingua")
    assert short.rlc("Bon dia a tothom", 0) == 1.0  # under 8 words: the script rule alone


def _ctx(target: str, recorded: dict[str, str | None] | None = None) -> MetricContext:
    entries = [Entry(id=1, source="The committee met on Monday.", reference="-")]
    return MetricContext(entries=entries, target=language_card(target), source=language_card("en"),
                         recorded=recorded)


OUT = ["Le comité s'est réuni lundi and then the members went home early to their families."]


def test_the_backend_is_in_the_signature_and_an_old_card_is_rescored_with_the_rules(monkeypatch) -> None:
    metric = CodeSwitching()
    metric.prepare(_ctx("fr"))
    assert metric.lingua and metric.signature(language_card("fr")) == f"langid:lingua-{langid.version()}"
    value = metric.statistics(OUT, _ctx("fr"))
    assert value[0].tolist() == [10.0, 15.0]  # exactly "and then the members went home early to their families"
    old = CodeSwitching()
    old.prepare(_ctx("fr", {"code_switching_rate": None}))  # a card written before: the rules, null for fr
    assert not old.lingua and old.signature(language_card("fr")) is None
    assert old.statistics(OUT, _ctx("fr", {"code_switching_rate": None}))[0, 1] == 0.0
    spanish = CodeSwitching()
    spanish.prepare(_ctx("es"))
    assert not spanish.lingua  # the rules apply to English→Spanish: unchanged
    monkeypatch.setattr(langid, "available", lambda: False)
    with pytest.raises(UserError, match="needs lingua-language-detector"):
        CodeSwitching().prepare(_ctx("fr", {"code_switching_rate": "langid:lingua-2.1.1"}))
    fresh = CodeSwitching()
    fresh.prepare(_ctx("fr"))  # not installed: null as before, never a guess
    assert not fresh.lingua


def test_a_card_scored_with_lingua_verifies(tmp_path: Path) -> None:
    english = evalset.lines("en", 20)
    french = evalset.lines("fr", 20)
    outputs = [f if i % 4 else evalset.mixed(f, e, 0.5)[0] for i, (f, e) in enumerate(zip(french, english,
                                                                                          strict=True))]
    for name, text in (("src", english), ("ref", french), ("hyp", outputs)):
        (tmp_path / f"{name}.txt").write_text("\n".join(text) + "\n", encoding="utf-8")
    card = tmp_path / "card.json"
    result = runner.invoke(app, ["score", "--source-file", str(tmp_path / "src.txt"), "--reference-file",
                                 str(tmp_path / "ref.txt"), "-l", "en-fr", "-p", str(tmp_path / "hyp.txt"), "-b", "0",
                                 "-o", str(card), "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    import json

    data = json.loads(card.read_text(encoding="utf-8"))
    assert data["metrics"]["code_switching_rate"]["signature"].startswith("langid:lingua-")
    values = np.array([r["metrics"]["code_switching_rate"] for r in data["results"]])
    assert (values[::4] > 0.2).all() and np.median(values[[i for i in range(20) if i % 4]]) < 0.05
    verified = runner.invoke(app, ["verify", str(card)])
    assert verified.exit_code == 0, verified.output

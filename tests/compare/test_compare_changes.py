"""``compare`` never rewrites a sealed number silently (issue 22 item 5).

A comparison's composite uses only the metrics every compared card has a value for (one function scores
all systems). A card scored with a glossary has ``terminology_adherence``; one without has none, so next to
it the first card's composite is recomputed without that metric: a number different from its sealed one.
Each such change is listed (metric, old → new, the reason) and ``--strict`` refuses to show it at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import mt_eval
from mt_eval.cli import app
from mt_eval.comparison import compare

SRCS = ["The cat sat on the mat.", "It will rain in Madrid tomorrow.", "The train leaves at eight.",
        "The government approved the budget.", "The budget was late again."]
REFS = ["El gato se sentó en la alfombra.", "Mañana lloverá en Madrid.", "El tren sale a las ocho.",
        "El gobierno aprobó el presupuesto.", "El presupuesto llegó tarde otra vez."]
HYPS = ["El gato se sentó sobre la alfombra.", "Mañana va a llover en Madrid.", "El tren sale a las ocho.",
        "El gobierno aprobó las cuentas.", "El presupuesto llegó tarde de nuevo."]


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("changes")
    glossary = root / "terms.json"
    glossary.write_text(json.dumps({"budget": ["presupuesto"]}), encoding="utf-8")
    with_terms = mt_eval.score(HYPS, REFS, sources=SRCS, lang="en-es", system="glossary", terminology=glossary,
                               out=root / "glossary.json")
    plain = mt_eval.score(REFS, REFS, sources=SRCS, lang="en-es", system="plain", out=root / "plain.json")
    assert with_terms.card["scores"]["terminology_adherence"] is not None
    assert plain.card["scores"]["terminology_adherence"] is None
    return root / "plain.json", root / "glossary.json"


def test_changed_composite_is_listed_with_reason(cards: tuple[Path, Path]) -> None:
    plain, glossary = cards
    sealed = json.loads(glossary.read_text(encoding="utf-8"))["scores"]["composite"]
    result = compare([plain, glossary], n_resamples=50)
    shown = next(s for s in result.systems if s.name == "glossary").scores["composite"].point
    assert shown != pytest.approx(sealed)  # the comparison's composite is not the sealed one…
    changes = [c for c in result.changes if c.system == "glossary" and c.metric == "composite"]
    assert len(changes) == 1  # …and it says so: old → new and why
    change = changes[0]
    assert change.old == pytest.approx(sealed) and change.new == pytest.approx(shown)
    assert "terminology_adherence" in change.reason and "plain" in change.reason
    # the baseline's own composite is unchanged: nothing listed for it
    assert not [c for c in result.changes if c.system == "plain"]
    assert result.as_dict()["changes"][0]["metric"] == "composite"


def test_cli_prints_each_change_on_stderr_and_strict_refuses(cards: tuple[Path, Path]) -> None:
    plain, glossary = cards
    runner = CliRunner()
    shown = runner.invoke(app, ["compare", str(plain), str(glossary), "--bootstrap", "50"])
    assert shown.exit_code == 0, shown.output
    lines = [line for line in shown.stderr.splitlines() if "composite" in line and "→" in line]
    assert len(lines) == 1 and "glossary" in lines[0] and "terminology_adherence" in lines[0]
    strict = runner.invoke(app, ["compare", str(plain), str(glossary), "--bootstrap", "50", "--strict"])
    assert strict.exit_code == 2
    assert "--strict" in strict.stderr and "composite" in strict.stderr
    assert "Δ" not in strict.stdout  # refused before any table


def test_same_cards_list_no_change(cards: tuple[Path, Path]) -> None:
    plain, _ = cards
    other = plain.with_name("plain2.json")
    mt_eval.score(HYPS, REFS, sources=SRCS, lang="en-es", system="other", out=other)
    result = compare([plain, other], n_resamples=50)
    assert result.changes == ()
    strict = CliRunner().invoke(app, ["compare", str(plain), str(other), "--bootstrap", "50", "--strict"])
    assert strict.exit_code == 0, strict.output

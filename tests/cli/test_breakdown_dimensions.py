"""A breakdown is on the card (and in `show` and the HTML report) only for a dimension the input carries:
plain-text input gives every entry the schema's defaults (difficulty 3, development, corpus, no register),
and a table with that one group repeated the whole run as if it were a finding. A breakdown whose
entries fall in one group is left out; a card written before that still verifies, its one-group
breakdowns recomputed (a changed one is caught)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import write_text_pair
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard import io as card_io
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.verify import verify_card

runner = CliRunner()
SAVED = Path(__file__).parents[1] / "runcard" / "saved" / "card-2.0-predictions-eng-deu.json"
BREAKDOWNS = ("by_difficulty", "by_provenance", "by_register", "by_segment")


@pytest.fixture(scope="module")
def plain_card(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, object]:
    texts = write_text_pair(ntrex_dir, tmp_path_factory.mktemp("plain"), "spa", 10, ("txt", "txt"))
    out = texts["dir"] / "plain.json"
    result = runner.invoke(app, ["score", "--source-file", str(texts["src"]), "--reference-file", str(texts["ref"]),
                                 "-l", "en-es", "-p", str(texts["hyp"]), "--system", "s", "-o", str(out),
                                 "--runs-dir", str(texts["dir"] / "runs"), "--bootstrap", "50"])
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text(encoding="utf-8")), out, result


def test_plain_text_input_has_no_breakdowns(plain_card):
    card, path, _ = plain_card
    assert not [k for k in card["scores"] if k.startswith("by_")], card["scores"].keys()
    assert RunCard.model_validate(card).scores.by_difficulty == {}
    shown = runner.invoke(app, ["show", str(path)])
    assert shown.exit_code == 0, shown.output
    assert "by difficulty" not in shown.output and "by segment" not in shown.output
    html = path.with_suffix(".html")
    reported = runner.invoke(app, ["report", str(path), "-o", str(html)])
    assert reported.exit_code == 0, reported.output
    assert 'id="breakdowns"' not in html.read_text(encoding="utf-8")
    assert verify_card(card_io.load_card(path)) == []
    forged = card_io.load_card(path)  # a one-group table added afterwards is rebuilt and compared, not trusted
    whole = {k: v for k, v in forged["scores"].items() if not k.startswith("by_")}
    forged["scores"]["by_difficulty"] = {"5": {**whole, "composite": 0.99}}  # "every entry is of the hardest"
    assert any(p.startswith("scores.by_difficulty") for p in verify_card(forged))


def test_a_dimension_the_corpus_carries_keeps_its_table(tmp_path: Path):
    """The bundled corpus annotates difficulty, register and segment; every entry is provenance corpus."""
    out, hyps = tmp_path / "a.json", tmp_path / "hyp.jsonl"
    entries = json.loads(Path("examples/ntrex128-eng-spa.json").read_text(encoding="utf-8"))["entries"][:24]
    hyps.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": " ".join(e["reference"].split()[:-1])})
                            + "\n" for e in entries), encoding="utf-8")
    result = runner.invoke(app, ["score", "-c", "examples/ntrex128-eng-spa.json", "-p", str(hyps), "--ids", "1-24",
                                 "--system", "s", "-o", str(out), "--runs-dir", str(tmp_path / "runs"),
                                 "--bootstrap", "20"])
    assert result.exit_code == 0, result.output
    scores = json.loads(out.read_text(encoding="utf-8"))["scores"]
    assert len(scores["by_difficulty"]) > 1 and len(scores["by_register"]) > 1
    assert "by_provenance" not in scores  # one group: the whole run again
    for group in scores["by_difficulty"].values():
        assert set(group["confidence_intervals"]) >= {"chrf_plus_plus", "composite"}


def test_a_card_written_before_verifies_and_its_one_group_breakdowns_are_checked():
    card = card_io.load_card(SAVED)
    assert all(len(card["scores"][k]) == 1 for k in BREAKDOWNS)  # written with one-group tables
    assert verify_card(card) == []
    card["scores"]["by_difficulty"]["3"]["bleu"] += 1.0
    assert any(p.startswith("scores.by_difficulty") for p in verify_card(card))

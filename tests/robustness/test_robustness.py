"""``mt-eval robustness``: sensitivity and stability measured with the scoring pipeline, checked against
sacrebleu's sentence scores computed here directly, on a real card scored from NTREX eng→spa."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest
import sacrebleu
from typer.testing import CliRunner

from mt_eval.analyzers.registry import analyser_for
from mt_eval.cli import app
from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.robustness import robustness
from mt_eval.robustness.perturb import PerturbContext, casing, fst_invalid_word, swapped_numbers, truncation

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
N = 40
runner = CliRunner()


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real card: the first 40 NTREX references, every third one missing its last word."""
    tmp = tmp_path_factory.mktemp("robustness")
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    hyp = tmp / "hyp.jsonl"
    with hyp.open("w", encoding="utf-8") as f:
        for i, e in enumerate(entries):
            words = e["reference"].split()
            f.write(json.dumps({"entry_id": e["id"], "predicted": " ".join(words[:-1]) if i % 3 == 0 else
                                e["reference"]}, ensure_ascii=False) + "\n")
    path = tmp / "card.json"
    result = runner.invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--ids", f"1-{N}", "-b", "0",
                                 "-o", str(path), "--runs-dir", str(tmp / "runs")])
    assert result.exit_code == 0, result.output
    return path


def _rows(card: Path) -> list[dict]:
    return json.loads(card.read_text(encoding="utf-8"))["results"]


def _em(a: str, b: str) -> float:  # decisions §7: NFC and whitespace collapsed
    def norm(s: str) -> str:
        return " ".join(unicodedata.normalize("NFC", s).split())
    return float(norm(a) == norm(b))


def test_sensitivity_and_stability_agree_with_sacrebleu(card: Path) -> None:
    report = robustness(card, only=["chrf_plus_plus,exact_match_rate", "ter"])
    assert report.metrics == ["chrf_plus_plus", "exact_match_rate", "ter", "composite"]  # in the order asked
    rows = _rows(card)
    hyps, refs = [r["predicted"] for r in rows], [r["reference"] for r in rows]
    chrfpp = sacrebleu.CHRF(word_order=2)
    entry = Entry(id=1, source="s", reference="r")
    ctx = PerturbContext(None)
    truncated = [truncation(h, entry, ctx) for h in hyps]
    drops = [chrfpp.sentence_score(t, [r]).score < chrfpp.sentence_score(h, [r]).score
             for h, t, r in zip(hyps, truncated, refs, strict=True)]
    cell = report.sensitivity["chrf_plus_plus"]["truncation"]
    assert cell.n == N and cell.value == pytest.approx(np.mean(drops)) and cell.value > 0.9
    assert report.sensitivity["chrf_plus_plus"]["wrong_language"].value > 0.9  # the English source as output
    lowered = [casing(h, entry, ctx) for h in hyps]
    deltas = [abs(_em(h, r) - _em(low, r)) for h, low, r in zip(hyps, lowered, refs, strict=True) if low is not None]
    em = report.stability["exact_match_rate"]
    assert em["casing"].value == pytest.approx(1 - np.mean(deltas)) and em["casing"].value < 0.5
    assert em["whitespace"].value == 1.0 and em["unicode"].value == 1.0  # EM collapses spaces and applies NFC
    ter = sacrebleu.TER()  # case-insensitive by default: lower-casing changes no TER
    assert all(ter.sentence_score(h, [r]).score == ter.sentence_score(h.lower(), [r]).score
               for h, r in zip(hyps, refs, strict=True))
    assert report.stability["ter"]["casing"].value == 1.0
    chrf_case = [abs(min(chrfpp.sentence_score(h, [r]).score, 100) - chrfpp.sentence_score(low, [r]).score) / 100
                 for h, low, r in zip(hyps, lowered, refs, strict=True) if low is not None]
    assert report.stability["chrf_plus_plus"]["casing"].value == pytest.approx(1 - np.mean(chrf_case))
    assert report.sensitivity["composite"]["truncation"].value > 0.9
    assert set(report.sensitivity["composite"]) == set(report.degradations)


def test_references_as_the_perfect_system_drop_under_every_degradation(card: Path) -> None:
    report = robustness(card, system="references", only=["chrf_plus_plus"], limit=20)
    assert report.entries == 20 and report.skipped == {"punctuation": "changed no entry"}  # no ASCII quotes
    for name, cell in report.sensitivity["chrf_plus_plus"].items():
        assert cell.value == 1.0 and cell.n > 0, name  # a perfect output can only drop
    assert report.stability["chrf_plus_plus"]["whitespace"].value == 1.0  # chrF ignores whitespace


def test_perturbations_do_what_they_say() -> None:
    entry, ctx = Entry(id=1, source="s", reference="r"), PerturbContext(None)
    assert swapped_numbers("En 2019 llegaron 3 barcos.", entry, ctx) == "En 2020 llegaron 4 barcos."
    assert swapped_numbers("Ayer Ana vio a Luis y Ana rió.", entry, ctx) == "Ayer Luis vio a Ana y Luis rió."
    assert swapped_numbers("nada que cambiar aquí", entry, ctx) is None
    analyser = analyser_for(language_card("es"))
    assert analyser is not None
    broken = fst_invalid_word("La reunión terminó temprano.", entry, PerturbContext(analyser))
    assert broken is not None and broken != "La reunión terminó temprano."
    pairs = [(w, v) for w, v in zip(["La", "reunión", "terminó", "temprano."], broken.split(), strict=True) if w != v]
    assert len(pairs) == 1
    (old, new), = pairs
    assert analyser.accepts(old.strip(".")) and not analyser.accepts(new.strip("."))


def test_cli_table_json_and_html(card: Path, tmp_path: Path) -> None:
    html = tmp_path / "r.html"
    result = runner.invoke(app, ["robustness", str(card), "-m", "chrf_plus_plus", "--limit", "10", "--html",
                                 str(html)], terminal_width=250)
    assert result.exit_code == 0, result.output
    assert "chrf_plus_plus" in result.output and "composite" in result.output and "sensitivity" in result.output
    page = html.read_text(encoding="utf-8")
    assert 'id="robustness"' in page and "<code>chrf_plus_plus</code>" in page and 'href="#robustness"' in page
    data = json.loads(runner.invoke(app, ["robustness", str(card), "-m", "chrf_plus_plus", "--limit", "10",
                                          "--json"]).output)
    assert data["overall"]["chrf_plus_plus"]["sensitivity"] == 1.0 and data["entries"] == 10
    again = runner.invoke(app, ["robustness", str(card), "--limit", "1", "--html", str(html)])
    assert again.exit_code == 2 and "already exists" in again.output


@pytest.mark.parametrize(("args", "message"), [
    (["missing.json"], "run card not found"),
    (["{card}", "--system", "mt"], "--system 'mt': choose outputs or references"),
    (["{card}", "-m", "meteor"], "unknown metric 'meteor'"),
    (["{card}", "--limit", "0"], "--limit must be at least 1"),
    (["{garbage}"], "not valid JSON"),
    (["{empty}"], "no per-entry results"),
])
def test_bad_input_is_one_line(card: Path, tmp_path: Path, args: list[str], message: str) -> None:
    garbage = tmp_path / "g.json"
    garbage.write_text("{not json", encoding="utf-8")
    empty = tmp_path / "e.json"
    data = json.loads(card.read_text(encoding="utf-8"))
    data["results"] = []
    empty.write_text(json.dumps(data), encoding="utf-8")
    argv = [a.format(card=card, garbage=garbage, empty=empty) for a in args]
    result = runner.invoke(app, ["robustness", *argv])
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output

"""``lexicon:FILE``: the word-by-word floor from a TSV or an Apertium bilingual dictionary (.dix)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
import sacrebleu
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import MethodError
from mt_eval.methods.base import MethodClass, TranslationRequest
from mt_eval.methods.lexicon import LexiconMethod

TSV = "# English -> Spanish\nthe\tel\ncat\tgato\nsleeps\tduerme\ngood night\tbuenas noches\ngood\tbueno\nthe\tla\n"
DIX = """<?xml version="1.0" encoding="UTF-8"?>
<dictionary>
  <alphabet/>
  <sdefs><sdef n="n"/><sdef n="adj"/><sdef n="vblex"/></sdefs>
  <section id="main" type="standard">
    <e><p><l>cat<s n="n"/></l><r>gato<s n="n"/><s n="m"/></r></p></e>
    <e r="RL"><p><l>feline<s n="adj"/></l><r>gato<s n="n"/></r></p></e>
    <e><p><l>good<b/>night<s n="ij"/></l><r>buenas<b/>noches<s n="ij"/></r></p></e>
    <e r="LR"><p><l>sleep<s n="vblex"/></l><r>dormir<s n="vblex"/></r></p></e>
    <e><i>Madrid<s n="np"/></i></e>
  </section>
</dictionary>
"""


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def _translate(method: LexiconMethod, *sources: str) -> list[str]:
    out = asyncio.run(method.translate([TranslationRequest(i, s, "en", "es") for i, s in enumerate(sources, 1)]))
    return [t.text for t in out]


def test_word_by_word_from_a_tsv(tmp_path: Path) -> None:
    method = LexiconMethod(str(_write(tmp_path, "en-es.tsv", TSV)))
    assert _translate(method, "The cat sleeps.", "Good night, cat!", "good  dog", "Unknown words stay.") == [
        "El gato duerme.",  # capital kept, the first 'the' entry wins
        "Buenas noches, gato!",  # the two-word entry before 'good' alone
        "bueno  dog",  # spacing and unknown words copied
        "Unknown words stay.",  # nothing known: the copy baseline
    ]
    assert method.identity.method_class is MethodClass.RBMT
    assert method.identity.config["dictionary_sha256"] == hashlib.sha256(TSV.encode()).hexdigest()
    assert method.identity.config["entries"] == 5


def test_apertium_dix(tmp_path: Path) -> None:
    method = LexiconMethod(str(_write(tmp_path, "eng-spa.dix", DIX)))
    assert method.table == {"cat": "gato", "good night": "buenas noches", "sleep": "dormir", "Madrid": "Madrid"}
    assert _translate(method, "Good night, feline cat in Madrid.") == ["Buenas noches, feline gato in Madrid."]


def test_another_dictionary_is_another_card(tmp_path: Path) -> None:
    one = LexiconMethod(str(_write(tmp_path, "a.tsv", TSV))).identity
    two = LexiconMethod(str(_write(tmp_path, "b.tsv", TSV + "dog\tperro\n"))).identity
    assert one.config["dictionary_sha256"] != two.config["dictionary_sha256"]


@pytest.mark.parametrize(("name", "text", "words"), [
    ("bad.tsv", "cat gato\n", "line 1 is not"), ("empty.tsv", "# nothing\n", "no entries"),
    ("bad.dix", "<dictionary><section>", "not an Apertium dictionary"), ("missing.tsv", None, "cannot read"),
])
def test_bad_dictionaries_are_one_line_errors(tmp_path: Path, name: str, text: str | None, words: str) -> None:
    path = _write(tmp_path, name, text) if text is not None else tmp_path / name
    with pytest.raises(MethodError, match=words):
        LexiconMethod(str(path))


def test_run_through_the_cli_scores_like_sacrebleu(tmp_path: Path) -> None:
    """``run --method lexicon:FILE``: a sealed rbmt card whose chrF++ is sacrebleu's on the same outputs; a
    dictionary that knows no word scores exactly what copying the source scores."""
    sources = ["The cat sleeps.", "Good night, cat.", "The dog barks."]
    references = ["El gato duerme.", "Buenas noches, gato.", "El perro ladra."]
    src, ref = _write(tmp_path, "src.txt", "\n".join(sources) + "\n"), _write(tmp_path, "ref.txt",
                                                                            "\n".join(references) + "\n")
    scores = {}
    for name, table in (("en-es.tsv", TSV), ("none.tsv", "zzz\tyyy\n")):
        out = tmp_path / f"{name}.json"
        result = CliRunner().invoke(app, ["run", "--method", f"lexicon:{_write(tmp_path, name, table)}",
                                          "--source-file", str(src), "--reference-file", str(ref), "-l", "en-es",
                                          "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"), "-o", str(out)])
        assert result.exit_code == 0, result.output
        card = json.loads(out.read_text(encoding="utf-8"))
        assert card["method"]["method_class"] == "rbmt" and card["cost"]["status"] == "measured"
        hyps = [r["predicted"] for r in card["results"]]
        assert card["scores"]["chrf_plus_plus"] == pytest.approx(
            sacrebleu.corpus_chrf(hyps, [references], word_order=2).score, abs=1e-6)
        scores[name] = card["scores"]["chrf_plus_plus"]
        if name == "none.tsv":
            assert hyps == sources
    assert scores["en-es.tsv"] > scores["none.tsv"]

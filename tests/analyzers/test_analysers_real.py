"""Real analysers: Apertium (lt-proc, null-flush) on NTREX references, and a tiny HFST analyser."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from mt_eval.analyzers.registry import open_analyser
from mt_eval.languages.card import language_card
from mt_eval.languages.words import words

LEXC = """Multichar_Symbols +N +Sg +Pl
LEXICON Root
Nouns ;
LEXICON Nouns
atim Num ;
maskwa Num ;
LEXICON Num
+N+Sg:0 # ;
+N+Pl:ak # ;
"""


def _rate(code: str, lines: list[str], shuffle: bool) -> float:
    card = language_card(code)
    analyser = open_analyser(card.analyser or "")
    rng = random.Random(7)
    ws = [w for line in lines for w in words(line, card)]
    if shuffle:
        ws = [type(w)("".join(rng.sample(w.text, len(w.text))), w.sentence_initial) for w in ws]
    analyser.analyse_many(w.text for w in ws)
    rate = sum(analyser.accepts(w.text, w.sentence_initial) for w in ws) / len(ws)
    analyser.close()
    return rate


@pytest.mark.parametrize(("code", "file"), [("es", "spa"), ("nb", "nob")])
def test_apertium_accepts_real_text_and_rejects_shuffled(code: str, file: str, ntrex_dir: Path) -> None:
    if language_card(code).analyser is None or not Path(language_card(code).analyser.split(":", 1)[1]).is_file():
        pytest.skip(f"analyser for {code} not installed")
    lines = (ntrex_dir / f"newstest2019-ref.{file}.txt").read_text(encoding="utf-8").splitlines()[:400]
    real, shuffled = _rate(code, lines, False), _rate(code, lines, True)
    assert real >= 0.90, real
    assert shuffled < real - 0.3, (real, shuffled)


def test_sentence_initial_capital_and_punctuation() -> None:
    card = language_card("es")
    ws = words("Perros y gatos, 42 y 3,5 — ¡Hola!", card)
    assert [w.text for w in ws] == ["Perros", "y", "gatos", "y", "Hola"]
    assert ws[0].sentence_initial and not ws[2].sentence_initial


@pytest.mark.skipif(shutil.which("hfst-lexc") is None, reason="Debian package hfst not installed")
def test_tiny_hfst_analyser(tmp_path: Path) -> None:
    (tmp_path / "crk.lexc").write_text(LEXC, encoding="utf-8")
    subprocess.run(["hfst-lexc", "-q", str(tmp_path / "crk.lexc"), "-o", str(tmp_path / "crk.hfst")], check=True)
    inverted = subprocess.run(["hfst-invert", str(tmp_path / "crk.hfst")], check=True, capture_output=True).stdout
    subprocess.run(["hfst-fst2fst", "-O", "-o", str(tmp_path / "crk.hfstol")], input=inverted, check=True)
    analyser = open_analyser(f"hfst:{tmp_path / 'crk.hfstol'}")
    result = analyser.analyse_many(["atim", "maskwak", "atimak", "wâpam", "maskwaak"])
    assert result == {"atim": ("atim+N+Sg",), "maskwak": (), "atimak": ("atim+N+Pl",), "wâpam": (),
                      "maskwaak": ("maskwa+N+Pl",)}
    assert analyser.accepts("Atimak", sentence_initial=True) and not analyser.accepts("Atimak")
    analyser.close()

"""code_switching_rate on real NTREX-128 outputs (Scoring Spec §2.4).

Same script (en→es): a word is English when it is in the English card's word list (wamerican) and
the Spanish analyser rejects it. Different scripts (en→th, en→zh): a word is English when its
letters are Latin and none are in the target's script.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import numpy as np
import pytest

from mt_eval.analyzers.registry import analyser_status
from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.registry import metrics_for

N = 100

# English clauses, their word counts, and how many of their words the Spanish analyser accepts
# (checked by hand against apertium-eng-spa's spa-eng.automorf.bin): those cannot be told apart
# from Spanish and are not counted.
CLAUSES: list[tuple[str, int, int]] = [
    ("but nobody knows what happened", 5, 0),
    ("which was a big surprise for everyone", 7, 1),  # a (Spanish preposition)
    ("and the plan is final", 5, 2),  # plan, final
    ("although the local hospital said no", 6, 3),  # local, hospital, no
    ("because the government did not answer", 6, 0),
]


def _rate(target: str, outputs: list[str]) -> tuple[np.ndarray, float]:
    entries = [Entry(id=i + 1, source="(source)", reference=o) for i, o in enumerate(outputs)]
    ctx = MetricContext(entries, language_card(target), language_card("en"))
    (metric,) = metrics_for(ctx.target, ["code_switching_rate"])
    sums = metric.statistics(outputs, ctx).sum(axis=0)
    return sums, float(metric.aggregate(sums))


def _insert(sentence: str, clause: str) -> str:
    """The clause in the middle of the sentence, between two words (no sentence boundary moves)."""
    tokens = sentence.split()
    half = len(tokens) // 2
    return " ".join([*tokens[:half], clause, *tokens[half:]])


@pytest.fixture(scope="module")
def spanish(ntrex_dir: Path) -> list[str]:
    es = language_card("es")
    if analyser_status(es) is not None:
        pytest.skip("apertium-eng-spa is not installed")
    if not language_card("en").source_wordlist or not Path(language_card("en").source_wordlist or "").is_file():
        pytest.skip("wamerican is not installed")
    return (ntrex_dir / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:N]


def test_clean_spanish_is_near_zero(spanish: list[str]) -> None:
    (_switched, total), rate = _rate("es", spanish)
    # Measured: 41 of 2483 words (1.7 %); all English-looking names ("Riverside Church", "Boots",
    # "Trump"), two Spanish words the analyser lacks (torso, irresistible) and stray letters.
    assert total > 2000
    assert rate < 0.03


def test_english_clause_in_spanish_counts_its_words(spanish: list[str]) -> None:
    (switched0, total0), _ = _rate("es", spanish)
    outputs = [_insert(s, CLAUSES[i % len(CLAUSES)][0]) for i, s in enumerate(spanish)]
    (switched, total), rate = _rate("es", outputs)
    inserted = sum(CLAUSES[i % len(CLAUSES)][1] for i in range(N))  # 20·(5+7+5+6+6) = 580
    english = sum(CLAUSES[i % len(CLAUSES)][1] - CLAUSES[i % len(CLAUSES)][2] for i in range(N))  # 20·23 = 460
    assert (inserted, english) == (580, 460)
    assert total - total0 == inserted
    assert switched - switched0 == english
    # The inserted share, by hand: 460 detectable English words among 2483 + 580 = 3063 → 0.150;
    # the rate adds the clean floor (41 words, 0.013) to it.
    share = english / (total0 + inserted)
    assert rate == pytest.approx((switched0 + english) / (total0 + inserted), abs=1e-12)
    assert share <= rate <= share + 0.02
    assert 0.14 < rate < 0.18


def test_per_entry_rate_for_one_line(spanish: list[str]) -> None:
    line = "El gato duerme en la casa."
    (s0, t0), clean = _rate("es", [line])
    (s1, t1), mixed = _rate("es", [_insert(line, "because the government did not answer")])
    assert (s0, t0, clean) == (0, 6, 0.0)
    assert (s1, t1) == (6, 12) and mixed == 0.5


def _count_script(text: str, script: str) -> int:
    """Letters (and combining marks) of one script, counted from Unicode names by hand."""
    return sum(1 for ch in unicodedata.normalize("NFC", text)
               if unicodedata.category(ch)[0] in "LM" and unicodedata.name(ch, "").startswith(script))


@pytest.mark.parametrize(("target", "ref_file", "script"), [("th", "newstest2019-ref.tha.txt", "THAI"),
                                                            ("zh", "newstest2019-ref.zho-CN.txt", "CJK")])
def test_english_words_in_thai_and_chinese_by_script(ntrex_dir: Path, target: str, ref_file: str,
                                                     script: str) -> None:
    # Lines without Latin letters or digits, so every target letter is a word (the card's
    # "character" word rule) and every Latin run is one English word.
    lines = [line for line in (ntrex_dir / ref_file).read_text(encoding="utf-8").splitlines()
             if not any(ch.isdigit() or "LATIN" in unicodedata.name(ch, "") for ch in line)][:20]
    assert len(lines) == 20
    english = "the government did not answer"  # 5 Latin-script words
    outputs = [f"{line} {english}" for line in lines]
    (switched, total), rate = _rate(target, outputs)
    letters = sum(_count_script(line, script) for line in lines)
    assert switched == 5 * 20
    assert total == letters + 5 * 20
    assert rate == pytest.approx(100 / (letters + 100))
    (clean_switched, clean_total), clean = _rate(target, lines)
    assert (clean_switched, clean_total) == (0, letters) and clean == 0.0


def test_mixed_script_word_is_not_english() -> None:
    # "iPhone版" in Chinese: the Latin run is English, the Han letter is Chinese (1 of 3 words).
    (switched, total), rate = _rate("zh", ["我的iPhone版"])
    assert (switched, total) == (1, 4) and rate == 0.25


def test_digits_do_not_hide_chinese_words() -> None:
    (switched, total), _ = _rate("zh", ["他在2019年去了北京 the end"])
    assert (switched, total) == (2, 9)  # 他 在 年 去 了 北 京 + the + end

"""chrF's statistics in C (``metrics/chrf_count.c``) equal sacrebleu's own extraction and the Python transcription,
row for row: on every NTREX-128 language's references against outputs built to score badly (scrambled words,
truncated, another language's sentence, empty, one character) and on random text with combining marks, astral
characters, tabs and no-break spaces; chrF (word order 0) and chrF++ (2). Where it cannot be used, Python is.
"""

from __future__ import annotations

import random

import pytest
from sacrebleu.metrics import CHRF

from data_paths import NTREX
from mt_eval.metrics import chrf_native
from mt_eval.metrics.sacre import _chrf_row
from support.native import require

ALPHABET = ["a", "b", "é", "e\u0301", "🙂", "ß", "ʻ", ",", ".", "!", " ", "\t", "\xa0", "ñ", "語", "ᐊ"]


def _require_library() -> None:
    require(chrf_native._function, "chrf_count.c")


def _pairs(lines: int = 10) -> list[tuple[str, str]]:
    rng = random.Random(11)
    files = sorted(NTREX.glob("newstest2019-ref.*.txt"))
    assert len(files) >= 27
    english = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:lines]
    pairs: list[tuple[str, str]] = []
    for path in files:
        for k, ref in enumerate(path.read_text(encoding="utf-8").splitlines()[:lines]):
            words = ref.split()
            rng.shuffle(words)
            pairs += [(ref, ref), (" ".join(words), ref), (ref[: len(ref) // 3], ref), (english[k], ref), ("", ref),
                      (ref[:1], ref), (ref, ref[:2])]
    for _ in range(400):
        text = lambda: "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))  # noqa: E731
        pairs.append((text(), text()))
    return pairs


@pytest.mark.parametrize("word_order", [0, 2])
def test_rows_equal_sacrebleus_and_the_python_transcription(word_order: int) -> None:
    _require_library()
    metric = CHRF(word_order=word_order)
    pairs = _pairs()
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    ours = chrf_native.rows(metric, hyps, refs)
    assert ours is not None and len(ours) == len(pairs) > 2000
    assert ours == [_chrf_row(metric, h, r) for h, r in pairs]
    sacre = metric._extract_corpus_statistics(hyps, [refs])
    assert ours == [[int(v) for v in row] for row in sacre]


def test_the_corpus_score_is_sacrebleus() -> None:
    """The score a card reports is computed from these rows: equal to sacrebleu's corpus chrF++ to the digit."""
    _require_library()
    metric = CHRF(word_order=2)
    pairs = _pairs(12)
    hyps, refs = [h for h, _ in pairs], [r for _, r in pairs]
    rows = chrf_native.rows(metric, hyps, refs)
    assert rows is not None
    sums = [sum(col) for col in zip(*rows, strict=True)]
    assert metric._compute_score_from_stats(sums).score == CHRF(word_order=2).corpus_score(hyps, [refs]).score


def test_no_library_means_the_python_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chrf_native, "_function", lambda: None)
    assert chrf_native.rows(CHRF(word_order=2), ["a b"], ["a c"]) is None

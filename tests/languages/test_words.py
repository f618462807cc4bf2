"""The memoised tokeniser gives exactly the words of the one algorithm applied to the whole text.

``Tokeniser`` runs ``_tokens`` per whitespace chunk (with fast paths for plain and punctuated words)
and memoises chunks; ``words_unchunked`` runs it once over the whole text. They must agree on
every text — random ones over an alphabet chosen to hit every branch, and all of NTREX.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mt_eval.languages.card import LanguageCard, language_card
from mt_eval.languages.words import Tokeniser, Word, _token_words, _tokens, words
from mt_eval.metrics.cache import RunCache

# letters (Latin, accented, CJK, kana, Thai, Cyrillic), a combining mark, digits (incl. non-ASCII),
# joiners, sentence ends, wrapping punctuation, other symbols and several kinds of space
ALPHABET = "aBcÉñzQ漢字年かカไทยжЖ\u0301079٣²½'’-‐.!?…。،,;:()«»“”¿¡&@#_/ \t\n\u00a0\u3000"
CARDS = ["es", "zh-CN", "ja", "th", "ru"]


def words_unchunked(text: str, card: LanguageCard, normalize: bool = True) -> list[Word]:
    """The one algorithm over the whole text at once (no chunks, no memo, no fast paths): the reference
    ``Tokeniser`` is held to (hand-written cases in ``test_known_cases`` pin the algorithm itself)."""
    tokens, _ = _tokens(unicodedata.normalize("NFC", text) if normalize else text, True)
    character, scripts = card.word_rule == "character", frozenset(card.scripts)
    return [Word(t, bool(f)) for token, flag in tokens for t, f in _token_words(token, flag, character, scripts)]


@pytest.mark.parametrize("code", CARDS)
@settings(max_examples=300, deadline=None)
@given(texts=st.lists(st.text(alphabet=ALPHABET, max_size=40), min_size=1, max_size=6))
def test_chunked_equals_whole_text(code: str, texts: list[str]) -> None:
    card = language_card(code)
    tokeniser = Tokeniser(card)  # one memo across the texts, as in a run
    for text in texts:
        for normalize in (True, False):
            assert tokeniser.words(text, normalize) == words_unchunked(text, card, normalize), (text, normalize)


def test_known_cases() -> None:
    es = language_card("es")
    got = words("«Hola», dijo. ¿Qué tal? (Bien)... l'agua 2019 B52 co-op -x", es)
    assert got == [Word("Hola", True), Word("dijo", False), Word("Qué", True), Word("tal", False),
                   Word("Bien", True), Word("l'agua", True), Word("co-op", False), Word("x", False)]
    # a number consumes the sentence start (the word after it is not sentence-initial)
    assert words("3. Casa", es) == [Word("Casa", True)] and words("En 2019 Casa", es)[1] == Word("Casa", False)
    zh = language_card("zh-CN")
    assert [w.text for w in words("他在2019年去了Paris。", zh)] == ["他", "在", "年", "去", "了", "Paris"]


def test_ntrex_chunked_equals_whole_text(ntrex_dir: Path) -> None:
    for iso3, code in [("spa", "es"), ("deu", "de"), ("fra", "fr"), ("zho-CN", "zh-CN"), ("jpn", "ja")]:
        path = ntrex_dir / f"newstest2019-ref.{iso3}.txt"
        card = language_card(code)
        tokeniser = Tokeniser(card)
        for line in path.read_text(encoding="utf-8").splitlines():
            assert tokeniser.words(line) == words_unchunked(line, card), line


def test_run_cache_tokenises_each_text_once() -> None:
    es = language_card("es")
    cache = RunCache()
    first = cache.words("Hola, mundo.", es)
    assert first == words("Hola, mundo.", es) and cache.words("Hola, mundo.", es) is first
    assert cache.words("Hola, mundo.", es, normalize=False) is not first  # its own answer per setting
    assert RunCache().words("Hola, mundo.", es) is not first  # nothing shared between runs
    assert cache.table("x") is cache.table("x") and cache.table("x") is not RunCache().table("x")

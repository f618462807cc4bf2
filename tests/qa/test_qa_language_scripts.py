"""Character classes (``languages/scripts.py``): the QA spec's 22 scripts and the languages they cover."""

from __future__ import annotations

import pytest

from mt_eval.errors import UserError
from mt_eval.languages.card import all_cards
from mt_eval.languages.scripts import (
    HAN,
    HANGUL,
    KANA,
    LANGUAGE_SCRIPTS,
    LATIN,
    SCRIPTS,
    code_scripts,
    is_kept,
    language_scripts,
    primary_subtag,
    script_of,
)
from mt_eval.qa.metrics import is_character_tokenised

XQUAD_LANGS = ["ar", "de", "el", "en", "es", "hi", "ro", "ru", "th", "tr", "vi", "zh"]


def test_there_are_22_scripts_including_the_spec_named_ones() -> None:
    assert len(SCRIPTS) == 22
    for name in ["Latin", "Han", "Kana", "Hangul", "Arabic", "Cyrillic", "Hebrew", "Thai", "Devanagari"]:
        assert name in SCRIPTS


@pytest.mark.parametrize("lang", [*XQUAD_LANGS, "ja", "ko", "he", "fa"])
def test_required_languages_have_character_classes(lang: str) -> None:
    assert language_scripts(lang)


@pytest.mark.parametrize(
    ("ch", "script"),
    [("a", "Latin"), ("ệ", "Latin"), ("Ж", "Cyrillic"), ("λ", "Greek"), ("ש", "Hebrew"), ("ب", "Arabic"),
     ("پ", "Arabic"), ("क", "Devanagari"), ("ि", "Devanagari"), ("ก", "Thai"), ("ั", "Thai"),
     ("中", "Han"), ("々", "Han"), ("あ", "Kana"), ("ア", "Kana"), ("ー", "Kana"), ("한", "Hangul"),
     ("ა", "Georgian"), ("Ա", "Armenian"), ("অ", "Bengali"), ("த", "Tamil"), ("ລ", "Lao"),
     ("ក", "Khmer"), ("က", "Myanmar")],
)  # fmt: skip
def test_script_of_letters(ch: str, script: str) -> None:
    assert script_of(ch) == script


@pytest.mark.parametrize("ch", ["1", "٣", " ", ",", "،", "。", "「", "・", "$", "€", "😀", "\u0301", "\u200c"])
def test_non_letters_have_no_script(ch: str) -> None:
    assert script_of(ch) is None


def test_kept_characters() -> None:
    assert is_kept("٣") and is_kept("๓") and is_kept("7")  # every decimal digit
    assert is_kept("\u0301")  # a combining accent stays with its letter
    assert not is_kept("،") and not is_kept("ሀ")  # punctuation; Ethiopic is not among the 22


def test_language_tags() -> None:
    assert primary_subtag("zh_TW") == primary_subtag("zh-Hant-TW") == "zh"
    assert language_scripts("ja") == {HAN, KANA}
    assert language_scripts("ko") == {HANGUL}
    assert language_scripts("sr-Latn") == {LATIN}  # the script subtag wins
    assert language_scripts("zh-Hant") == {HAN}
    assert language_scripts("ja-Jpan") == {HAN, KANA}
    assert language_scripts("EN-us") == {LATIN}
    assert is_character_tokenised("zh_cn") and is_character_tokenised("ja")
    assert not is_character_tokenised("th") and not is_character_tokenised("ko")


def test_unknown_language_is_a_user_error_listing_choices() -> None:
    with pytest.raises(UserError, match="unknown language 'klingon'") as info:
        language_scripts("klingon")
    assert "zh" in info.value.one_line()
    assert len(LANGUAGE_SCRIPTS) > 100


def test_language_cards_and_the_script_table_agree() -> None:
    """One truth: for every shipped card the table knows, the table's scripts are among the card's."""
    checked = 0
    for code, card in all_cards().items():
        card_scripts = code_scripts(card.scripts)
        if card_scripts is None or primary_subtag(code) not in LANGUAGE_SCRIPTS:
            continue  # Ethiopic, Canadian syllabics: not among the 22; or a card-only language
        assert language_scripts(code) <= card_scripts, code
        checked += 1
    assert checked >= 20


def test_a_language_only_a_card_knows_takes_the_cards_scripts() -> None:
    assert "sm" not in LANGUAGE_SCRIPTS and "sm" in all_cards()  # Samoan: a card, not in the table
    assert language_scripts("sm") == {LATIN}
    with pytest.raises(UserError):
        language_scripts("iu")  # a card, but Canadian syllabics are not among the 22 scripts

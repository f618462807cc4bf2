"""Word tokenisation and script detection by language card.

Word-level metrics (FST acceptance, code-switching, orthography, hallucination) must agree on what
a word is, so they all use ``words(text, card)``: punctuation and numbers are not words (DESIGN
decision 2), an apostrophe or hyphen inside a word keeps it whole, and a word at the start of a
sentence is flagged so an analyser may retry it in lower case.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from mt_eval.languages.card import LanguageCard

_JOINERS = {"'", "’", "-", "‐"}
_SENTENCE_END = {".", "!", "?", "…", "。", "！", "？", "؟", "।"}

# Unicode character-name prefixes of the ISO 15924 scripts cards use.
_SCRIPT_PREFIXES: dict[str, tuple[str, ...]] = {
    "Latn": ("LATIN",),
    "Cyrl": ("CYRILLIC",),
    "Grek": ("GREEK",),
    "Arab": ("ARABIC",),
    "Hebr": ("HEBREW",),
    "Deva": ("DEVANAGARI",),
    "Ethi": ("ETHIOPIC",),
    "Thai": ("THAI",),
    "Hani": ("CJK",),
    "Jpan": ("CJK", "HIRAGANA", "KATAKANA"),
    "Kore": ("HANGUL", "CJK"),
    "Cans": ("CANADIAN SYLLABICS",),
}


@dataclass(frozen=True)
class Word:
    text: str
    sentence_initial: bool


def _is_letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


@lru_cache(maxsize=4096)
def script_of(ch: str) -> str | None:
    """The card-level script code of one letter, or None for a script no card uses."""
    name = unicodedata.name(ch, "")
    for code, prefixes in _SCRIPT_PREFIXES.items():
        if name.startswith(prefixes):
            return code
    return None


def word_scripts(word: str) -> set[str]:
    return {s for ch in word if _is_letter(ch) and (s := script_of(ch)) is not None}


def _tokens(text: str) -> list[tuple[str, bool]]:
    """(token, starts a sentence) with punctuation split off; joiners kept inside words."""
    out: list[tuple[str, bool]] = []
    initial = True
    current: list[str] = []

    def flush() -> None:
        nonlocal initial
        token = "".join(current).strip("".join(_JOINERS))
        if token:
            out.append((token, initial))
            initial = False
        current.clear()

    for i, ch in enumerate(text):
        joiner = ch in _JOINERS and current and i + 1 < len(text) and _is_letter(text[i + 1])
        if _is_letter(ch) or ch.isdigit() or joiner:
            current.append(ch)
        else:
            flush()
            if ch in _SENTENCE_END:
                initial = True
    flush()
    return out


def words(text: str, card: LanguageCard, normalize: bool = True) -> list[Word]:
    """The words of ``text`` under the card's word rule; numbers and punctuation are dropped.

    ``character`` (Chinese, Japanese, Thai: no spaces between words) makes each letter of the card's
    own scripts a word while runs of other scripts (an English word in Chinese) stay whole.
    ``normalize=False`` keeps the raw code points (the orthography check needs them).
    """
    result: list[Word] = []
    for token, initial in _tokens(unicodedata.normalize("NFC", text) if normalize else text):
        if not any(_is_letter(ch) for ch in token):
            continue
        if card.word_rule == "character":
            # no spaces: a digit run ends a word but must not hide the clause around it (2019年)
            run: list[str] = []
            for ch in token:
                if ch.isdigit():
                    if run:
                        result.append(Word("".join(run), initial))
                        run = []
                    continue
                if script_of(ch) in card.scripts:
                    if run:
                        result.append(Word("".join(run), initial))
                        run = []
                    result.append(Word(ch, initial))
                else:
                    run.append(ch)
                initial = False
            if run:
                result.append(Word("".join(run), False))
            continue
        if any(ch.isdigit() for ch in token):
            continue  # numbers (and letter-digit codes such as B52) are not words of any language
        result.append(Word(token, initial))
    return result

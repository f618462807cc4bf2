"""Writing systems: 22 scripts by Unicode block, character classification, language -> script(s).

The QA spec keeps "digits and the characters of 22 languages" when normalising answers, and RLC
asks whether a character "belongs to the target language". Both questions are really about
*scripts*: every character is classified by Unicode block into one of 22 scripts and each language
maps to the script(s) it is written in. A table of code-point ranges (searched with bisect and
memoised per character) is used instead of ``unicodedata`` script properties because the standard
library has none, and because an explicit table is what the documentation can list.

It lives in ``languages/`` because scripts are a property of languages, not of QA: the language
cards declare theirs as ISO 15924 codes, and :func:`code_scripts` maps those codes onto this table
(a test checks the two agree for every shipped card). A language the table does not list is looked
up in the cards. ``languages/words.py`` still classifies card scripts by Unicode character name;
moving it onto :func:`script_of` is left to that module's owner (NOTE for words.py).

Script-level classification cannot tell English from German (both Latin) -- RLC is a measure of
"answered in the right writing system", which is what catches a model replying in English to a
Thai question.
"""

from __future__ import annotations

import bisect
import unicodedata
from functools import lru_cache

from mt_eval.errors import UserError

LATIN = "Latin"
GREEK = "Greek"
CYRILLIC = "Cyrillic"
ARMENIAN = "Armenian"
GEORGIAN = "Georgian"
HEBREW = "Hebrew"
ARABIC = "Arabic"
DEVANAGARI = "Devanagari"
BENGALI = "Bengali"
GURMUKHI = "Gurmukhi"
GUJARATI = "Gujarati"
TAMIL = "Tamil"
TELUGU = "Telugu"
KANNADA = "Kannada"
MALAYALAM = "Malayalam"
THAI = "Thai"
LAO = "Lao"
KHMER = "Khmer"
MYANMAR = "Myanmar"
HAN = "Han"
KANA = "Kana"  # Hiragana and Katakana together: Japanese mixes them freely
HANGUL = "Hangul"

#: Inclusive code-point ranges per script (letters, marks and script-specific numerals inside them).
_SCRIPT_RANGES: dict[str, tuple[tuple[int, int], ...]] = {
    LATIN: (
        (0x0041, 0x005A), (0x0061, 0x007A), (0x00AA, 0x00AA), (0x00BA, 0x00BA), (0x00C0, 0x024F),
        (0x0250, 0x02AF), (0x1D00, 0x1DBF), (0x1E00, 0x1EFF), (0x2C60, 0x2C7F), (0xA720, 0xA7FF),
        (0xAB30, 0xAB6F), (0xFB00, 0xFB06), (0xFF21, 0xFF3A), (0xFF41, 0xFF5A),
    ),
    GREEK: ((0x0370, 0x03FF), (0x1F00, 0x1FFF)),
    CYRILLIC: ((0x0400, 0x052F), (0x1C80, 0x1C8F), (0x2DE0, 0x2DFF), (0xA640, 0xA69F)),
    ARMENIAN: ((0x0530, 0x058F), (0xFB13, 0xFB17)),
    GEORGIAN: ((0x10A0, 0x10FF), (0x1C90, 0x1CBF), (0x2D00, 0x2D2F)),
    HEBREW: ((0x0590, 0x05FF), (0xFB1D, 0xFB4F)),
    ARABIC: ((0x0600, 0x06FF), (0x0750, 0x077F), (0x08A0, 0x08FF), (0xFB50, 0xFDFF), (0xFE70, 0xFEFF)),
    DEVANAGARI: ((0x0900, 0x097F), (0xA8E0, 0xA8FF)),
    BENGALI: ((0x0980, 0x09FF),),
    GURMUKHI: ((0x0A00, 0x0A7F),),
    GUJARATI: ((0x0A80, 0x0AFF),),
    TAMIL: ((0x0B80, 0x0BFF),),
    TELUGU: ((0x0C00, 0x0C7F),),
    KANNADA: ((0x0C80, 0x0CFF),),
    MALAYALAM: ((0x0D00, 0x0D7F),),
    THAI: ((0x0E00, 0x0E7F),),
    LAO: ((0x0E80, 0x0EFF),),
    MYANMAR: ((0x1000, 0x109F), (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F)),
    KHMER: ((0x1780, 0x17FF), (0x19E0, 0x19FF)),
    HAN: (
        (0x2E80, 0x2FDF), (0x3005, 0x3007), (0x3021, 0x3029), (0x3038, 0x303B), (0x3400, 0x4DBF),
        (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0x20000, 0x2FA1F), (0x30000, 0x323AF),
    ),
    KANA: ((0x3041, 0x309F), (0x30A0, 0x30FF), (0x31F0, 0x31FF), (0xFF66, 0xFF9F), (0x1B000, 0x1B16F)),
    HANGUL: (
        (0x1100, 0x11FF), (0x3131, 0x318E), (0xA960, 0xA97F), (0xAC00, 0xD7A3), (0xD7B0, 0xD7FF),
        (0xFFA0, 0xFFDC),
    ),
}  # fmt: skip

#: The spec's 22 scripts, in table order.
SCRIPTS: tuple[str, ...] = tuple(_SCRIPT_RANGES)

#: Combining marks that belong to no script of their own (they take the script of their base).
_INHERITED_RANGES: tuple[tuple[int, int], ...] = (
    (0x0300, 0x036F), (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F),
)  # fmt: skip

_INHERITED = "Inherited"
_TABLE = sorted(
    [(lo, hi, script) for script, ranges in _SCRIPT_RANGES.items() for lo, hi in ranges]
    + [(lo, hi, _INHERITED) for lo, hi in _INHERITED_RANGES]
)
_STARTS = [lo for lo, _, _ in _TABLE]


@lru_cache(maxsize=65536)
def _block_script(ch: str) -> str | None:
    cp = ord(ch)
    i = bisect.bisect_right(_STARTS, cp) - 1
    if i >= 0:
        lo, hi, script = _TABLE[i]
        if lo <= cp <= hi:
            return script
    return None


@lru_cache(maxsize=65536)
def script_of(ch: str) -> str | None:
    """The script of a *letter-like* character (category L*, M* or Nl), else None.

    Punctuation and symbols that live inside a script's block (the Arabic comma, Thai ฿, CJK
    brackets) are not letters of that script, so the general category is checked as well.
    Inherited combining marks return None: they have no script of their own.
    """
    if unicodedata.category(ch)[0] not in "LM" and unicodedata.category(ch) != "Nl":
        return None
    script = _block_script(ch)
    return None if script == _INHERITED else script


@lru_cache(maxsize=65536)
def is_kept(ch: str) -> bool:
    """Whether normalisation keeps ``ch``: a decimal digit, or a letter/mark of one of the 22 scripts.

    Inherited combining marks (accents written as separate code points) are kept so that a
    decomposed "é" stays a letter instead of losing its accent.
    """
    cat = unicodedata.category(ch)
    if cat == "Nd":
        return True
    if cat[0] not in "LM" and cat != "Nl":
        return False
    return _block_script(ch) is not None


@lru_cache(maxsize=65536)
def is_neutral(ch: str) -> bool:
    """Characters RLC ignores: whitespace, digits, punctuation, symbols, format/control characters
    and script-less combining marks — none of them says which language an answer is in."""
    if ch.isspace() or ch.isdigit():
        return True
    cat = unicodedata.category(ch)
    if cat[0] in "PSCZ":
        return True
    return cat[0] == "M" and _block_script(ch) in (_INHERITED, None)


# --- languages -----------------------------------------------------------------------------------

_BY_SCRIPT: dict[str, tuple[str, ...]] = {
    LATIN: (
        "af", "ay", "az", "ca", "cs", "cy", "da", "de", "en", "eo", "es", "et", "eu", "fi", "fil", "fr",
        "ga", "gl", "gn", "ha", "hr", "ht", "hu", "id", "ig", "is", "it", "jv", "la", "lb", "lt", "lv",
        "mg", "mi", "ms", "mt", "nb", "nl", "nn", "no", "pl", "pt", "qu", "ro", "sk", "sl", "so", "sq",
        "sv", "sw", "tl", "tr", "tk", "uz", "vi", "wo", "xh", "yo", "zu",
    ),
    GREEK: ("el",),
    CYRILLIC: ("ba", "be", "bg", "kk", "ky", "mk", "mn", "ru", "sr", "tg", "tt", "uk"),
    ARMENIAN: ("hy",),
    GEORGIAN: ("ka",),
    HEBREW: ("he", "iw", "yi"),
    ARABIC: ("ar", "ckb", "fa", "ps", "sd", "ug", "ur"),
    DEVANAGARI: ("hi", "mr", "ne", "sa"),
    BENGALI: ("as", "bn"),
    GURMUKHI: ("pa",),
    GUJARATI: ("gu",),
    TAMIL: ("ta",),
    TELUGU: ("te",),
    KANNADA: ("kn",),
    MALAYALAM: ("ml",),
    THAI: ("th",),
    LAO: ("lo",),
    KHMER: ("km",),
    MYANMAR: ("my",),
    HAN: ("zh", "yue"),
    HANGUL: ("ko",),
}  # fmt: skip

LANGUAGE_SCRIPTS: dict[str, frozenset[str]] = {
    lang: frozenset({script}) for script, langs in _BY_SCRIPT.items() for lang in langs
}
LANGUAGE_SCRIPTS["ja"] = frozenset({HAN, KANA})

#: ISO 15924 codes (BCP-47 script subtags such as ``sr-Latn``, and the language cards' ``scripts``)
#: -> the table's scripts. Jpan and Kore are the ISO "mixed" codes Japanese and Korean cards use.
ISO15924: dict[str, frozenset[str]] = {
    code: frozenset(scripts) for code, scripts in {
        "Latn": {LATIN}, "Grek": {GREEK}, "Cyrl": {CYRILLIC}, "Armn": {ARMENIAN}, "Geor": {GEORGIAN},
        "Hebr": {HEBREW}, "Arab": {ARABIC}, "Deva": {DEVANAGARI}, "Beng": {BENGALI}, "Guru": {GURMUKHI},
        "Gujr": {GUJARATI}, "Taml": {TAMIL}, "Telu": {TELUGU}, "Knda": {KANNADA}, "Mlym": {MALAYALAM},
        "Thai": {THAI}, "Laoo": {LAO}, "Khmr": {KHMER}, "Mymr": {MYANMAR}, "Hans": {HAN}, "Hant": {HAN},
        "Hani": {HAN}, "Hira": {KANA}, "Kana": {KANA}, "Hrkt": {KANA}, "Hang": {HANGUL},
        "Jpan": {HAN, KANA}, "Kore": {HANGUL, HAN},
    }.items()
}  # fmt: skip
_SUBTAGS = {code.lower(): scripts for code, scripts in ISO15924.items()}
_SUBTAGS["kore"] = frozenset({HANGUL})  # ko-Kore: Hangul is what RLC expects, as for plain ko


def code_scripts(codes: tuple[str, ...] | list[str]) -> frozenset[str] | None:
    """The table's scripts for ISO 15924 codes (a card's ``scripts``); None if any is not in the table."""
    out: set[str] = set()
    for code in codes:
        scripts = ISO15924.get(code)
        if scripts is None:
            return None
        out |= scripts
    return frozenset(out)


def primary_subtag(lang: str) -> str:
    """``zh_TW`` / ``zh-Hant-TW`` → ``zh``; the spec writes tags both with ``_`` and ``-``."""
    return lang.strip().lower().replace("_", "-").split("-")[0]


def language_scripts(lang: str) -> frozenset[str]:
    """The script(s) a language tag is written in; raises UserError for an unknown language."""
    parts = lang.strip().lower().replace("_", "-").split("-")
    for sub in parts[1:]:
        if sub in _SUBTAGS:
            if parts[0] == "ja":
                return LANGUAGE_SCRIPTS["ja"]
            return _SUBTAGS[sub]
    scripts = LANGUAGE_SCRIPTS.get(parts[0]) or _card_scripts(parts[0])
    if scripts is None:
        raise UserError(
            f"unknown language '{lang}'",
            field="lang",
            hint=f"supported: {', '.join(sorted(LANGUAGE_SCRIPTS))}, or a language card's code",
        )
    return scripts


def _card_scripts(code: str) -> frozenset[str] | None:
    """A language the table lacks, from its language card (only if all its scripts are tabled)."""
    from mt_eval.languages.card import all_cards  # cards load files: only when the table has no answer

    for card in all_cards().values():
        if code == card.code.lower() or code in (a.lower() for a in card.aliases):
            return code_scripts(card.scripts)
    return None

"""Word tokenisation and script detection by language card.

Word-level metrics (FST acceptance, code-switching, orthography, hallucination) must agree on what
a word is, so they all use ``words(text, card)``: punctuation and numbers are not words
(docs/decisions.md §16), an apostrophe or hyphen inside a word keeps it whole, and a word at the start of a
sentence is flagged so an analyser may retry it in lower case.

Speed: scoring tokenises every output several times over and corpora repeat their vocabulary, so
``Tokeniser`` applies the one algorithm (``_tokens`` then ``_token_words``) per whitespace-separated
chunk and memoises each distinct chunk. Whitespace is never part of a word and never ends a
sentence, so the only state crossing a chunk boundary is "the next word starts a sentence"; the
memo keeps both answers for a chunk (after a sentence end or not) and the state it leaves behind.
A test checks chunked and whole-text tokenisation agree on random text.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from mt_eval.languages.card import LanguageCard

_JOINERS = "'’-‐"
_SENTENCE_END = frozenset(".!?…。！？؟।")
# Punctuation that commonly wraps a word ("(palabra),", «palabra»): no letter, digit or space among them.
_EDGES = ".,;:!?¡¿()[]{}\"'«»“”„‘’‚‛‹›-‐–—…/*%。！？、，؟।"

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

# The initial-state of a chunk's first word is not known until the chunk is placed in a text.
Flag = bool | None  # True/False: known; None: "whatever the state was where the chunk starts"


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


def _tokens(text: str, initial: Flag = True) -> tuple[list[tuple[str, Flag]], Flag]:
    """(token, starts a sentence) with punctuation split off; joiners kept inside words. Also the
    sentence-start state after the text (``initial`` unchanged when nothing in it moved it)."""
    if text.isalpha():  # one plain word (isalpha letters are a subset of _is_letter's): the usual chunk
        return [(text, initial)], False
    rest = text.lstrip(_EDGES)
    core = rest.rstrip(_EDGES)
    if core and (core.isalpha() or core.isdigit()):  # one word or number inside punctuation: "(palabra),"
        # the edges hold no letters or digits (and a joiner there joins nothing), so they only
        # move the sentence-start state: before the token, and after it
        lead, trail = text[: len(text) - len(rest)], rest[len(core):]
        flag = True if any(ch in _SENTENCE_END for ch in lead) else initial
        return [(core, flag)], any(ch in _SENTENCE_END for ch in trail)
    out: list[tuple[str, Flag]] = []
    current: list[str] = []

    def flush() -> None:
        nonlocal initial
        token = "".join(current).strip(_JOINERS)
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
    return out, initial


def _token_words(token: str, initial: Flag, character: bool, scripts: frozenset[str]) -> list[tuple[str, Flag]]:
    """The words of one token: none for numbers and punctuation; for ``character`` cards each letter
    of the card's scripts, with runs of other scripts kept whole."""
    if not character and token.isalpha():  # letters only: the word itself (most tokens)
        return [(token, initial)]
    if not any(_is_letter(ch) for ch in token):
        return []
    if not character:
        # numbers (and letter-digit codes such as B52) are not words of any language
        return [] if any(ch.isdigit() for ch in token) else [(token, initial)]
    # no spaces: a digit run ends a word but must not hide the clause around it (2019年)
    result: list[tuple[str, Flag]] = []
    run: list[str] = []
    for ch in token:
        if ch.isdigit():
            if run:
                result.append(("".join(run), initial))
                run = []
            continue
        if script_of(ch) in scripts:
            if run:
                result.append(("".join(run), initial))
                run = []
            result.append((ch, initial))
        else:
            run.append(ch)
        initial = False
    if run:
        result.append(("".join(run), False))
    return result


class Tokeniser:
    """``words`` for one card's word rule, memoised per distinct whitespace-separated chunk.

    One instance belongs to one run (``metrics.cache.RunCache`` holds it): the memo grows with the
    run's vocabulary and is dropped with it. Normalisation applies to the whole text before it is
    split, so one memo serves both ``normalize`` settings.
    """

    def __init__(self, card: LanguageCard) -> None:
        self.character = card.word_rule == "character"
        self.scripts = frozenset(card.scripts)
        # chunk -> (its words after a sentence end, its words otherwise, state it leaves behind)
        self._chunks: dict[str, tuple[tuple[Word, ...], tuple[Word, ...], Flag]] = {}

    def _chunk(self, chunk: str) -> tuple[tuple[Word, ...], tuple[Word, ...], Flag]:
        tokens, end = _tokens(chunk, None)
        found = [w for token, flag in tokens for w in _token_words(token, flag, self.character, self.scripts)]
        after_end = tuple(Word(text, True if flag is None else flag) for text, flag in found)
        inside = tuple(Word(text, False if flag is None else flag) for text, flag in found)
        return after_end, inside, end

    def words(self, text: str, normalize: bool = True) -> list[Word]:
        if normalize:
            text = unicodedata.normalize("NFC", text)
        out: list[Word] = []
        initial = True
        chunks = self._chunks
        for chunk in text.split():
            got = chunks.get(chunk)
            if got is None:
                got = chunks[chunk] = self._chunk(chunk)
            out.extend(got[0] if initial else got[1])
            if got[2] is not None:
                initial = got[2]
        return out


def words(text: str, card: LanguageCard, normalize: bool = True) -> list[Word]:
    """The words of ``text`` under the card's word rule; numbers and punctuation are dropped.

    ``character`` (Chinese, Japanese, Thai: no spaces between words) makes each letter of the card's
    own scripts a word while runs of other scripts (an English word in Chinese) stay whole.
    ``normalize=False`` keeps the raw code points (the orthography check needs them). For many
    texts use a ``Tokeniser`` (or the run's ``ctx.cache.words``), which memoises the vocabulary.
    """
    return Tokeniser(card).words(text, normalize)

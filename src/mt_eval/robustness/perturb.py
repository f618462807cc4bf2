"""Perturbations of translations (AutoMetrics §3.2): degradations that make an output worse, edits that
keep its quality.

The paper asks an LLM for degradation strategies; for translation the damage that matters is known, so
ours are fixed, deterministic rules, each a plain function of (output, entry, context):

* degradations: ``dropped_content_words`` (every second word of four letters or more), ``swapped_numbers``
  (each number +1; without numbers, the first two distinct capitalised names inside the sentence swap),
  ``wrong_language`` (the source text, i.e. untranslated output), ``truncation`` (the first half of the
  words), ``fst_invalid_word`` (where the target has an analyser: the longest word the analyser accepts
  gets two inner letters swapped until the analyser rejects it);
* meaning-preserving edits: ``whitespace`` (doubled spaces, a trailing space), ``punctuation`` (typographic
  quotes and ellipsis for ASCII ones), ``unicode`` (NFD decomposition), ``casing`` (all lower case).

A rule returns None where it does not apply (no number and no names; text without quotes; already lower
case): such an entry is left out of that perturbation's share or mean, rather than counted as unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from mt_eval.analyzers.base import Analyser
from mt_eval.corpus.models import Entry


@dataclass(frozen=True)
class PerturbContext:
    analyser: Analyser | None  # the target language's, for fst_invalid_word (None: that rule is skipped)


Rule = Callable[[str, Entry, PerturbContext], str | None]

_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"\w+", re.UNICODE)
_NAME = re.compile(r"(?<=\s)[A-ZÀ-Þ][\w-]+")  # a capitalised word that does not start the text


def dropped_content_words(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    words = text.split()
    long_ = [i for i, w in enumerate(words) if sum(ch.isalpha() for ch in w) >= 4]
    drop = set(long_[::2])
    return " ".join(w for i, w in enumerate(words) if i not in drop) if drop else None


def swapped_numbers(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    if _NUMBER.search(text):
        return _NUMBER.sub(lambda m: str(int(m.group()) + 1), text)
    names = list(dict.fromkeys(m.group() for m in _NAME.finditer(text)))
    if len(names) < 2:
        return None
    a, b = names[0], names[1]
    return re.sub(rf"\b({re.escape(a)}|{re.escape(b)})\b", lambda m: b if m.group() == a else a, text)


def wrong_language(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    return entry.source if entry.source.strip() and entry.source != text else None


def truncation(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    words = text.split()
    if len(words) >= 2:
        return " ".join(words[: len(words) // 2])
    return text[: len(text) // 2] if len(text) >= 2 else None  # one long word (or a script without spaces)


def fst_invalid_word(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    if ctx.analyser is None:
        return None
    words = sorted({m.group() for m in _WORD.finditer(text) if m.group().isalpha() and len(m.group()) >= 5},
                   key=lambda w: (-len(w), w))
    for word in words[:3]:
        if not ctx.analyser.accepts(word, sentence_initial=text.startswith(word)):
            continue
        for i in range(1, len(word) - 2):
            broken = word[:i] + word[i + 1] + word[i] + word[i + 2:]
            if broken != word and not ctx.analyser.accepts(broken, sentence_initial=text.startswith(word)):
                return re.sub(rf"\b{re.escape(word)}\b", broken, text, count=1)
    return None


def whitespace(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    return text.replace(" ", "  ") + " " if text.strip() else None


_TYPOGRAPHIC = [("...", "…"), ("'", "’")]


def punctuation(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    out = re.sub(r'"([^"]*)"', "“\\1”", text)
    for plain, typographic in _TYPOGRAPHIC:
        out = out.replace(plain, typographic)
    return out if out != text else None


def unicode_nfd(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    out = unicodedata.normalize("NFD", text)
    return out if out != text else None


def casing(text: str, entry: Entry, ctx: PerturbContext) -> str | None:
    out = text.lower()
    return out if out != text else None


DEGRADATIONS: dict[str, Rule] = {
    "dropped_content_words": dropped_content_words,
    "swapped_numbers": swapped_numbers,
    "wrong_language": wrong_language,
    "truncation": truncation,
    "fst_invalid_word": fst_invalid_word,
}
EDITS: dict[str, Rule] = {
    "whitespace": whitespace,
    "punctuation": punctuation,
    "unicode": unicode_nfd,
    "casing": casing,
}

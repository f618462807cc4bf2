"""Critical-error checks of one output against its source and reference (issue 22 item 2).

Four checks, each answering "is something that changes the meaning missing, changed or added?" with the
offending tokens, so a flag can always be shown with its evidence (``show``, ``report``, the web run page):

* **numbers** — every number the source and the reference share must be in the output (digits or one of the
  target card's ``number_words``), and the output may not carry a digit number that neither has. Digit groups
  are normalised so 1,000 / 1.000 / 1 000 are one number; the same rule on both sides, so an ambiguous
  2.125 means the same thing wherever it is written.
* **entities** — tokens capitalised mid-sentence in the source or the reference that the source and the
  reference both carry (a name kept as it is) must be in the output. The reference is the licence: a name
  it translates ("Monday" → "lunes") is not required. Source and target written in different scripts
  (transliteration) or a caseless script: not checked (``None``), never guessed.
* **negation** — the number of negation cues (the target card's ``negation`` lists) in the output must equal
  the reference's. No cue list on the target card: not checked (``None``).
* **addition / omission** — characters of output over reference beyond ``ADD_RATIO`` (or below
  ``OMIT_RATIO``), or a sentence more (fewer) than both the source and the reference with the length
  moving the same way beyond ``SENTENCE_ADD_RATIO`` (``SENTENCE_OMIT_RATIO``); either way at least
  ``MIN_CHARS_APART`` characters apart, so a short segment's few words never count as content.

**Typos** (version 2, decisions §62): a number word, a name or a whole-word negation cue of ``TYPO_MIN_CHARS``+
characters that the output lacks still counts as kept when the output holds a word at Damerau–Levenshtein
distance 1 from it that the reference does not carry and that is not itself a number word or cue of the card
("trse" keeps "tres"; "trece" never does; digits always compare exactly). A card sealed under version 1 is
rescored without it (``Pair.typo_tolerant``).

What each check cannot catch is listed in the Metric Card (``metrics/cards/critical_error_rate.toml``).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import Word, words

VERSION = "2"  # 2: typo-tolerant number words, names and cues; "1" cards are rescored exactly
TYPO_MIN_CHARS = 4  # shorter words are too close to each other for one edit to be a typo ("no" / "ni")
ADD_RATIO = 1.6  # output characters over reference characters: more is added content
OMIT_RATIO = 0.55  # and less is omitted content
SENTENCE_ADD_RATIO = 1.2  # an extra sentence counts when the output is also this much longer
SENTENCE_OMIT_RATIO = 0.85  # a missing sentence counts when the output is also this much shorter
MIN_CHARS_APART = 15  # and output and reference differ by at least this many characters (or the output is empty)
FLAGS = ("numbers", "entities", "negation", "addition", "omission")
CASED_SCRIPTS = frozenset({"Latn", "Cyrl", "Grek"})  # scripts with capital letters: the entity check needs them

# digit runs with their separators; a space joins only a following group of exactly three digits (1 000)
_NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f]\d+|[ ](?=\d{3}(?!\d))\d{3})*")
_SENTENCE_END = re.compile(r"[.!?…。！？؟।]+[\"'»”’)\]]*(?:\s+|$)")
_POSSESSIVE = re.compile(r"['’]s$")
_HYPHENS = re.compile(r"[-‐]")
_FINAL_END = re.compile(r"[.!?…。！？؟।]+[\"'»”’)\]]*$")


@dataclass
class Findings:
    """One entry's flags: for each check, None (not checked for this pair) or the offending tokens
    (empty: checked and fine)."""

    found: dict[str, tuple[str, ...] | None] = field(default_factory=dict)

    def flagged(self, check: str) -> bool:
        return bool(self.found.get(check))

    def checked(self, check: str) -> bool:
        return self.found.get(check) is not None

    @property
    def any(self) -> bool:
        return any(self.flagged(c) for c in FLAGS)

    def offending(self) -> dict[str, list[str]]:
        """Only the flags raised, each with its tokens: what a report shows."""
        return {c: list(v) for c, v in self.found.items() if v}


@lru_cache(maxsize=65536)  # corpora repeat their vocabulary: each word is folded once per process
def fold(text: str) -> str:
    """Case and accents folded, a final possessive dropped: ``Trump’s`` and ``trump`` are one name."""
    text = _POSSESSIVE.sub("", text)
    return "".join(c for c in unicodedata.normalize("NFD", text.casefold()) if not unicodedata.combining(c))


def normalise_number(raw: str) -> str:
    """One spelling per number: thousands separators dropped, a decimal part kept after a point.

    Groups are split at ``.``/``,``/spaces; a last group of exactly three digits is a thousands group
    (1,000 = 1.000 = 1 000 = 1000), any other last group a decimal part (3,5 = 3.5). Leading zeros of the
    whole part and trailing zeros of the decimal part go (07 = 7, 1.50 = 1.5)."""
    groups = re.split(r"[.,\u00a0\u202f ]", raw)
    if len(groups) > 1 and len(groups[-1]) != 3:
        whole, frac = "".join(groups[:-1]), groups[-1].rstrip("0")
    else:
        whole, frac = "".join(groups), ""
    whole = whole.lstrip("0") or "0"
    return f"{whole}.{frac}" if frac else whole


def digit_numbers(text: str) -> list[str]:
    return [normalise_number(m.group(0)) for m in _NUMBER.finditer(text)]


def word_numbers(ws: Iterable[Word], card: LanguageCard) -> list[str]:
    """Values of the card's number words (``twenty-five`` as the sum of its parts)."""
    table = _number_table(card.number_words)
    if not table:
        return []
    out = []
    for w in ws:
        low = w.text.casefold()
        if low in table:
            out.append(str(table[low]))
        elif "-" in low or "‐" in low:
            parts = _HYPHENS.split(low)
            if all(p in table for p in parts):
                out.append(str(sum(table[p] for p in parts)))
    return out


@lru_cache(maxsize=64)
def _number_table(pairs: tuple[tuple[str, int], ...]) -> dict[str, int]:
    return dict(pairs)


def sentences(text: str) -> int:
    """Sentences by their final punctuation (a text without any is one sentence; an empty one none)."""
    stripped = text.strip()
    if not stripped:
        return 0
    return len(_SENTENCE_END.findall(stripped)) + (0 if _FINAL_END.search(stripped) else 1)


def negation_count(ws: Iterable[Word], card: LanguageCard) -> int:
    cues, prefixes, suffixes = set(card.negation_cues), card.negation_prefixes, card.negation_suffixes
    count = 0
    for w in ws:
        low = w.text.casefold()
        if low in cues or (prefixes and low.startswith(prefixes)) or (suffixes and low.endswith(suffixes)):
            count += 1
    return count


def negation_checked(card: LanguageCard) -> bool:
    return bool(card.negation_cues or card.negation_prefixes or card.negation_suffixes)


def entities_checked(target: LanguageCard, source: LanguageCard, has_source: bool) -> bool:
    """Names are compared as strings: both sides cased and sharing a script, else not checked."""
    return (has_source and not target.caseless and not source.caseless
            and bool(set(target.scripts) & set(source.scripts) & CASED_SCRIPTS))


def _capitalised(ws: Iterable[Word]) -> set[str]:
    """Folded tokens written with a capital mid-sentence (a sentence's first word says nothing)."""
    return {fold(w.text) for w in ws if not w.sentence_initial and len(w.text) > 1 and w.text[0].isupper()}


def _present(name: str, folded_output: set[str]) -> bool:
    """A name is in the output as a word, or as the stem of an inflected word (Merkels, Londres's)."""
    return name in folded_output or any(o.startswith(name) and len(o) - len(name) <= 2 for o in folded_output)


@dataclass(frozen=True)
class Pair:
    """The language cards of one run and what the run has (sources or not)."""

    target: LanguageCard
    source: LanguageCard
    has_source: bool
    typo_tolerant: bool = True  # False: version 1's exact matching, for cards sealed with it


def one_edit(a: str, b: str) -> bool:
    """Damerau–Levenshtein distance at most 1: one letter changed, added, dropped, or two adjacent swapped."""
    if a == b:
        return True
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long = (a, b) if la < lb else (b, a)
    i = next((k for k in range(len(short)) if short[k] != long[k]), len(short))
    return short[i:] == long[i + 1:]


def _card_word(folded: str, card: LanguageCard) -> bool:
    """A number word or whole-word negation cue of the card: another word, never a misspelling of one."""
    table = _number_table(card.number_words)
    return folded in _folded_words(tuple(table)) or folded in _folded_words(card.negation_cues)


@lru_cache(maxsize=64)
def _folded_words(ws: tuple[str, ...]) -> frozenset[str]:
    return frozenset(fold(w) for w in ws)


class Misspellings:
    """The output words that may stand for a word the output lacks: not in the reference, not a number word
    or cue of the card. Each stands for one word at most (``take``)."""

    def __init__(self, out_w: list[Word], ref_w: list[Word], card: LanguageCard) -> None:
        ref = {fold(w.text) for w in ref_w}
        self.free = [o for o in (fold(w.text) for w in out_w) if o not in ref and not _card_word(o, card)]

    def take(self, wanted: str) -> bool:
        """Whether a free output word is one edit from ``wanted`` (folded, ``TYPO_MIN_CHARS``+); it is used up."""
        if len(wanted) < TYPO_MIN_CHARS:
            return False
        for k, o in enumerate(self.free):
            if one_edit(o, wanted):
                del self.free[k]
                return True
        return False


def check_numbers(source: str, output: str, reference: str, pair: Pair,
                  src_w: list[Word], out_w: list[Word], ref_w: list[Word]) -> tuple[str, ...]:
    out_digits = digit_numbers(output)
    out_all = set(out_digits) | set(word_numbers(out_w, pair.target))
    ref_all = set(digit_numbers(reference)) | set(word_numbers(ref_w, pair.target))
    if pair.has_source:
        src_all = set(digit_numbers(source)) | set(word_numbers(src_w, pair.source))
        required = src_all & ref_all
        known = src_all | ref_all
    else:
        required = set(digit_numbers(reference))
        known = ref_all
    missing = sorted(required - out_all)
    if missing and pair.typo_tolerant:  # a misspelt number word keeps its number; digits never get this
        spare = Misspellings(out_w, ref_w, pair.target)
        spelt = _spellings(ref_w, pair.target)
        missing = [n for n in missing if not any(spare.take(w) for w in spelt.get(n, ()))]
    invented = sorted(dict.fromkeys(n for n in out_digits if n not in known))
    return (*(f"-{n}" for n in missing), *(f"+{n}" for n in invented))


def _spellings(ref_w: list[Word], card: LanguageCard) -> dict[str, list[str]]:
    """Number value -> the reference's single number words for it (folded): what a misspelling may stand for."""
    out: dict[str, list[str]] = {}
    for w in ref_w:
        for value in word_numbers([w], card):
            out.setdefault(value, []).append(fold(w.text))
    return out


def check_entities(src_w: list[Word], out_w: list[Word], ref_w: list[Word], pair: Pair) -> tuple[str, ...]:
    src_all, ref_all = {fold(w.text) for w in src_w}, {fold(w.text) for w in ref_w}
    required = (_capitalised(src_w) & ref_all) | (_capitalised(ref_w) & src_all)
    folded_output = {fold(w.text) for w in out_w}
    missing = [name for name in sorted(required) if not _present(name, folded_output)]
    if missing and pair.typo_tolerant:
        spare = Misspellings(out_w, ref_w, pair.target)
        missing = [name for name in missing if not spare.take(name)]
    return tuple(f"-{name}" for name in missing)


def check_negation(out_w: list[Word], ref_w: list[Word], pair: Pair) -> tuple[str, ...]:
    target = pair.target
    got, want = negation_count(out_w, target), negation_count(ref_w, target)
    if got < want and pair.typo_tolerant:  # a reference's whole-word cue the output misspelt is still there
        whole = _folded_words(target.negation_cues)
        lacking = Counter(fold(w.text) for w in ref_w if fold(w.text) in whole)
        lacking.subtract(fold(w.text) for w in out_w if fold(w.text) in whole)
        spare = Misspellings(out_w, ref_w, target)
        got += sum(spare.take(cue) for cue, k in lacking.items() for _ in range(max(0, k)))
    if got == want:
        return ()
    cues = [w.text for w in out_w if negation_count([w], target)]
    return (f"{got} cue(s), reference {want}", *cues)


def check_length(source: str, output: str, reference: str, pair: Pair) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(addition, omission) evidence: the ratio and the sentence counts that decided it."""
    out_len, ref_len = len(output.strip()), max(1, len(reference.strip()))
    ratio = out_len / ref_len
    s_out, s_ref = sentences(output), sentences(reference)
    s_src = sentences(source) if pair.has_source else s_ref
    say = f"length ×{ratio:.2f}, sentences {s_out} (reference {s_ref})"
    # a few characters never count: "Sí." against "Sí, lo es." is a ratio of 3 and no added content
    apart = abs(out_len - len(reference.strip())) >= MIN_CHARS_APART or not out_len
    added = apart and (ratio > ADD_RATIO or (s_out > max(s_ref, s_src) and ratio > SENTENCE_ADD_RATIO))
    omitted = apart and (ratio < OMIT_RATIO or (s_out < min(s_ref, s_src) and ratio < SENTENCE_OMIT_RATIO))
    return ((say,) if added else ()), ((say,) if omitted else ())


def check_entry(source: str, output: str, reference: str, pair: Pair,
                tokenise: WordsOf | None = None) -> Findings:
    """Every check of one entry. ``tokenise``: the run's memoised ``words`` (``ctx.cache.words``)."""
    tok = tokenise or words
    out_w, ref_w = list(tok(output, pair.target)), list(tok(reference, pair.target))
    src_w = list(tok(source, pair.source)) if pair.has_source else []
    added, omitted = check_length(source, output, reference, pair)
    return Findings({
        "numbers": check_numbers(source, output, reference, pair, src_w, out_w, ref_w),
        "entities": (check_entities(src_w, out_w, ref_w, pair)
                     if entities_checked(pair.target, pair.source, pair.has_source) else None),
        "negation": check_negation(out_w, ref_w, pair) if negation_checked(pair.target) else None,
        "addition": added,
        "omission": omitted,
    })


class WordsOf(Protocol):
    """The shape of ``languages.words.words`` and ``RunCache.words``: (text, card) -> words."""

    def __call__(self, text: str, card: LanguageCard, /) -> list[Word]: ...

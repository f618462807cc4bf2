"""Hallucination rate (Scoring Spec §2.4): the share of outputs whose content the source does not support.

Why entries and not words. A content word of a faithful human translation often has no support a
bilingual dictionary can show (paraphrase, explicitation: "a decade later" → "diez años después",
"AM" → "Miembro de la Asamblea"): on NTREX 37–47 % of the human references' content words are
unsupported whatever the lookup, against 96 % for a reference of another line, so a word-level rate
cannot tell a translation from a fabrication (docs/decisions.md §25). Per entry the two separate:
an output is **hallucinated** when at least ``MIN_UNSUPPORTED`` of its content words and at least
``ENTRY_THRESHOLD`` of them lack support. Statistics are (hallucinated, judged) per entry, judged
being 1 when the output has a content word, so the corpus value is hallucinated / judged outputs.

Support for an output content word (noun, lexical verb, adjective, adverb with no closed-class
reading; a verb directly before an infinitive is an auxiliary, ``va comprar``), any of:

* one of its lemmas is a translation of a source lemma (the card's Apertium bilingual dictionary
  for the source language, ``lt-proc -b``; Debian ships only compiled ``.autobil.bin`` files, so the
  dictionary is queried, lemma and part of speech, with the usual gender/degree tags tried too);
* one of its translations back into the source language (the pair's reverse dictionary, found
  beside the forward one) is a source lemma or word;
* it is a cognate or shared string (names, numbers spelt out, borrowings): a normalised edit
  similarity of at least ``COGNATE_SIMILARITY`` to a source word or lemma, accents and case folded.

The three constants were calibrated on development lines of NTREX and validated on disjoint lines
(docs/languages.md). Cards scored before this definition (``metrics.hallucination_rate.signature``
null) are rescored with the word-level rate they were written with (``hallucination_v1``).
"""

from __future__ import annotations

import unicodedata
import weakref
from collections.abc import Sequence
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np

from mt_eval.analyzers.base import Analyser
from mt_eval.analyzers.registry import analyser_for
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.hallucination_v1 import word_level_statistics
from mt_eval.metrics.lexicon import (
    CONTENT_TAGS,
    BilingualLexicon,
    analyses_of,
    first_tag,
    lemma_of,
    lexicon_for,
    shared_lexicon,
)
from mt_eval.metrics.rates import RatioMetric

VERSION = "2"
ENTRY_THRESHOLD = 0.8  # share of unsupported content words that makes an output hallucinated
MIN_UNSUPPORTED = 2  # and at least this many: one unknown word never condemns a short line
COGNATE_SIMILARITY = 0.75  # difflib ratio of accent-folded strings
# closed classes (Apertium tags): a word with any such reading is a function word
CLOSED_TAGS = frozenset({"det", "prn", "pr", "cnjcoo", "cnjsub", "cnjadv", "vbser", "vbhaver", "vbmod", "vaux",
                         "num", "rel", "preadv", "predet", "ij"})
CLOSED_SUBTAGS = ("<pos>", "<dem>", "<qnt>", "<itg>", "<rel>")


def fold(text: str) -> str:
    """Case and accents folded: ``económico`` and ``economic`` compare as plain letters."""
    return "".join(c for c in unicodedata.normalize("NFD", text.casefold()) if not unicodedata.combining(c))


def reverse_path(path: str) -> str | None:
    """The pair's other direction beside a dictionary (``eng-spa.autobil.bin`` → ``spa-eng.autobil.bin``):
    Apertium pair packages ship both; None when it is not there."""
    p = Path(path)
    pair, dot, rest = p.name.partition(".")
    left, dash, right = pair.partition("-")
    if not dash:
        return None
    other = p.with_name(f"{right}-{left}{dot}{rest}")
    return str(other) if other.is_file() else None


def reverse_lexicon_for(target: LanguageCard, source: LanguageCard) -> BilingualLexicon | None:
    spec = target.lexicon_from(source.code)
    back = reverse_path(spec.partition(":")[2]) if spec else None
    return shared_lexicon(back) if back else None


def is_content(analyses: tuple[str, ...]) -> bool:
    """A noun, lexical verb, adjective or adverb first, and no closed-class reading at all."""
    return bool(analyses) and first_tag(analyses[0]) in CONTENT_TAGS and not any(
        first_tag(a) in CLOSED_TAGS or any(t in a for t in CLOSED_SUBTAGS) for a in analyses)


def similar(a: str, b: str) -> bool:
    """Cognate or shared string: difflib ratio ≥ COGNATE_SIMILARITY (cheap upper bounds first)."""
    return _lengths_allow(len(a), len(b)) and _ratio_reaches(a, b)


def _ratio_reaches(a: str, b: str) -> bool:
    """difflib's ratio ≥ COGNATE_SIMILARITY, its cheaper upper bound first; lengths already checked."""
    m = SequenceMatcher(None, a, b)
    return m.quick_ratio() >= COGNATE_SIMILARITY and m.ratio() >= COGNATE_SIMILARITY


def _letters_allow(a: str, a_letters: frozenset[str], b: str, b_letters: frozenset[str]) -> bool:
    """Exact necessary condition, cheaper than difflib: a letter of the shorter string that the other
    lacks can never be matched, so at most ``len(shorter) - unmatched`` characters match."""
    shorter, other = (a, b_letters) if len(a) <= len(b) else (b, a_letters)
    can_match = sum(1 for ch in shorter if ch in other)
    return 2 * can_match >= COGNATE_SIMILARITY * (len(a) + len(b))


def _lengths_allow(la: int, lb: int) -> bool:
    """Exact necessary condition on lengths alone: difflib's ratio is at most 2·min/(la+lb)
    (``real_quick_ratio``), and cognates further than 4 letters apart in length are not compared."""
    return abs(la - lb) <= 4 and 2 * min(la, lb) >= COGNATE_SIMILARITY * (la + lb)


class SourceSupport:
    """What one source text supports: its lemmas and words, their translations, their folded strings."""

    def __init__(self, words: list[str], analyses: list[str], forward: BilingualLexicon) -> None:
        parts = [p for a in analyses for p in a.split("+")]  # didn't → do + not
        self.lemmas = {lemma_of(p) for p in parts} | {w.casefold() for w in words}
        self.translations = forward.lemmas(parts)
        self.folded = {fold(x) for x in self.lemmas}
        self._by_length: dict[int, list[tuple[str, frozenset[str]]]] = {}
        for x in sorted(self.folded):
            self._by_length.setdefault(len(x), []).append((x, frozenset(x)))
        # the same source is read once per target language, and cognates recur across them
        self._cognate: dict[str, bool] = {}

    def cognate(self, candidate: str) -> bool:
        """Whether ``candidate`` is similar to some source string (memoised; only lengths that can match)."""
        known = self._cognate.get(candidate)
        if known is None:
            n, letters = len(candidate), frozenset(candidate)
            near_first = sorted((length for length in self._by_length if _lengths_allow(n, length)),
                                key=lambda length: abs(length - n))  # the likeliest matches first
            known = candidate in self.folded or any(
                _letters_allow(candidate, letters, x, x_letters) and _ratio_reaches(candidate, x)
                for length in near_first for x, x_letters in self._by_length[length])
            self._cognate[candidate] = known
        return known

    def supports(self, form: str, analyses: tuple[str, ...], back: frozenset[str]) -> bool:
        lemmas = {lemma_of(a) for a in analyses}
        if lemmas & self.translations or back & self.lemmas:
            return True
        return any(self.cognate(c) for c in {fold(form)} | {fold(x) for x in lemmas})


def entry_row(ws: list[str], analyses: dict[str, tuple[str, ...]], support: SourceSupport,
              backward: BilingualLexicon | None) -> tuple[float, float]:
    """(hallucinated, judged) for one output's words."""
    unsupported = content = 0
    for k, w in enumerate(ws):
        found = analyses[w]
        if not is_content(found):
            continue
        if k + 1 < len(ws) and any("<vblex>" in a for a in found) and any("<inf>" in a for a in analyses[ws[k + 1]]):
            continue  # an auxiliary before an infinitive (va comprar, suele llegar)
        content += 1
        back = backward.lemmas(found) if backward is not None else frozenset()
        if not support.supports(w, found, back):
            unsupported += 1
    flagged = unsupported >= MIN_UNSUPPORTED and unsupported >= ENTRY_THRESHOLD * content
    return float(flagged), float(content > 0)


# What each source text supports, kept across runs: every system scored on a test set reads the same sources (a
# sweep's cells, a store publishing or rescoring cards, compare rebuilding them), and a SourceSupport also keeps
# its cognate answers, which outputs of the same source repeat. Keyed per source analyser (an analyser a plugin
# replaces starts afresh) by (dictionary file, source language, text); a support depends on nothing else.
_SUPPORTS: weakref.WeakKeyDictionary[Analyser, dict[tuple[str, str, str], SourceSupport]] = weakref.WeakKeyDictionary()
MAX_SUPPORTS = 20_000  # per analyser; beyond it the memo starts again (a bound, not a policy)


def source_supports(texts: Sequence[str], ctx: MetricContext, analyser: Analyser,
                    lexicon: BilingualLexicon) -> dict[str, SourceSupport]:
    """Each source text's SourceSupport, the ones not seen before analysed in one batch."""
    known = _SUPPORTS.setdefault(analyser, {})
    if len(known) > MAX_SUPPORTS:
        known.clear()
    key = (lexicon.path, ctx.source.code)
    # read into this call's own dict: a sweep's cells score on threads, and another may clear the memo meanwhile
    found = {t: known.get((*key, t)) for t in dict.fromkeys(texts)}
    todo = [t for t, support in found.items() if support is None]
    if todo:
        words = {t: [w.text for w in ctx.cache.words(t, ctx.source)] for t in todo}
        analyses = analyses_of(analyser, [w for ws in words.values() for w in ws])
        lexicon.prefetch(p for readings in analyses.values() for a in readings for p in a.split("+"))
        for t, ws in words.items():
            found[t] = known[(*key, t)] = SourceSupport(ws, [a for w in ws for a in analyses[w]], lexicon)
    return {t: support for t, support in found.items() if support is not None}


class HallucinationRate(RatioMetric):
    id = "hallucination_rate"
    higher_is_better = False
    # seconds per 10k NTREX lines, as a share of chrF++'s 3.6: 0.70 of it measured beside it (lt-proc's time included;
    # decisions §86); declared at 1.0 of it, the analysis bin looked as heavy as chrF++ and TER together
    cost = 2.5
    shares_analyses = True
    reads_source = True

    def signature(self, target: LanguageCard) -> str | None:
        """Pins the definition: cards without it were scored with the word-level rate (v1)."""
        return (f"hallucination:{VERSION}|unit:entry|tau:{ENTRY_THRESHOLD}|min:{MIN_UNSUPPORTED}"
                f"|cognate:{COGNATE_SIMILARITY}")

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        lexicon = lexicon_for(ctx.target, ctx.source)
        if lexicon is None or not ctx.has_source:
            return np.zeros((len(hypotheses), 2))
        if ctx.recorded_signature(self.id) is None:
            return word_level_statistics(hypotheses, ctx, lexicon)
        src_an, tgt_an = analyser_for(ctx.source), analyser_for(ctx.target)
        assert src_an is not None and tgt_an is not None
        backward = reverse_lexicon_for(ctx.target, ctx.source)
        support = source_supports([e.source for e in ctx.entries], ctx, src_an, lexicon)
        tokenised = [[w.text for w in ctx.cache.words(h, ctx.target)] for h in hypotheses]
        tgt_analyses = analyses_of(tgt_an, [w for ws in tokenised for w in ws])
        if backward is not None:
            backward.prefetch(a for found in tgt_analyses.values() if is_content(found) for a in found)
        rows = [entry_row(ws, tgt_analyses, support[e.source], backward)
                for e, ws in zip(ctx.entries, tokenised, strict=True)]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

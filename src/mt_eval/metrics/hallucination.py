"""Hallucination rate (Scoring Spec §2.4): output content words with no counterpart in the source.

Source words are analysed with the source card's analyser and translated lemma by lemma through
the target card's Apertium bilingual dictionary (``lt-proc -b``, one long-lived process; Debian
ships only compiled ``.autobil.bin`` files, which ``lt-expand`` cannot read, so we query the
dictionary instead of expanding it). An output content word (noun, verb, adjective, adverb) is
supported when one of its lemmas is a translation of a source lemma or its form occurs in the
source (names, cognates); the rate is unsupported / content words. Null without a lexicon.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from mt_eval.analyzers.base import Analyser
from mt_eval.analyzers.lttoolbox import NullFlushProcess, escape, parse_units
from mt_eval.analyzers.registry import analyser_for
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.rates import RatioMetric

CONTENT_TAGS = ("n", "vblex", "adj", "adv")


def _lemma(analysis: str) -> str:
    return analysis.split("<", 1)[0].split("+", 1)[0].casefold()


def _first_tag(analysis: str) -> str:
    return analysis.split("<", 2)[1].rstrip(">") if "<" in analysis else ""


class BilingualLexicon:
    """Source analysis → target lemmas through ``lt-proc -b -z`` with memoisation."""

    def __init__(self, path: str) -> None:
        self.process = NullFlushProcess(["lt-proc", "-b", "-z", path])
        self._memo: dict[str, frozenset[str]] = {}

    def translate(self, analyses: Sequence[str]) -> dict[str, frozenset[str]]:
        todo = [a for a in dict.fromkeys(analyses) if a not in self._memo]
        for start in range(0, len(todo), 500):
            chunk = todo[start:start + 500]
            query = "\n".join("^" + _tag_escape(a) + "$" for a in chunk) + "\n"
            lines = self.process.request(query).split("\n")
            for i, analysis in enumerate(chunk):
                units = parse_units(lines[i]) if i < len(lines) else []
                self._memo[analysis] = frozenset(_lemma(t) for _, ts in units for t in ts)
        return {a: self._memo[a] for a in analyses}


def _tag_escape(analysis: str) -> str:
    lemma, sep, tags = analysis.partition("<")
    return escape(lemma) + sep + tags


@lru_cache(maxsize=8)
def _lexicon(path: str) -> BilingualLexicon:
    return BilingualLexicon(path)


def lexicon_for(target: LanguageCard, source: LanguageCard) -> BilingualLexicon | None:
    spec = target.lexicon_from(source.code)
    if not spec or not source.analyser or not target.analyser:
        return None
    return _lexicon(spec.partition(":")[2])


def _analyses(analyser: Analyser, texts: list[str]) -> dict[str, tuple[str, ...]]:
    """Each word's analyses, or its lower-case form's when it has none: two analyser batches."""
    first = analyser.analyse_many(texts)
    retried = analyser.analyse_many(t.lower() for t, found in first.items() if not found)
    return {t: found or retried[t.lower()] for t, found in first.items()}


class HallucinationRate(RatioMetric):
    id = "hallucination_rate"
    higher_is_better = False
    cost = 1.2  # English analyses and the bilingual lexicon on top of the shared target analyses
    shares_analyses = True

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        lexicon = lexicon_for(ctx.target, ctx.source)
        if lexicon is None:
            return np.zeros((len(hypotheses), 2))
        src_an, tgt_an = analyser_for(ctx.source), analyser_for(ctx.target)
        assert src_an is not None and tgt_an is not None
        # every source word and every output word analysed in batches, each source text read once
        src_words = {e.source: ctx.cache.words(e.source, ctx.source) for e in ctx.entries}
        src_analyses = _analyses(src_an, [w.text for ws in src_words.values() for w in ws])
        lexicon.translate([a for found in src_analyses.values() for a in found])
        supported_by: dict[str, tuple[set[str], set[str]]] = {}
        for text, ws in src_words.items():
            analyses = [a for w in ws for a in src_analyses[w.text]]
            supported = set().union(*lexicon.translate(analyses).values()) if analyses else set()
            supported_by[text] = (supported, {w.text.casefold() for w in ws})
        tokenised = [ctx.cache.words(h, ctx.target) for h in hypotheses]
        tgt_analyses = _analyses(tgt_an, [w.text for ws in tokenised for w in ws])
        # per output word: None if not a content word, else its lemmas
        content: dict[str, frozenset[str] | None] = {
            t: frozenset(_lemma(a) for a in found) if found and _first_tag(found[0]) in CONTENT_TAGS else None
            for t, found in tgt_analyses.items()
        }
        rows = []
        for entry, ws in zip(ctx.entries, tokenised, strict=True):
            supported, surface = supported_by[entry.source]
            unsupported = n_content = 0
            for w in ws:
                lemmas = content[w.text]
                if lemmas is None:
                    continue
                n_content += 1
                if w.text.casefold() not in surface and not lemmas & supported:
                    unsupported += 1
            rows.append((float(unsupported), float(n_content)))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

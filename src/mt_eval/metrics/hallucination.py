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

from mt_eval.analyzers.base import analyser_for
from mt_eval.analyzers.lttoolbox import NullFlushProcess, escape, parse_units
from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import words
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


class HallucinationRate(RatioMetric):
    id = "hallucination_rate"
    higher_is_better = False

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        lexicon = lexicon_for(ctx.target, ctx.source)
        if lexicon is None:
            return np.zeros((len(hypotheses), 2))
        src_an, tgt_an = analyser_for(ctx.source), analyser_for(ctx.target)
        assert src_an is not None and tgt_an is not None
        rows = []
        for entry, hyp in zip(ctx.entries, hypotheses, strict=True):
            src_words = words(entry.source, ctx.source)
            src_analyses = [a for w in src_words for a in src_an.analyse(w.text)
                            or src_an.analyse(w.text.lower())]
            supported = set().union(*lexicon.translate(src_analyses).values()) if src_analyses else set()
            surface = {w.text.casefold() for w in src_words}
            unsupported = content = 0
            for w in words(hyp, ctx.target):
                analyses = tgt_an.analyse(w.text) or tgt_an.analyse(w.text.lower())
                if not analyses or _first_tag(analyses[0]) not in CONTENT_TAGS:
                    continue
                content += 1
                if w.text.casefold() not in surface and not {_lemma(a) for a in analyses} & supported:
                    unsupported += 1
            rows.append((float(unsupported), float(content)))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)


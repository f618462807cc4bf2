"""The word-level hallucination rate of cards written before its redesign (kept only to verify them).

Unsupported output content words / content words, where a word is supported when one of its lemmas
is a dictionary translation of a source analysis (full tags) or its form occurs in the source. It
could not separate human references (0.48 on NTREX en→es) from references of other lines (0.98),
which is why ``hallucination.py`` replaced it (docs/decisions.md §25); cards whose
``metrics.hallucination_rate.signature`` is null were scored with it, and ``verify``/``compare``
must rebuild exactly their numbers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mt_eval.analyzers.registry import analyser_for
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.lexicon import CONTENT_TAGS, BilingualLexicon, analyses_of, first_tag, lemma_of


def word_level_statistics(hypotheses: Sequence[str], ctx: MetricContext, lexicon: BilingualLexicon) -> np.ndarray:
    """(unsupported, content words) per entry, as mt-eval 2.0 computed them."""
    src_an, tgt_an = analyser_for(ctx.source), analyser_for(ctx.target)
    assert src_an is not None and tgt_an is not None
    src_words = {e.source: ctx.cache.words(e.source, ctx.source) for e in ctx.entries}
    src_analyses = analyses_of(src_an, [w.text for ws in src_words.values() for w in ws])
    supported_by: dict[str, tuple[set[str], set[str]]] = {}
    for text, ws in src_words.items():
        analyses = [a for w in ws for a in src_analyses[w.text]]
        supported = set().union(*lexicon.translate(analyses).values()) if analyses else set()
        supported_by[text] = (supported, {w.text.casefold() for w in ws})
    tokenised = [ctx.cache.words(h, ctx.target) for h in hypotheses]
    tgt_analyses = analyses_of(tgt_an, [w.text for ws in tokenised for w in ws])
    content = {t: frozenset(lemma_of(a) for a in found) if found and first_tag(found[0]) in CONTENT_TAGS else None
               for t, found in tgt_analyses.items()}
    rows = []
    for entry, ws in zip(ctx.entries, tokenised, strict=True):
        supported, surface = supported_by[entry.source]
        lemma_sets = [content[w.text] for w in ws]
        judged = [(w, lemmas) for w, lemmas in zip(ws, lemma_sets, strict=True) if lemmas is not None]
        unsupported = sum(1 for w, lemmas in judged if w.text.casefold() not in surface and not lemmas & supported)
        rows.append((float(unsupported), float(len(judged))))
    return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)

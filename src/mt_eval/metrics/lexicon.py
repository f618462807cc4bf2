"""Apertium bilingual dictionaries and lemmas, shared by the hallucination rate and its earlier definition.

Debian ships only compiled ``.autobil.bin`` files, which ``lt-expand`` cannot read, so the dictionary
is queried (``lt-proc -b -z``, one long-lived process per file, every answer memoised).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from mt_eval.analyzers.base import Analyser
from mt_eval.analyzers.lttoolbox import NullFlushProcess, escape, parse_units
from mt_eval.languages.card import LanguageCard

CONTENT_TAGS = ("n", "vblex", "adj", "adv")
# the bilingual dictionary matches tags as a prefix: lemma<pos> alone misses entries that need gender
# (miembro<n><mf>) or degree (new<adj><sint>), so these are tried too
_QUERY_TAGS = ("", "<m>", "<f>", "<mf>", "<nt>", "<GD>", "<sint>", "<pron>")


def lemma_of(analysis: str) -> str:
    return analysis.split("<", 1)[0].split("+", 1)[0].casefold()


def first_tag(analysis: str) -> str:
    return analysis.split("<", 2)[1].rstrip(">") if "<" in analysis else ""


class BilingualLexicon:
    """Source analysis → target lemmas through ``lt-proc -b -z`` with memoisation."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.process = NullFlushProcess(["lt-proc", "-b", "-z", path])
        self._memo: dict[str, frozenset[str]] = {}
        self._lemma_memo: dict[tuple[str, ...], frozenset[str]] = {}

    def translate(self, analyses: Sequence[str]) -> dict[str, frozenset[str]]:
        todo = [a for a in dict.fromkeys(analyses) if a not in self._memo]
        for start in range(0, len(todo), 500):
            chunk = todo[start:start + 500]
            query = "\n".join("^" + _tag_escape(a) + "$" for a in chunk) + "\n"
            lines = self.process.request(query).split("\n")
            for i, analysis in enumerate(chunk):
                units = parse_units(lines[i]) if i < len(lines) else []
                self._memo[analysis] = frozenset(lemma_of(t) for _, ts in units for t in ts)
        return {a: self._memo[a] for a in analyses}

    def lemmas(self, analyses: Iterable[str]) -> frozenset[str]:
        """Every target lemma the dictionary gives for these analyses' lemmas and parts of speech
        (memoised per set of analyses: a run asks about the same word's analyses again and again)."""
        key = tuple(analyses)
        known = self._lemma_memo.get(key)
        if known is None:
            queries = _queries(key)
            known = frozenset().union(*self.translate(queries).values()) if queries else frozenset()
            self._lemma_memo[key] = known
        return known

    def prefetch(self, analyses: Iterable[str]) -> None:
        """Look up a whole run's analyses in a few large requests, so that the per-entry ``lemmas``
        calls that follow are answered from memory instead of one round trip each."""
        self.translate(_queries(analyses))


def _queries(analyses: Iterable[str]) -> list[str]:
    return [f"{a.split('<', 1)[0]}<{tag}>{extra}" for a in analyses if (tag := first_tag(a)) for extra in _QUERY_TAGS]


def _tag_escape(analysis: str) -> str:
    lemma, sep, tags = analysis.partition("<")
    return escape(lemma) + sep + tags


@lru_cache(maxsize=8)
def shared_lexicon(path: str) -> BilingualLexicon:
    return BilingualLexicon(path)


def lexicon_for(target: LanguageCard, source: LanguageCard) -> BilingualLexicon | None:
    spec = target.lexicon_from(source.code)
    if not spec or not source.analyser or not target.analyser or not Path(spec.partition(":")[2]).is_file():
        return None  # no dictionary for this pair (or its package is not installed): null, never a guess
    return shared_lexicon(spec.partition(":")[2])


def analyses_of(analyser: Analyser, texts: list[str]) -> dict[str, tuple[str, ...]]:
    """Each word's analyses, or its lower-case form's when it has none: two analyser batches."""
    first = analyser.analyse_many(texts)
    retried = analyser.analyse_many(t.lower() for t, found in first.items() if not found)
    return {t: found or retried[t.lower()] for t, found in first.items()}

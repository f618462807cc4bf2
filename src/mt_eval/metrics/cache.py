"""Work the metrics of one run share: each output tokenised once, each repeated check done once.

A run's metrics look at the same texts many times over (FST acceptance, morphology, code-switching,
hallucination and compliance all want the words of every output; compliance checks the same raw
output for two metrics), and corpora repeat their vocabulary. ``RunCache`` lives on the run's
``MetricContext`` (``ctx.cache``), so it is created with the run and dropped with it: nothing
computed for one run can leak into another, and nothing is global. Memo tables are plain dicts
keyed by what the answer depends on; a metric names its own table (``ctx.cache.table("...")``).

Under the two-core split (``scoring.extraction``) the forked worker gets a copy of the cache as it
was at the fork; what the worker adds stays there.
"""

from __future__ import annotations

from typing import Any

from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import Tokeniser, Word


class RunCache:
    """Per-run memo: tokenisations by (card word rule, normalisation) and named memo tables."""

    def __init__(self) -> None:
        self._tokenisers: dict[tuple[str, tuple[str, ...]], Tokeniser] = {}
        self._words: dict[tuple[str, tuple[str, ...], bool], dict[str, list[Word]]] = {}
        self._tables: dict[str, dict[Any, Any]] = {}

    def words(self, text: str, card: LanguageCard, normalize: bool = True) -> list[Word]:
        """``languages.words.words(text, card, normalize)``, computed once per run and text.

        The list is shared between callers: treat it as read-only.
        """
        rule = (card.word_rule, tuple(card.scripts))
        memo = self._words.get((*rule, normalize))
        if memo is None:
            memo = self._words[(*rule, normalize)] = {}
        found = memo.get(text)
        if found is None:
            tokeniser = self._tokenisers.get(rule)
            if tokeniser is None:
                tokeniser = self._tokenisers[rule] = Tokeniser(card)
            found = memo[text] = tokeniser.words(text, normalize)
        return found

    def table(self, name: str) -> dict[Any, Any]:
        """A named memo table for one kind of per-run answer (created empty on first use)."""
        found = self._tables.get(name)
        if found is None:
            found = self._tables[name] = {}
        return found

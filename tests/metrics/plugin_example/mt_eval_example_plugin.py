"""A third-party mt-eval plugin in one module: a metric, an analyser kind and a post-translation hook.

``docs/plugins.md`` walks through it; ``tests/metrics/test_plugin_example.py`` installs it through a
real entry-point declaration (a ``.dist-info/entry_points.txt``, exactly what ``pip install`` writes
from the ``pyproject.toml`` beside this file) and checks that a run picks each part up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from mt_eval.analyzers.base import Analyser
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.rates import RateMetric, normalize_text


class SourceCopyRate(RateMetric):
    """Share of entries whose output is the source text, unchanged (the model did not translate).

    Statistics per entry: (1 if output == source after NFC/whitespace normalisation else 0, 1);
    the corpus value is Σ copies / Σ entries, so CIs and paired tests come for free.
    """

    id = "source_copy_rate"
    higher_is_better = False

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        source = ctx.entries[index].source
        copied = bool(hypothesis.strip()) and normalize_text(hypothesis) == normalize_text(source)
        return float(copied), 1.0


class WordListAnalyser(Analyser):
    """An 'analyser' that accepts the words of a plain word list (one per line) as ``word<wl>``."""

    kind = "wordlist"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.known = frozenset(Path(path).read_text(encoding="utf-8").split())

    @property
    def version(self) -> str:
        return f"wordlist {Path(self.path).name} ({len(self.known)} words)"

    def _analyse_batch(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        return [(f"{w}<wl>",) if w in self.known else () for w in words]


_PREAMBLE = re.compile(r"^\s*(?:translation|traducción)\s*:\s*", re.IGNORECASE)


def strip_preamble(output: str, source: str, card: LanguageCard) -> str:
    """Remove a leading 'Translation:' label that chatty LLMs put before their answer."""
    return _PREAMBLE.sub("", output, count=1)

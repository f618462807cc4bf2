"""chrF++, chrF, BLEU and TER through sacrebleu's own sufficient statistics.

Statistics are extracted once per run with sacrebleu itself (chrF's by a transcription of
sacrebleu's counting that intersects n-grams in C; tests hold it to sacrebleu's integers). A single
(1-D) sum is scored by sacrebleu's own ``_compute_score_from_stats``, so card values equal
sacrebleu's corpus scores bit for bit; batches of sums (bootstrap resamples) use the NumPy transcriptions below, which
tests check against sacrebleu on every resample.
"""

from __future__ import annotations

from abc import abstractmethod
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU, CHRF

from mt_eval.languages.card import LanguageCard, require_bleu_tokenizer
from mt_eval.metrics import chrf_native
from mt_eval.metrics.base import Level, MetricBase, MetricContext
from mt_eval.metrics.ter_bound import MAX_SHIFT_EXCESS, SHIFT_BUDGET, BoundedTER, recorded_budget

_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)


class SacreMetric(MetricBase):
    """Shared plumbing: the metric object, statistics extraction and the exact scalar path."""

    scale = 100.0

    @abstractmethod
    def _scorer(self, target: LanguageCard) -> Any:
        """The sacrebleu metric object configured for this target language."""

    def __init__(self) -> None:
        self._metric: Any = None

    def scorer(self, target: LanguageCard) -> Any:
        """The configured sacrebleu object, built once per metric instance."""
        if self._metric is None:
            self._metric = self._scorer(target)
            self._metric.num_refs = 1  # one reference stream; sacrebleu's signature needs it
        return self._metric

    def bind(self, target: LanguageCard) -> None:
        self.scorer(target)

    def prepare(self, ctx: MetricContext) -> None:
        """The scorer, with sacrebleu's reference count for the signature (``nrefs:N``, ``var`` when entries
        differ), set here in the parent even when the statistics are extracted in a forked worker."""
        counts = {len(e.all_references) for e in ctx.entries}
        self.scorer(ctx.target).num_refs = counts.pop() if len(counts) == 1 else -1

    def signature(self, target: LanguageCard) -> str | None:
        return str(self.scorer(target).get_signature())

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        metric = self.scorer(ctx.target)
        rows = metric._extract_corpus_statistics(list(hypotheses), reference_streams(ctx))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), -1)

    def exact(self, sums: np.ndarray) -> float:
        values = [int(v) if float(v).is_integer() else float(v) for v in sums]
        return float(self._metric._compute_score_from_stats(values).score)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        if sums.ndim == 1:
            return np.asarray(self.exact(sums))
        return self.vector(sums)

    @abstractmethod
    def vector(self, sums: np.ndarray) -> np.ndarray:
        """NumPy transcription of sacrebleu's score-from-statistics over leading axes."""

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return np.array([self.exact(row) for row in stats])


def reference_streams(ctx: MetricContext) -> list[list[str | None]]:
    """sacrebleu's reference streams: stream *k* holds each entry's *k*-th reference, None where an entry
    has fewer (sacrebleu drops those per segment, as for its variable-reference test sets)."""
    refs = [e.all_references for e in ctx.entries]
    width = max((len(r) for r in refs), default=1)
    return [[r[k] if k < len(r) else None for r in refs] for k in range(width)]


def multi_reference(ctx: MetricContext) -> bool:
    return any(len(e.references) > 1 for e in ctx.entries)


class ChrFBase(SacreMetric):
    """sacrebleu's CHRF at a given word order; statistics are (hyp, ref, match) per n-gram order."""

    word_order = 0

    def _scorer(self, target: LanguageCard) -> Any:
        return CHRF(word_order=self.word_order)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """sacrebleu's chrF statistics, transcribed: the same n-grams (its own punctuation splitting
        for words), counted the same way, but intersected with C-level set operations instead of
        sacrebleu's Python loop over every hypothesis n-gram, which is a third of its chrF time.
        With one reference sacrebleu's best-of-references step keeps that reference's statistics.
        Tests check equality with sacrebleu's own extraction on NTREX in several scripts and on
        random text; configurations not transcribed here (lowercase, whitespace) use sacrebleu's."""
        metric = self.scorer(ctx.target)
        if metric.lowercase or metric.whitespace or multi_reference(ctx):
            return super().statistics(hypotheses, ctx)  # several references: sacrebleu's own best-of-references
        rows = chrf_native.rows(metric, hypotheses, [e.reference for e in ctx.entries])  # the C twin, if built
        if rows is None:
            rows = [_chrf_row(metric, hyp, e.reference) for hyp, e in zip(hypotheses, ctx.entries, strict=True)]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), -1)

    def vector(self, sums: np.ndarray) -> np.ndarray:
        m = self._metric
        order = m.char_order + m.word_order
        factor = m.beta**2
        s = sums.reshape(*sums.shape[:-1], order, 3)
        hyp, ref, match = s[..., 0], s[..., 1], s[..., 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            prec = np.where(hyp > 0, match / np.where(hyp > 0, hyp, 1), 1e-16)
            rec = np.where(ref > 0, match / np.where(ref > 0, ref, 1), 1e-16)
        effective = (hyp > 0) & (ref > 0)
        n_eff = effective.sum(-1)
        avg_prec = np.zeros(sums.shape[:-1])
        avg_rec = np.zeros(sums.shape[:-1])
        for i in range(order):  # sequential sums, as sacrebleu does
            avg_prec = avg_prec + np.where(effective[..., i], prec[..., i], 0.0)
            avg_rec = avg_rec + np.where(effective[..., i], rec[..., i], 0.0)
        safe = np.where(n_eff > 0, n_eff, 1)
        avg_prec = np.where(n_eff > 0, avg_prec / safe, 0.0)
        avg_rec = np.where(n_eff > 0, avg_rec / safe, 0.0)
        denom = factor * avg_prec + avg_rec
        with np.errstate(divide="ignore", invalid="ignore"):
            score = (1 + factor) * avg_prec * avg_rec / np.where(denom > 0, denom, 1)
        return np.where(avg_prec + avg_rec > 0, 100 * score, 0.0)


def _ngrams(metric: Any, text: str) -> list[Counter[str]]:
    """Character n-grams of orders 1..char_order (spaces removed), then word n-grams of orders
    1..word_order over sacrebleu's punctuation-split words, joined by a space as sacrebleu joins them."""
    chars = "".join(text.split())
    size = len(chars)
    out = [Counter(map(chars.__getitem__, map(slice, range(size - n + 1), range(n, size + 1))))
           for n in range(1, metric.char_order + 1)]
    if metric.word_order > 0:
        words = metric._remove_punctuation(text)
        # zip stops at the shortest shifted copy: exactly the len(words) - n + 1 windows sacrebleu takes
        out += [Counter(map(" ".join, zip(*(words[i:] for i in range(n)), strict=False)))
                for n in range(1, metric.word_order + 1)]
    return out


def _chrf_row(metric: Any, hypothesis: str, reference: str) -> list[int]:
    """(hypothesis n-grams, reference n-grams, matches) per order, as sacrebleu's
    ``_get_match_statistics`` counts them (no hypothesis n-grams counted where the reference has none)."""
    row: list[int] = []
    for hyp, ref in zip(_ngrams(metric, hypothesis), _ngrams(metric, reference), strict=True):
        common = hyp.keys() & ref.keys()
        matches = sum(map(min, map(hyp.__getitem__, common), map(ref.__getitem__, common)))
        row += [sum(hyp.values()) if ref else 0, sum(ref.values()), matches]
    return row


class ChrF(ChrFBase):
    """chrF (word order 0, the WMT convention): reported, not in the composite."""

    id = "chrf"

    derives_from = "chrf_plus_plus"

    def derive(self, computed: Mapping[str, np.ndarray], ctx: MetricContext) -> np.ndarray | None:
        """chrF's statistics are the character block of chrF++'s (single reference): reuse them. With several
        references sacrebleu picks the best one per segment by each metric's own F-score, which may differ."""
        plus = computed.get("chrf_plus_plus")
        if plus is None or multi_reference(ctx):
            return None
        return plus[:, : 3 * self.scorer(ctx.target).char_order]


class ChrFPlusPlus(ChrFBase):
    """chrF++ (character 6-grams plus word bigrams): the primary surface metric (§2.1)."""

    id = "chrf_plus_plus"
    cost = 3.6  # seconds per 10k NTREX lines (TER 4.2, BLEU 1.5; the language-aware metrics 0.05-1.2)
    word_order = 2


class Bleu(SacreMetric):
    """Corpus BLEU with the tokenizer the target card names (zh, ja-mecab, char for Thai…)."""

    id = "bleu"
    level = Level.CORPUS
    cost = 1.5

    def _scorer(self, target: LanguageCard) -> Any:
        require_bleu_tokenizer(target)  # Japanese needs the [ja] extra: an error, never another tokenizer
        return BLEU(tokenize=target.bleu_tokenizer)

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return None

    def vector(self, sums: np.ndarray) -> np.ndarray:
        n = self._metric.max_ngram_order
        sys_len, ref_len = sums[..., 0], sums[..., 1]
        correct, total = sums[..., 2 : 2 + n], sums[..., 2 + n :]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            bp = np.where(
                sys_len < ref_len,
                np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
                1.0,
            )
            zero = (correct == 0) & (total > 0)
            smooth = 2.0 ** np.cumsum(zero, axis=-1)
            safe_total = np.where(total > 0, total, 1)
            prec = np.where(
                total > 0,
                np.where(correct == 0, 100.0 / (smooth * safe_total), 100.0 * correct / safe_total),
                0.0,
            )
            logs = np.where(prec > 0, np.log(np.where(prec > 0, prec, 1)), _LOG_ZERO)
        acc = np.zeros(sums.shape[:-1])
        for i in range(n):
            acc = acc + logs[..., i]
        score = bp * np.exp(acc / n)
        return np.where(correct.sum(-1) > 0, score, 0.0)


class Ter(SacreMetric):
    """TER (0–∞, lower is better): reported, not in the composite. sacrebleu's TER with its shift search bounded
    (``metrics.ter_bound``): sacrebleu's numbers on real translations, word salad cannot make scoring slow."""

    id = "ter"
    higher_is_better = False
    cost = 4.2

    def _scorer(self, target: LanguageCard) -> Any:
        return BoundedTER()

    def signature(self, target: LanguageCard) -> str | None:
        """sacrebleu's signature and the bound: a card says its TER searched at most this many shifts."""
        return f"{super().signature(target)}|shifts:{SHIFT_BUDGET}|excess:{MAX_SHIFT_EXCESS}"

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        """A card being rescored keeps the search it was scored with: its recorded budget, or sacrebleu's own
        unbounded one for a card sealed before the bound (its signature names no ``shifts``)."""
        self.scorer(ctx.target).budget = recorded_budget(ctx.recorded_signature(self.id))
        return super().statistics(hypotheses, ctx)

    def vector(self, sums: np.ndarray) -> np.ndarray:
        edits, ref_len = sums[..., 0], sums[..., 1]
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = edits / np.where(ref_len > 0, ref_len, 1)
        return 100 * np.where(ref_len > 0, ratio, np.where(edits > 0, 1.0, 0.0))

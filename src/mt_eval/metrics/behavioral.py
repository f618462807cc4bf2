"""Behavioural metrics (Scoring Spec §2.4) and equivalent match: failure modes, not quality.

Every metric here yields per-entry sufficient statistics — (numerator, denominator) for the rates;
one count per (term, rendering) for consistency — so corpus values, CIs and paired tests come from
the generic code. A metric that lacks what it needs (variants, a word list, a terminology file, a
bilingual lexicon) has a zero denominator everywhere, so its value is null, never a guess.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from mt_eval.analyzers.base import Analyser
from mt_eval.analyzers.registry import analyser_for
from mt_eval.corpus.variant_class import LEMMA_SYNONYM, parse_variant_class
from mt_eval.errors import UserError
from mt_eval.languages import langid
from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import Word, word_scripts
from mt_eval.metrics.base import CURRENT, Level, MetricBase, MetricContext
from mt_eval.metrics.rates import MATCH_SIGNATURE, RateMetric, RatioMetric, WordWeightedMatch
from mt_eval.metrics.variant_class import VARIANT_CLASS_SIGNATURE, Verdict, entry_verdict, loose_form

# --- equivalent match -------------------------------------------------------------------------


class EquivalentMatch(WordWeightedMatch):
    """Verdict EXACT or EQUIVALENT under the entry's variant-class rules (``metrics.variant_class``); null when
    no entry of the corpus has variants or a variant class (it would only repeat exact match). Weighted by
    reference words, as exact match. A card whose signature predates variant classes (match:2, or none) is
    rescored with its own rule: ``loose_form`` equal to a reference or a listed variant."""

    id = "equivalent_match_rate"
    classes = True  # set by ``prepare``: this run applies variant-class rules
    analyser: Analyser | None = None  # for lemma_synonym, only when an entry declares it

    def prepare(self, ctx: MetricContext) -> None:
        super().prepare(ctx)
        recorded = ctx.recorded_signature(self.id)
        self.classes = recorded == CURRENT or (recorded or "").startswith("match:3")
        wants_lemmas = self.classes and any(
            LEMMA_SYNONYM in parse_variant_class(e.variant_class, e.id) for e in ctx.entries)
        self.analyser = analyser_for(ctx.target) if wants_lemmas else None

    def signature(self, target: LanguageCard) -> str | None:
        if not self.weighted:
            return None
        return VARIANT_CLASS_SIGNATURE if self.classes else MATCH_SIGNATURE

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        if not any(e.variants or (self.classes and e.variant_class) for e in ctx.entries):
            return np.zeros((len(hypotheses), 2))
        return super().statistics(hypotheses, ctx)

    def matches(self, hypothesis: str, ctx: MetricContext, index: int) -> bool:
        entry = ctx.entries[index]
        if self.classes:
            verdict = entry_verdict(hypothesis, entry, ctx.target, self.analyser)
            return verdict in (Verdict.EXACT, Verdict.EQUIVALENT)
        accepted = {loose_form(t, ctx.target) for t in (*entry.all_references, *entry.variants)}
        return loose_form(hypothesis, ctx.target) in accepted


# --- code-switching ---------------------------------------------------------------------------


@lru_cache(maxsize=8)
def load_wordlist(path: str) -> frozenset[str]:
    """Lower-case common words only: capitalised entries are names, which are not code-switching."""
    lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    return frozenset(w for w in lines if w and w == w.lower() and "'" not in w)


def _common_word(text: str, sentence_initial: bool) -> str:
    """The form to look up in a common-word list, or "" for what no such list should judge:
    single letters, acronyms (all capitals) and capitalised words inside a sentence (names such as
    'Trump' or 'Boots', which every language borrows as they are)."""
    if len(text) < 2 or text.isupper():
        return ""
    if text[:1].isupper() and not sentence_initial:
        return ""
    return text.lower()


class CodeSwitching(RatioMetric):
    """Share of output words in the source language (lower is better).

    Where the scripts differ, a word is source-language when its letters are in a source script
    and in none of the target's. Where they overlap, it is a word of the source card's word list
    (e.g. Debian's wamerican) that the target analyser rejects. Without a target analyser or a word
    list those rules cannot tell the two languages apart; there, when lingua is installed and knows
    both languages (``languages.langid``), a word is source-language when lingua puts it in a span
    of the source language (signature ``langid:lingua-VERSION``); otherwise the value is null.
    Where the rules apply they stay: on clean translations they flag far less (docs/language-id.md).
    A card is rescored with the backend its signature names (none: the rules), so old cards verify.
    """

    id = "code_switching_rate"
    higher_is_better = False
    cost = 0.3
    shares_analyses = True
    lingua = False  # set by ``prepare``: this run's pair is scored by lingua

    @staticmethod
    def rules_apply(target: LanguageCard, source: LanguageCard) -> bool:
        """The pair's cards declare what the rules need (different scripts, or a target analyser and a source
        word list). Declared, not installed: a run that skips the analyser or lacks the word list stays null
        (with its install hint) instead of switching method, so one language pair is always measured one way."""
        if not set(source.scripts) & set(target.scripts):
            return True
        return bool((target.analyser or target.analyser_skipped) and source.source_wordlist)

    @classmethod
    def needs_detector(cls, target: LanguageCard, source: LanguageCard) -> bool:
        """This pair is measured only by a language detector (the rules cannot tell its languages apart)."""
        return bool(source.scripts) and not cls.rules_apply(target, source)

    @classmethod
    def unavailable(cls, target: LanguageCard, source: LanguageCard) -> str | None:
        """Why this install scores the pair null where another would not (the card's warning), else None: the
        detector is missing or does not know a language. One number per install (issue 22): the card says it."""
        if not cls.needs_detector(target, source) or langid.supports(source.code, target.code):
            return None
        return langid.missing_warning(cls.id, source.code, target.code)

    def prepare(self, ctx: MetricContext) -> None:
        self.bind(ctx.target)
        recorded = ctx.recorded_signature(self.id)
        if recorded == CURRENT:
            self.lingua = (self.needs_detector(ctx.target, ctx.source)
                           and langid.supports(ctx.source.code, ctx.target.code))
        else:
            self.lingua = bool(recorded and recorded.startswith("langid:lingua"))
            if self.lingua:
                langid.require()  # rescoring a lingua-scored card needs lingua: one line, never the rules' null

    def signature(self, target: LanguageCard) -> str | None:
        return langid.signature() if self.lingua else None

    @staticmethod
    def _lingua_count(text: str, words: Sequence[Word], ctx: MetricContext) -> int:
        """Words of ``text`` inside spans lingua assigns to the source language, names, acronyms and single
        letters excepted as in the rules (decisions §15)."""
        source, target = ctx.source, ctx.target
        in_spans = Counter(w.text for a, b, code in langid.spans(text, (source.code, target.code))
                           if code == source.code for w in ctx.cache.words(text[a:b], target))
        count = 0
        for w in words:
            if in_spans[w.text] > 0 and _common_word(w.text, w.sentence_initial):
                in_spans[w.text] -= 1
                count += 1
        return count

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        target, source = ctx.target, ctx.source
        if not source.scripts:  # an undetermined source language (``score`` without a source): null
            return np.zeros((len(hypotheses), 2))
        tokenised = [ctx.cache.words(h, target) for h in hypotheses]
        if self.lingua:
            rows = [(float(self._lingua_count(h, ws, ctx)), float(len(ws))) for h, ws in zip(hypotheses, tokenised,
                                                                                            strict=True)]
            return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)
        if not set(source.scripts) & set(target.scripts):
            source_only, target_scripts = set(source.scripts) - set(target.scripts), set(target.scripts)

            def switched(w: Word) -> bool:
                scripts = word_scripts(w.text)
                return bool(scripts & source_only) and not scripts & target_scripts
        else:
            analyser = analyser_for(target)
            if analyser is None or not source.source_wordlist or not Path(source.source_wordlist).is_file():
                return np.zeros((len(hypotheses), 2))
            wordlist = load_wordlist(source.source_wordlist)
            # only common source-language words can be switched: analyse those (and their retries) in two batches
            candidates = {w for ws in tokenised for w in ws if _common_word(w.text, w.sentence_initial) in wordlist}
            analyser.analyse_many(w.text for w in candidates)
            analyser.analyse_many(w.text[:1].lower() + w.text[1:] for w in candidates
                                  if w.sentence_initial and w.text[:1].isupper())

            def switched(w: Word) -> bool:
                return w in candidates and not analyser.accepts(w.text, w.sentence_initial)
        verdicts: dict[Word, bool] = {}  # per distinct (word, sentence-initial)
        rows = []
        for ws in tokenised:
            count = 0
            for w in ws:
                found = verdicts.get(w)
                if found is None:
                    found = verdicts[w] = switched(w)
                count += found
            rows.append((float(count), float(len(ws))))
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)


# --- terminology ------------------------------------------------------------------------------


def load_terminology(path: str | Path) -> dict[str, tuple[str, ...]]:
    """``{"source term": ["target", ...]}`` JSON, or TSV lines ``source<TAB>t1|t2``."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError("terminology file not found", file=str(p)) from None
    terms: dict[str, tuple[str, ...]] = {}
    if p.suffix == ".json":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise UserError("a terminology file maps source terms to lists of target terms", file=str(p))
        for src, tgt in data.items():
            targets = [tgt] if isinstance(tgt, str) else tgt
            if not isinstance(targets, list) or not targets or not all(isinstance(t, str) and t for t in targets):
                raise UserError("needs a non-empty list of target terms", file=str(p), field=src)
            terms[src] = tuple(targets)
        return terms
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        src, sep, tgt = line.partition("\t")
        targets = tuple(t.strip() for t in tgt.split("|") if t.strip())
        if not sep or not src.strip() or not targets:
            raise UserError(f"line {n}: expected 'source<TAB>target1|target2'", file=str(p))
        terms[src.strip()] = targets
    return terms


def _contains(text: str, term: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(term.casefold())}(?!\w)", text.casefold()) is not None


def term_renderings(source: str, output: str, terms: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """For each term in the source: index of the first accepted target term in the output, or -1."""
    found = {}
    for src, targets in terms.items():
        if _contains(source, src):
            found[src] = next((i for i, t in enumerate(targets) if _contains(output, t)), -1)
    return found


class TerminologyAdherence(RateMetric):
    """Source-term occurrences rendered with an accepted target term / occurrences."""

    id = "terminology_adherence"
    reads_source = True  # source terms are looked up in the source text

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        if not ctx.terminology:
            return 0.0, 0.0
        found = term_renderings(ctx.entries[index].source, hypothesis, ctx.terminology)
        return float(sum(1 for i in found.values() if i >= 0)), float(len(found))


class Consistency(MetricBase):
    """Corpus-level: for terms seen in ≥ 2 entries, the share rendered the term's most frequent way.

    Statistics are one count per (term, rendering) — accepted target terms plus "other" — so the
    value of any subset or resample is exact: Σ_terms max_r count / Σ_terms count. Two trailing
    columns, 1 and the grid's width per entry, let ``aggregate`` recover the grid's shape from the
    sums alone (width = Σ width / Σ 1), so no state passes from ``statistics`` to ``aggregate`` and
    statistics extracted in another process aggregate the same.
    """

    id = "consistency_score"
    reads_source = True  # source terms are looked up in the source text
    level = Level.CORPUS
    cost = 0.05

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        terms = dict(ctx.terminology or {})
        width = 1 + max((len(t) for t in terms.values()), default=0)
        grid = np.zeros((len(hypotheses), max(1, len(terms)), width))
        # columns in sorted term order, not the glossary's: a card stores its terminology with sorted keys, so a
        # file's own order would lay the sidecar out differently from a rebuild from the card (verify failed)
        column = {src: t for t, src in enumerate(sorted(terms))}
        for n, hyp in enumerate(hypotheses):
            for src, idx in term_renderings(ctx.entries[n].source, hyp, terms).items():
                grid[n, column[src], idx if idx >= 0 else width - 1] += 1
        shape = np.tile([1.0, float(width)], (len(hypotheses), 1))
        return np.concatenate([grid.reshape(len(hypotheses), -1), shape], axis=1)

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        entries, widths = sums[..., -2], sums[..., -1]
        if not np.any(entries > 0):  # no entries summed: nothing to be consistent about
            return np.full(sums.shape[:-1], np.nan)
        width = round(float(widths.max() / entries.max()))  # the same for every sum of one run
        grid = sums[..., :-2].reshape(*sums.shape[:-1], -1, width)
        totals = grid.sum(axis=-1)
        repeated = totals >= 2
        num = np.where(repeated, grid.max(axis=-1), 0).sum(axis=-1)
        den = np.where(repeated, totals, 0).sum(axis=-1)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return None

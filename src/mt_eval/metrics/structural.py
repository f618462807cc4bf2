"""Structural metrics (Scoring Spec §2.2): FST acceptance, morphological and orthographic accuracy.

All three are word-level rates, so their statistics are (numerator, denominator) per entry and
CIs and paired tests work unchanged. FST acceptance counts words (docs/decisions.md §16): the corpus
value is accepted / analysed words; punctuation and numbers are not words; a sentence-initial
capital is retried in lower case.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from mt_eval.analyzers.registry import analyser_for
from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import Word, script_of
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.cache import RunCache
from mt_eval.metrics.rates import RateMetric, RatioMetric


def _retry_form(word: Word) -> str | None:
    """The lower-cased form a rejected sentence-initial capital is retried as (docs/decisions.md §16)."""
    return word.text[:1].lower() + word.text[1:] if word.sentence_initial and word.text[:1].isupper() else None


def analysed_words(
    hypotheses: Sequence[str], card: LanguageCard, cache: RunCache
) -> list[tuple[list[Word], list[tuple[str, ...]]]]:
    """Each hypothesis's words and each word's analyses (the lower-cased form's for a rejected
    sentence-initial capital), memoised per run and text; [] analyses where the card has no analyser.

    Every word not yet known goes to the analyser in one batch, then every retry form in a second,
    so a run costs two analyser round trips however many entries it has. FST acceptance, morphology
    and the run card's per-entry ``fst_analysis`` all read this one answer.
    """
    memo: dict[tuple[str | None, str], tuple[list[Word], list[tuple[str, ...]]]] = cache.table("analysed_words")
    todo = [h for h in dict.fromkeys(hypotheses) if (card.analyser, h) not in memo]
    analyser = analyser_for(card) if todo else None
    if analyser is not None:
        tokenised = {h: cache.words(h, card) for h in todo}
        table = analyser.analyse_many(w.text for ws in tokenised.values() for w in ws)
        retries = analyser.analyse_many(
            form for ws in tokenised.values() for w in ws if not table[w.text] and (form := _retry_form(w)))
        for h, ws in tokenised.items():
            analyses = []
            for w in ws:
                found = table[w.text]
                if not found and (form := _retry_form(w)) is not None:
                    found = retries[form]
                analyses.append(found)
            memo[card.analyser, h] = (ws, analyses)
    else:
        for h in todo:
            memo[card.analyser, h] = (cache.words(h, card), [])
    return [memo[card.analyser, h] for h in hypotheses]


def fst_details_many(
    hypotheses: Sequence[str], card: LanguageCard, cache: RunCache | None = None
) -> list[tuple[bool | None, list[str]]]:
    """Per-entry ``fst_accepted`` (every word accepted; None without an analyser or words) and
    ``fst_analysis`` in Apertium stream style: ``word/analysis1/analysis2`` or ``*word``.

    Pass the run's ``cache`` (the ``MetricContext``'s) to reuse what the metrics already analysed.
    """
    if not card.analyser:
        return [(None, []) for _ in hypotheses]
    out: list[tuple[bool | None, list[str]]] = []
    for ws, analyses in analysed_words(hypotheses, card, cache if cache is not None else RunCache()):
        if not ws:
            out.append((None, []))
            continue
        lines = [("/".join((w.text, *a)) if a else f"*{w.text}") for w, a in zip(ws, analyses, strict=True)]
        out.append((all(analyses), lines))
    return out


class FstAcceptance(RatioMetric):
    """Accepted words / analysed words; per entry the same ratio over that entry's words."""

    id = "fst_acceptance_rate"
    cost = 0.4  # tokenising the run and analysing its vocabulary (two lt-proc batches): 0.10 of chrF++ (§86)
    shares_analyses = True

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.analyser)

    def signature(self, target: LanguageCard) -> str | None:
        return target.analyser

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        rows = [(float(sum(1 for a in analyses if a)), float(len(ws)))
                for ws, analyses in analysed_words(hypotheses, ctx.target, ctx.cache)]
        return np.asarray(rows, dtype=np.float64).reshape(len(hypotheses), 2)


# --- morphological accuracy -------------------------------------------------------------------

_TAG = re.compile(r"<([^<>]+)>|\+([^+\s]+)")
# Gold glosses (Leipzig style) → analyser tags that express them; "a+b" needs both tags.
FEATURE_ALIASES: dict[str, tuple[str, ...]] = {
    "1sg": ("p1+sg", "px1sg", "1sg"), "2sg": ("p2+sg", "px2sg", "2sg"), "3sg": ("p3+sg", "3sg"),
    "1pl": ("p1+pl", "1pl"), "2pl": ("p2+pl", "2pl"), "3pl": ("p3+pl", "3pl"),
    "sg": ("sg",), "pl": ("pl",), "an": ("an", "anim"), "in": ("in", "inan"), "dir": ("dir",),
    "inv": ("inv",), "ta": ("ta", "vta"), "ti": ("ti", "vti"), "ai": ("ai", "vai"), "ii": ("ii", "vii"),
    "m": ("m",), "f": ("f",), "past": ("past", "pret", "pii", "ifi"), "pres": ("pres", "pri", "prs"),
    "fut": ("fut", "fti"), "inf": ("inf",), "n": ("n",), "v": ("v", "vblex", "vbser", "vbhaver"),
}


def gold_features(analysis: str) -> list[set[str]]:
    """Feature labels per gold word from ``forms | glosses`` (Benchmark Spec §2.2).

    A gloss part counts as a feature when it has a digit or an upper-case letter (``1sg``,
    ``TA``, ``DIR``, ``AN``); lower-case parts are lexical glosses (``see``, ``dog``) and are not
    compared, since analysers give target-language lemmas, not English glosses.
    """
    glosses = analysis.split("|", 1)[1] if "|" in analysis else analysis
    out = []
    for gold_word in glosses.split():
        parts = re.split(r"[-.=]", gold_word)
        feats = {p.lower() for p in parts if p and (any(c.isdigit() for c in p) or any(c.isupper() for c in p))}
        if feats:
            out.append(feats)
    return out


def analysis_tags(analysis: str) -> set[str]:
    return {(a or b).lower() for a, b in _TAG.findall(analysis)}


def feature_present(feature: str, tags: set[str]) -> bool:
    return any(all(t in tags for t in alias.split("+")) for alias in FEATURE_ALIASES.get(feature, (feature,)))


class MorphologicalAccuracy(RateMetric):
    """Matched gold features / gold features; each gold word is matched to the output word (and
    analysis) that satisfies most of its features, each output word used at most once. Null for
    entries without ``morphological_analysis`` and for targets without an analyser."""

    id = "morphological_accuracy"
    shares_analyses = True

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.analyser)

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        gold = ctx.entries[index].morphological_analysis
        if not gold or not ctx.target.analyser:
            return 0.0, 0.0
        features = gold_features(gold)
        ((_, analyses),) = analysed_words([hypothesis], ctx.target, ctx.cache)
        candidates = [[analysis_tags(a) for a in an] for an in analyses]
        used: set[int] = set()
        matched = 0
        for feats in features:
            best, best_j = 0, -1
            for j, tag_sets in enumerate(candidates):
                if j in used:
                    continue
                score = max((sum(feature_present(f, tags) for f in feats) for tags in tag_sets), default=0)
                if score > best:
                    best, best_j = score, j
            if best_j >= 0:
                used.add(best_j)
                matched += best
        return float(matched), float(sum(len(f) for f in features))


# --- orthographic accuracy --------------------------------------------------------------------


def orthography_errors(word: str, card: LanguageCard) -> list[str]:
    """Why a raw word breaks the card's rules (empty when it conforms)."""
    rules = card.rules
    problems = []
    form = rules.get("normalization", "NFC")
    if unicodedata.normalize(form, word) != word:
        problems.append(f"not {form}")
    text = unicodedata.normalize("NFC", word).lower()
    letters = rules.get("letters")
    if letters:
        bad = [ch for ch in text if unicodedata.category(ch)[0] == "L" and ch not in letters]
        if bad:
            problems.append(f"letters outside the orthography: {''.join(bad)}")
    scripts = rules.get("scripts")
    if scripts and any(unicodedata.category(ch)[0] == "L" and script_of(ch) not in scripts for ch in text):
        problems.append(f"letters outside scripts {list(scripts)}")
    for mark in rules.get("forbidden", ()):
        if mark in text:
            problems.append(f"forbidden '{mark}'")
    # required marks: words whose marked spelling is known ({"tanisi": "tânisi"}); the bare form
    # (marks stripped) must not appear without them
    required = dict(rules.get("required", {}) or {})
    if required:
        bare = "".join(ch for ch in unicodedata.normalize("NFD", text) if unicodedata.category(ch) != "Mn")
        marked = required.get(bare)
        if marked is not None and text != unicodedata.normalize("NFC", marked) and not _variant_of(text, marked, rules):
            problems.append(f"missing marks: '{marked}'")
    return problems


def _variant_of(text: str, marked: str, rules: dict[str, Any]) -> bool:
    """True when ``text`` is ``marked`` spelled with accepted variant marks (SRO macrons for circumflexes)."""
    variants = dict(rules.get("variants") or ())
    return "".join(variants.get(ch, ch) for ch in text) == unicodedata.normalize("NFC", marked)


class OrthographicAccuracy(RateMetric):
    """Words that follow the card's orthography rules / words; null without rules."""

    id = "orthographic_accuracy"
    cost = 0.4

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.orthography)

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        ws = ctx.cache.words(hypothesis, ctx.target, normalize=False)
        conforms: dict[str, bool] = ctx.cache.table(f"orthography_conforms:{ctx.target.code}")
        good = 0
        for w in ws:
            ok = conforms.get(w.text)
            if ok is None:
                ok = conforms[w.text] = not orthography_errors(w.text, ctx.target)
            good += ok
        return float(good), float(len(ws))

"""Structural metrics (Scoring Spec §2.2): FST acceptance, morphological and orthographic accuracy.

All three are word-level rates, so their statistics are (numerator, denominator) per entry and
CIs and paired tests work unchanged. FST acceptance counts words (DESIGN decision 2): the corpus
value is accepted / analysed words; punctuation and numbers are not words; a sentence-initial
capital is retried in lower case.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

from mt_eval.analyzers.base import Analyser, analyser_for
from mt_eval.languages.card import LanguageCard
from mt_eval.languages.words import Word, script_of, words
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.rates import RateMetric, RatioMetric


def _word_analyses(analyser: Analyser, ws: Sequence[Word]) -> list[tuple[str, ...]]:
    """Each word's analyses, using the lower-cased form for a rejected sentence-initial capital."""
    table = analyser.analyse_many(w.text for w in ws)
    out = []
    for w in ws:
        found = table[w.text]
        if not found and w.sentence_initial and w.text[:1].isupper():
            found = analyser.analyse(w.text[:1].lower() + w.text[1:])
        out.append(found)
    return out


def fst_details(hypothesis: str, card: LanguageCard) -> tuple[bool | None, list[str]]:
    """Per-entry ``fst_accepted`` (every word accepted; None without an analyser or words) and
    ``fst_analysis`` in Apertium stream style: ``word/analysis1/analysis2`` or ``*word``."""
    analyser = analyser_for(card)
    ws = words(hypothesis, card)
    if analyser is None or not ws:
        return None, []
    analyses = _word_analyses(analyser, ws)
    lines = [("/".join((w.text, *a)) if a else f"*{w.text}") for w, a in zip(ws, analyses, strict=True)]
    return all(analyses), lines


class FstAcceptance(RatioMetric):
    """Accepted words / analysed words; per entry the same ratio over that entry's words."""

    id = "fst_acceptance_rate"

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.analyser)

    def signature(self, target: LanguageCard) -> str | None:
        return target.analyser

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        analyser = analyser_for(ctx.target)
        assert analyser is not None
        tokenised = [words(h, ctx.target) for h in hypotheses]
        analyser.analyse_many(w.text for ws in tokenised for w in ws)  # one pass over the whole run
        rows = []
        for ws in tokenised:
            analyses = _word_analyses(analyser, ws)
            rows.append((float(sum(1 for a in analyses if a)), float(len(ws))))
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

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.analyser)

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        gold = ctx.entries[index].morphological_analysis
        analyser = analyser_for(ctx.target)
        if not gold or analyser is None:
            return 0.0, 0.0
        features = gold_features(gold)
        ws = words(hypothesis, ctx.target)
        candidates = [[analysis_tags(a) for a in an] for an in _word_analyses(analyser, ws)]
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

    def applies_to(self, target: LanguageCard) -> bool:
        return bool(target.orthography)

    def pair(self, hypothesis: str, ctx: MetricContext, index: int) -> tuple[float, float]:
        ws = words(hypothesis, ctx.target, normalize=False)
        good = sum(1 for w in ws if not orthography_errors(w.text, ctx.target))
        return float(good), float(len(ws))

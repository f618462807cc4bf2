"""Variant-class rules and the per-entry match verdict (Scoring Spec §2.1 equivalent_match_rate, Appendix B).

An entry's ``variant_class`` names which kinds of variation make an output an acceptable variant of its
reference: one or more of the rule names below, joined by ``+`` or ``,`` (``word_order+optional_particle``).
The six are Appendix B's list for the CRK linter (word order, orthographic, optional particle, lemma synonym,
progressive ambiguity, inclusive/exclusive). A name outside it is refused with one line (``validate``, and
any scoring that reads the class), never silently ignored: an ignored class would turn accepted variants
into misses without a word.

Each output gets one verdict (Appendix B's lint_verdict): EXACT (equal to a reference after the exact-match
normalisation, NFC and whitespace), EQUIVALENT (equal to a reference or listed variant under the entry's
rules), MISS, or NO_OUTPUT (nothing produced). ``exact_match_rate`` counts EXACT; ``equivalent_match_rate``
counts EXACT and EQUIVALENT (docs/decisions.md §77).

What each rule accepts, beyond the entry's own ``variants[]`` (always accepted, under every class):

- orthographic: the language card's orthographic variants folded (SRO ā → â), case and punctuation
  ignored. Applied to every entry, classed or not: it is what equivalent match always meant.
- word_order: the same words in any order (as a multiset: a word dropped or doubled is still a miss).
- optional_particle: the words by which a listed variant differs from the reference by pure insertion
  (reference "niwâpamâw atim", variant "niwâpamâw atim ôma": "ôma") may be present or absent anywhere.
  Derived from the entry's own variants, so no particle list outside the corpus decides.
- lemma_synonym: word by word, a different form of the same lemma under the target language's analyser
  (lemma = an analysis up to its first tag). Without an analyser the rule accepts only the listed variants.
- progressive_ambiguity, inclusive_exclusive: the source is ambiguous (English progressive vs simple
  aspect; English "we" inclusive or exclusive) and the target forms for each reading are different words
  that no rule can derive without a generator: the entry must list them in ``variants[]``; the class
  records why they are accepted.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence
from enum import StrEnum

from mt_eval.analyzers.base import Analyser
from mt_eval.corpus.models import Entry
from mt_eval.corpus.variant_class import LEMMA_SYNONYM, OPTIONAL_PARTICLE, WORD_ORDER, parse_variant_class
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.rates import normalize_text

# equivalent_match_rate's definition since variant classes (match:2 cards keep theirs, see behavioral.EquivalentMatch)
VARIANT_CLASS_SIGNATURE = "match:3|weight:reference-words|variant-class:1"


class Verdict(StrEnum):
    EXACT = "EXACT"
    EQUIVALENT = "EQUIVALENT"
    MISS = "MISS"
    NO_OUTPUT = "NO_OUTPUT"


def loose_form(text: str, card: LanguageCard) -> str:
    """NFC, the card's orthographic variants folded (SRO ā → â), case and punctuation ignored."""
    text = unicodedata.normalize("NFC", text)
    for variant, canonical in card.rules.get("variants", ()):
        text = text.replace(variant, canonical)
    text = "".join(ch if unicodedata.category(ch)[0] not in "PS" else " " for ch in text.casefold())
    return " ".join(text.split())


def _loose_words(text: str, card: LanguageCard) -> list[str]:
    return loose_form(text, card).split()


def _optional_words(reference: list[str], variants: Sequence[list[str]]) -> Counter[str]:
    """Words a variant adds to the reference (or the reference to a variant) with the rest unchanged."""
    optional: Counter[str] = Counter()
    ref = Counter(reference)
    for v in variants:
        other = Counter(v)
        longer, shorter = (other, ref) if len(v) > len(reference) else (ref, other)
        if not shorter - longer:  # a pure insertion
            optional |= longer - shorter
    return optional


def _lemmas(word: str, analyser: Analyser) -> frozenset[str]:
    return frozenset(a.split("+", 1)[0].split("<", 1)[0].casefold() for a in analyser.analyse(word))


def _same_lemmas(out: list[str], form: list[str], analyser: Analyser | None) -> bool:
    if analyser is None or len(out) != len(form):
        return False
    return all(a == b or bool(_lemmas(a, analyser) & _lemmas(b, analyser)) for a, b in zip(out, form, strict=True))


def entry_verdict(hypothesis: str, entry: Entry, card: LanguageCard, analyser: Analyser | None = None,
                  *, classes: bool = True) -> Verdict:
    """This output's verdict for ``entry``; ``classes=False`` applies only the orthographic comparison
    with the references and variants (equivalent match before variant classes, signature match:2)."""
    if not hypothesis.strip():
        return Verdict.NO_OUTPUT
    hyp = normalize_text(hypothesis)
    if any(hyp == normalize_text(ref) for ref in entry.all_references):
        return Verdict.EXACT
    out = _loose_words(hypothesis, card)
    forms = [_loose_words(t, card) for t in (*entry.all_references, *entry.variants)]
    if out in forms:
        return Verdict.EQUIVALENT
    rules = parse_variant_class(entry.variant_class, entry.id) if classes else frozenset()
    if not rules:
        return Verdict.MISS
    optional: Counter[str] = Counter()
    if OPTIONAL_PARTICLE in rules:
        optional = _optional_words(forms[0], forms[len(entry.all_references):])
    for form in forms:
        a, b = out, form
        if optional:  # every optional word dropped from both sides (count-limited, so no other word goes)
            a, b = _without(a, optional), _without(b, optional)
        if a == b or (WORD_ORDER in rules and Counter(a) == Counter(b)) \
                or (LEMMA_SYNONYM in rules and _same_lemmas(a, b, analyser)):
            return Verdict.EQUIVALENT
    return Verdict.MISS


def _without(words: list[str], optional: Counter[str]) -> list[str]:
    left = Counter(optional)
    kept = []
    for w in words:
        if left[w] > 0:
            left[w] -= 1
        else:
            kept.append(w)
    return kept


def entry_verdicts(hypotheses: Sequence[str], entries: Sequence[Entry], card: LanguageCard) -> list[str]:
    """Every entry's verdict, as the card's ``results[].match_verdict`` (the target analyser is started only
    when an entry's class needs lemmas)."""
    from mt_eval.analyzers.registry import analyser_for  # the registry's tools are needed only for lemmas

    needs = any(LEMMA_SYNONYM in parse_variant_class(e.variant_class, e.id) for e in entries)
    analyser = analyser_for(card) if needs else None
    return [entry_verdict(h, e, card, analyser).value for h, e in zip(hypotheses, entries, strict=True)]


def verdict_counts(results: Sequence[object]) -> dict[str, int]:
    """Entries per verdict on a card's results (empty for a card written before verdicts)."""
    counts = Counter(str(r["match_verdict"]) for r in results if isinstance(r, dict) and r.get("match_verdict"))
    return {v.value: counts.get(v.value, 0) for v in Verdict} if counts else {}

"""Behavioural and compliance metrics on hand-built cases whose answers are computed by hand."""

from __future__ import annotations

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.behavioral import CodeSwitching, Consistency, EquivalentMatch, TerminologyAdherence
from mt_eval.metrics.compliance import ComplianceIndex, ComplianceIndexRepaired, RepairEffectiveness, check
from mt_eval.metrics.structural import OrthographicAccuracy


def _ctx(sources: list[str], target: str = "es", source: str = "en", **kw: object) -> MetricContext:
    entries = [Entry(id=i + 1, source=s, reference="x", **kw) for i, s in enumerate(sources)]  # type: ignore[arg-type]
    return MetricContext(entries, language_card(target), language_card(source))


def _value(metric, hyps, ctx):  # type: ignore[no-untyped-def]
    return float(metric.aggregate(metric.statistics(hyps, ctx).sum(axis=0)))


def test_english_clause_in_spanish_output() -> None:
    # 11 words; "but the dog is outside" are English and rejected by the Spanish analyser
    ctx = _ctx(["The cat sleeps in the house, but the dog is outside."])
    assert _value(CodeSwitching(), ["El gato duerme en la casa, but the dog is outside."], ctx) == 5 / 11


def test_code_switching_by_script_for_japanese() -> None:
    ctx = _ctx(["x"], target="ja")
    stats = CodeSwitching().statistics(["猫 cat"], ctx)
    assert stats.tolist() == [[1.0, 2.0]]


def test_dropped_placeholder_and_wrong_quotes() -> None:
    es = language_card("es")
    c = check("Hola, ¿cómo estás?", "Hello {name}, how are you?", es)
    assert c.placeholders == 0 and c.index == 0.4 and c.violations == 1
    c = check("Dijo „hola“ a {name}", "He said \"hi\" to {name}", es)  # „ is German, not Spanish
    assert c.quotes == 0.5 and round(c.index, 6) == 0.9
    ctx = _ctx(["Hello {name}"])
    assert _value(ComplianceIndex(), ["Hola"], ctx) == 0.4
    assert _value(ComplianceIndexRepaired(), ["Hola"], ctx) == 1.0
    assert _value(RepairEffectiveness(), ["Hola"], ctx) == 1.0


def test_latin_leakage_in_caseless_target() -> None:
    c = check("猫 cat", "cat", language_card("ja"))
    assert c.casing == 0.5


def test_equivalent_match_uses_variants_and_sro_macrons() -> None:
    entries = [Entry(id=1, source="I see the dog", reference="niwâpamâw atim", variants=["atim niwâpamâw"])]
    ctx = MetricContext(entries, language_card("crk"), language_card("en"))
    assert _value(EquivalentMatch(), ["Atim niwāpamāw."], ctx) == 1.0
    no_variants = MetricContext([Entry(id=1, source="a", reference="b")], language_card("es"), language_card("en"))
    assert EquivalentMatch().statistics(["b"], no_variants).sum() == 0  # null without variants


def test_orthography_sro() -> None:
    ctx = MetricContext([Entry(id=1, source="s", reference="r")], language_card("crk"), language_card("en"))
    # "niwapamew": bare e is not SRO; "atim" fine; "dog": d and g are not SRO letters -> 1/3
    assert _value(OrthographicAccuracy(), ["niwapamew atim dog"], ctx) == 1 / 3


def test_terminology_and_consistency() -> None:
    terms = {"river": ("río",), "bank": ("banco", "orilla")}
    entries = [Entry(id=i, source=s, reference="r") for i, s in
               enumerate(["the river bank", "a bank", "the bank", "no terms"], 1)]
    ctx = MetricContext(entries, language_card("es"), language_card("en"), terminology=terms)
    hyps = ["la orilla del río", "un banco", "el banco", "nada"]
    # occurrences: river 1 (hit), bank 3 (orilla, banco, banco) -> 4/4
    assert _value(TerminologyAdherence(), hyps, ctx) == 1.0
    # bank rendered banco twice of 3; river seen once (not repeated) -> 2/3
    assert abs(_value(Consistency(), hyps, ctx) - 2 / 3) < 1e-12
    # aggregate is a function of the summed statistics alone: a fresh instance (as in the parent of
    # a forked extraction) gives the same value, for one sum and for a batch of subset sums
    stats = Consistency().statistics(hyps, ctx)
    assert abs(float(Consistency().aggregate(stats.sum(axis=0))) - 2 / 3) < 1e-12
    batch = np.stack([stats.sum(axis=0), stats[1:3].sum(axis=0), stats[3:].sum(axis=0)])
    got = Consistency().aggregate(batch)
    assert got[0] == 2 / 3 and got[1] == 1.0 and np.isnan(got[2])  # banco twice; nothing repeated
    assert np.isnan(Consistency().aggregate(np.zeros_like(stats[:0].sum(axis=0))))
    none = MetricContext(entries, language_card("es"), language_card("en"))
    assert TerminologyAdherence().statistics(hyps, none).sum() == 0


def test_orthography_required_marks_sro() -> None:
    """Known words must carry their long-vowel marks; macrons are accepted variants of circumflexes."""
    ctx = MetricContext([Entry(id=1, source="s", reference="r")], language_card("crk"), language_card("en"))
    assert _value(OrthographicAccuracy(), ["tânisi niwâpamâw"], ctx) == 1.0
    assert _value(OrthographicAccuracy(), ["tānisi niwāpamāw"], ctx) == 1.0  # macron variants
    assert _value(OrthographicAccuracy(), ["tanisi niwâpamâw"], ctx) == 1 / 2  # tanisi lacks its mark

"""Variant-class rules and EXACT / EQUIVALENT / MISS / NO_OUTPUT verdicts (Scoring Spec §2.1 equivalent_match_rate,
Appendix B's CrkLinterMetric; issue 22 item 9; docs/decisions.md §77).

The CRK entries are Benchmark Spec §2.2's example entry ("I see the dog" → "niwâpamâw atim") and the CRK card's
SRO words, each given one of App. B's classes (data/crk-variant-classes.json). The saved card beside it was
sealed by the code before verdicts (equivalent match signature match:2): it must keep verifying.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.analyzers.registry import analyser_for
from mt_eval.cli import app
from mt_eval.corpus import load_corpus
from mt_eval.corpus.models import Dataset, Entry
from mt_eval.corpus.variant_class import RULES, parse_variant_class
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.rates import MATCH_SIGNATURE
from mt_eval.metrics.variant_class import VARIANT_CLASS_SIGNATURE, Verdict, entry_verdict, entry_verdicts
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.scores import MetricTable

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "crk-variant-classes.json"
OLD_CARD = DATA / "crk-variant-classes.match2-card.json"  # sealed by the match:2 code (commit 8b034f0)
OUTPUTS = ["atim niwâpamâw", "tânisi", "kinanāskomitin", "nehiyawewin", "nimîcison mêkwâc", "kiwâpamânaw atim"]
CRK = language_card("crk")


def _spec_entry(variant_class: str | None, variants: tuple[str, ...] = ("niwâpamâw atim ôma",)) -> Entry:
    """Benchmark Spec §2.2's example entry, with an optional particle listed as the variant."""
    return Entry(id=42, source="I see the dog", reference="niwâpamâw atim", variant_class=variant_class,
                 variants=list(variants))


@pytest.mark.parametrize(("output", "variant_class", "verdict"), [
    ("niwâpamâw atim", None, Verdict.EXACT),
    ("niwâpamâw   atim ", None, Verdict.EXACT),  # the exact-match normalisation: whitespace collapsed
    ("Niwāpamāw atim.", None, Verdict.EQUIVALENT),  # orthographic: SRO macrons, case, punctuation (every entry)
    ("niwâpamâw atim ôma", None, Verdict.EQUIVALENT),  # a listed variant
    ("atim niwâpamâw", "word_order", Verdict.EQUIVALENT),
    ("atim niwâpamâw", None, Verdict.MISS),  # word order is free only where the class says so
    ("atim niwâpamâw", "orthographic", Verdict.MISS),  # a variant of the wrong class
    ("atim niwâpamâw", "optional_particle", Verdict.MISS),
    ("ôma atim niwâpamâw", "word-order + optional-particle", Verdict.EQUIVALENT),
    ("ôma niwâpamâw atim", "optional_particle", Verdict.EQUIVALENT),
    ("niwâpamâw atim ôma ôma", "optional_particle", Verdict.MISS),  # the particle once, not any number of times
    ("niwâpamâw ôma", "optional_particle+word_order", Verdict.MISS),  # the noun dropped
    ("atim atim niwâpamâw", "word_order", Verdict.MISS),  # word salad: same words, one doubled
    ("niwâpamâw", "word_order", Verdict.MISS),
    ("ôma atim niwâpamâw", "progressive_ambiguity", Verdict.MISS),  # that class derives nothing: variants only
    ("", "word_order", Verdict.NO_OUTPUT),
    ("   ", None, Verdict.NO_OUTPUT),
])
def test_spec_example_verdicts(output: str, variant_class: str | None, verdict: Verdict) -> None:
    assert entry_verdict(output, _spec_entry(variant_class), CRK) is verdict


def test_every_class_of_appendix_b_is_named() -> None:
    # App. B: "word order, orthographic, optional particle, lemma synonym, progressive ambiguity, inclusive/exclusive"
    spec = "word order, orthographic, optional particle, lemma synonym, progressive ambiguity, inclusive/exclusive"
    assert {next(iter(parse_variant_class(name))) for name in spec.split(", ")} == set(RULES)


def test_ambiguity_classes_accept_the_listed_readings_only() -> None:
    we = Entry(id=47, source="We see the dog", reference="niwâpamânân atim", variant_class="inclusive_exclusive",
               variants=["kiwâpamânaw atim"])
    assert entry_verdict("kiwâpamânaw atim", we, CRK) is Verdict.EQUIVALENT
    assert entry_verdict("atim kiwâpamânaw", we, CRK) is Verdict.MISS  # not a word-order class
    assert entry_verdict("niwâpamâw atim", we, CRK) is Verdict.MISS  # "I see", not "we see"


def test_lemma_synonym_uses_the_target_analyser() -> None:
    es = language_card("es")
    analyser = analyser_for(es)
    if analyser is None:
        pytest.skip("Apertium eng-spa is not installed")
    entry = Entry(id=1, source="I saw the big dogs", reference="vi los perros grandes", variant_class="lemma_synonym")
    assert entry_verdict("vi el perro grande", entry, es, analyser) is Verdict.EQUIVALENT  # same lemmas, per word
    assert entry_verdict("vi los gatos grandes", entry, es, analyser) is Verdict.MISS  # another lemma
    assert entry_verdict("los perros grandes vi", entry, es, analyser) is Verdict.MISS  # order is not this class
    assert entry_verdict("vi el perro grande", entry, es, None) is Verdict.MISS  # no analyser: listed variants only
    word_order = entry.model_copy(update={"variant_class": "word_order"})
    assert entry_verdict("vi el perro grande", word_order, es, analyser) is Verdict.MISS  # the wrong class


def test_unknown_class_is_refused_at_validate_with_one_line(tmp_path: Path) -> None:
    doc = json.loads(CORPUS.read_text(encoding="utf-8"))
    doc["entries"][2]["variant_class"] = "simple-ta-direct"  # §2.2's grouping label names no rule
    path = tmp_path / "corpus.json"
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert "entry 44" in lines[0] and "variant_class" in lines[0] and "simple-ta-direct" in lines[0], result.output
    assert CliRunner().invoke(app, ["validate", str(CORPUS)]).exit_code == 0
    with pytest.raises(UserError):
        score_outputs(load_corpus(path), [Translation(i + 1, t) for i, t in enumerate(OUTPUTS)], CRK,
                      language_card("en"), only=["equivalent_match_rate"])


def _table(recorded: dict[str, str | None] | None = None) -> tuple[Dataset, MetricTable]:
    dataset = load_corpus(CORPUS)
    translations = [Translation(e.id, t) for e, t in zip(dataset.entries, OUTPUTS, strict=True)]
    table, _ = score_outputs(dataset, translations, CRK, language_card("en"),
                             only=["exact_match_rate", "equivalent_match_rate"], recorded=recorded)
    return dataset, table


def test_rates_are_the_verdicts_weighted_by_reference_words() -> None:
    dataset, table = _table()
    verdicts = entry_verdicts(OUTPUTS, dataset.entries, CRK)
    assert verdicts == ["EQUIVALENT", "EXACT", "EQUIVALENT", "MISS", "EQUIVALENT", "EQUIVALENT"]
    words = [len(e.reference.split()) for e in dataset.entries]  # CRK words are whitespace-separated
    hit = sum(w for w, v in zip(words, verdicts, strict=True) if v in ("EXACT", "EQUIVALENT"))
    exact = sum(w for w, v in zip(words, verdicts, strict=True) if v == "EXACT")
    values = table.values()
    assert values["equivalent_match_rate"] == pytest.approx(hit / sum(words)) == pytest.approx(7 / 8)
    assert values["exact_match_rate"] == pytest.approx(exact / sum(words)) == pytest.approx(1 / 8)
    assert table.metrics["equivalent_match_rate"].signature(CRK) == VARIANT_CLASS_SIGNATURE


def test_a_match2_card_is_rescored_with_its_own_rule() -> None:
    _, table = _table(recorded={"equivalent_match_rate": MATCH_SIGNATURE})
    assert table.values()["equivalent_match_rate"] == pytest.approx(5 / 8)  # the reordered entry is no match
    assert table.metrics["equivalent_match_rate"].signature(CRK) == MATCH_SIGNATURE


def test_a_card_sealed_before_verdicts_verifies() -> None:
    card = json.loads(OLD_CARD.read_text(encoding="utf-8"))
    assert card["metrics"]["equivalent_match_rate"]["signature"] == MATCH_SIGNATURE
    assert card["scores"]["equivalent_match_rate"] == pytest.approx(5 / 8)
    assert not any("match_verdict" in r for r in card["results"])
    assert verify_card(card) == []


def test_a_new_card_carries_verdicts_counted_by_show(tmp_path: Path) -> None:
    outputs, out = tmp_path / "outputs.txt", tmp_path / "card.json"
    outputs.write_text("\n".join(OUTPUTS) + "\n", encoding="utf-8")
    runner = CliRunner()
    made = runner.invoke(app, ["score", "-c", str(CORPUS), "-p", str(outputs), "--system", "sro-typist",
                               "--no-semantic", "-o", str(out)])
    assert made.exit_code == 0, made.output
    card = json.loads(out.read_text(encoding="utf-8"))
    assert [r["match_verdict"] for r in card["results"]] == entry_verdicts(OUTPUTS, load_corpus(CORPUS).entries, CRK)
    assert card["results"][0]["variant_class"] == "word_order+optional_particle"
    assert card["scores"]["equivalent_match_rate"] == pytest.approx(7 / 8)
    assert verify_card(card) == []
    shown = runner.invoke(app, ["show", str(out)])
    assert "match verdicts: EXACT 1  EQUIVALENT 4  MISS 1  NO_OUTPUT 0" in shown.output
    forged = copy.deepcopy(card)  # a verdict edited after sealing
    forged["results"][3]["match_verdict"] = "EQUIVALENT"
    assert any(p.startswith("results[3].match_verdict") for p in verify_card(forged))
    dropped = copy.deepcopy(card)  # the class is read from the card: without it the reordered entry is a MISS
    del dropped["results"][0]["variant_class"]
    problems = verify_card(dropped)
    assert any(p.startswith("results[0].match_verdict") for p in problems)
    assert any(p.startswith("scores.equivalent_match_rate") for p in problems)

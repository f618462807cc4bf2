"""Sampling (deterministic, stratified, floors per tier, blind order) and control items built from
real language cards on real NTREX text."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from random import Random

import pytest

from data_paths import NTREX
from mt_eval.languages import language_card
from mt_eval.review.controls import build_controls, control_count, control_slots, swap_phrase, units
from mt_eval.review.sampling import Candidate, blind_order, entry_order, stratified_sample

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


@pytest.fixture(scope="module")
def candidates() -> list[Candidate]:
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    return [Candidate(int(e["id"]), int(e["difficulty"]), e.get("register")) for e in entries]


def test_sample_is_deterministic_for_a_seed(candidates: list[Candidate]) -> None:
    a = stratified_sample(candidates, 100, seed=5)
    assert a == stratified_sample(list(reversed(candidates)), 100, seed=5)  # input order does not matter
    assert a != stratified_sample(candidates, 100, seed=6)
    assert len(a) == len(set(a)) == 100


def test_sample_is_stratified_with_a_floor_per_tier(candidates: list[Candidate]) -> None:
    chosen = set(stratified_sample(candidates, 60, seed=1))
    by_tier = Counter(c.difficulty for c in candidates)
    got = Counter(c.difficulty for c in candidates if c.entry_id in chosen)
    for tier, available in by_tier.items():
        assert got[tier] >= min(10, available)  # tier 1 has 11 entries: it gets at least 10
    # beyond the floors, strata follow their share of the corpus: each (tier, register) within one
    # entry of floor + proportional share of the rest
    strata = Counter((c.difficulty, c.register) for c in candidates)
    picked = Counter((c.difficulty, c.register) for c in candidates if c.entry_id in chosen)
    assert sum(picked.values()) == 60 and set(picked) <= set(strata)
    formal, conversational = (sum(n for (_, r), n in picked.items() if r == reg)
                              for reg in ("formal", "conversational"))
    assert formal / 60 == pytest.approx(sum(n for (_, r), n in strata.items() if r == "formal") / 200, abs=0.06)
    assert conversational >= 5


def test_small_corpus_is_taken_whole(candidates: list[Candidate]) -> None:
    assert stratified_sample(candidates[:30], 100, seed=0) == sorted(c.entry_id for c in candidates[:30])


def test_blind_order_differs_between_entries_and_reviewers() -> None:
    orders = {tuple(blind_order(4, 9, "ana", e)) for e in range(40)}
    assert len(orders) > 10  # 24 permutations; 40 entries never share one order
    assert all(sorted(o) == [0, 1, 2, 3] for o in orders)
    assert [blind_order(4, 9, "ana", e) for e in range(20)] != [blind_order(4, 9, "ben", e) for e in range(20)]
    assert blind_order(4, 9, "ana", 3) == blind_order(4, 9, "ana", 3)
    assert entry_order(range(50), 9, "ana") != entry_order(range(50), 9, "ben")


def _lines(name: str, n: int = 60) -> dict[int, str]:
    lines = (NTREX / f"newstest2019-ref.{name}.txt").read_text(encoding="utf-8").splitlines()[:n]
    return {i + 1: line for i, line in enumerate(lines)}


def test_word_language_swaps_words() -> None:
    """Degraded controls are a card's own output with a phrase of the same card's output at another entry
    swapped in; known-good ones the reference, in a card's place."""
    card = language_card("es")
    assert card.word_rule == "whitespace"
    refs = _lines("spa")
    outputs = {(e, slot): " ".join(text.split()[: len(text.split()) - slot]) for e, text in refs.items()
               for slot in range(2)}  # two "systems": the reference, and the reference less its last word
    controls = build_controls(outputs, refs, card, count=9, seed=4, cards=2)
    bad = [c for c in controls if c.kind == "control_bad"]
    good = [c for c in controls if c.kind == "control_good"]
    assert len(bad) == 6 and len(good) == 3 and len({c.entry_id for c in controls}) == 9
    assert {c.slot for c in controls} == {0, 1}
    for c in bad:
        host = outputs[(c.entry_id, c.slot)]
        original, changed = host.split(), c.text.split()
        assert c.text != host and len(changed) == len(original)
        inserted = str(c.detail["inserted"]).split()
        k = len(inserted)
        donor = outputs[(int(str(c.detail["donor_entry"])), c.slot)].split()  # the same system's output
        assert k >= 2 and any(donor[i:i + k] == inserted for i in range(len(donor)))
        assert sum(a != b for a, b in zip(original, changed, strict=True)) <= k
        assert [ch for ch in c.text if ch.isspace()] == [ch for ch in host if ch.isspace()]
        assert c.detail["unit"] == "whitespace"
    assert all(c.text == refs[c.entry_id] for c in good)  # known-good: the human reference


def test_control_slots_spread_over_entries_then_cards() -> None:
    slots = control_slots(list(range(10)), 3, 14, seed=1)
    assert len(slots) == len(set(slots)) == 14
    assert len({e for e, _ in slots[:10]}) == 10  # every entry once before any entry twice
    assert {s for _, s in slots} == {0, 1, 2}
    assert control_slots(list(range(10)), 3, 14, seed=1) == slots != control_slots(list(range(10)), 3, 14, seed=2)


@pytest.mark.parametrize(("code", "file"), [("zh", "zho-CN"), ("ja", "jpn")])
def test_character_language_swaps_characters(code: str, file: str) -> None:
    card = language_card(code)
    assert card.word_rule == "character"
    refs = _lines(file)
    outputs = {(e, 0): text for e, text in refs.items()}
    bad = [c for c in build_controls(outputs, refs, card, count=6, seed=2) if c.kind == "control_bad"]
    assert len(bad) == 4
    for c in bad:
        host = units(refs[c.entry_id], card)
        assert c.detail["unit"] == "character" and len(c.text) == len(refs[c.entry_id])  # same length
        assert len(str(c.detail["inserted"])) == len(str(c.detail["replaced"])) >= 2
        # a word swap would have replaced the whole sentence (no spaces): here most characters stay
        assert sum(a == b for a, b in zip(host, units(c.text, card), strict=True)) >= len(host) // 2


def test_swap_needs_enough_text() -> None:
    card = language_card("es")
    assert swap_phrase("Hola", "una frase bastante larga aquí", card, Random(0)) is None
    assert swap_phrase("una frase bastante larga aquí", "dos", card, Random(0)) is None


def test_control_count_is_about_ten_percent() -> None:
    assert control_count(200) == 20 and control_count(1000) == 100
    assert control_count(20) == 6  # at least enough degraded controls to test a reviewer
    assert control_count(200, share=0) == 0

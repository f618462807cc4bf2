"""Batched answers are verified per entry id (docs/decisions.md §18); prompts keep references out."""

from __future__ import annotations

import json

from mt_eval.methods.base import TranslationRequest
from mt_eval.methods.batching import check_batch
from mt_eval.methods.prompts import batch_message, clean_single, single_message, system_prompt

SOURCES = {1: "One source.", 2: "Two, source", 3: "Three", 4: "Four here"}


def _answer(*pairs: tuple[object, object]) -> str:
    echo = {str(k): v for k, v in SOURCES.items()}
    return json.dumps({"translations": [{"id": i, "start": echo.get(str(i), ""), "translation": t}
                                        for i, t in pairs]})


def test_good_answer_accepted_in_any_order_and_inside_a_fence() -> None:
    content = "```json\n" + _answer((2, "dos"), (1, "uno")) + "\n```"
    check = check_batch(content, {1: SOURCES[1], 2: SOURCES[2]})
    assert check.accepted == {1: "uno", 2: "dos"} and check.rejected == {}


def test_missing_duplicated_invented_and_non_string_are_rejected() -> None:
    check = check_batch(_answer((1, "uno"), (1, "otra"), (3, 7), (99, "x"), ("4", "cuatro")), SOURCES)
    assert check.accepted == {4: "cuatro"}
    assert set(check.rejected) == {1, 2, 3}
    assert "2 answers" in check.rejected[1] and "missing" in check.rejected[2]


def test_unparsable_answer_rejects_everything() -> None:
    check = check_batch("Sure! 1. uno 2. dos", {1: "a", 2: "b"})
    assert check.accepted == {} and set(check.rejected) == {1, 2}
    assert "unparsable" in check.rejected[1]


def test_shifted_ids_are_caught_by_the_source_echo() -> None:
    # entry 3 answered under id 2 and entry 2 under id 1: every id appears once, two are wrong
    content = json.dumps({"translations": [
        {"id": 1, "start": "Two source", "translation": "dos"},
        {"id": 2, "start": "three", "translation": "tres"}]})
    check = check_batch(content, {1: "One source.", 2: "Two, source", 3: "Three"})
    assert check.accepted == {} and set(check.rejected) == {1, 2, 3}
    assert "mis-numbered" in check.rejected[1]


def test_prompts_carry_no_reference_and_register_hints() -> None:
    reqs = [TranslationRequest(5, "Hello", "en", "es", register="formal"), TranslationRequest(6, "Bye", "en", "es")]
    batch = batch_message(reqs)
    body = json.loads(batch[batch.index('{"entries"'):])
    assert body == {"entries": [{"id": 5, "source": "Hello", "register": "formal"}, {"id": 6, "source": "Bye"}]}
    assert single_message(reqs[0]).endswith("Text:\nHello") and "formal" in single_message(reqs[0])
    sp = system_prompt("From {source_name} to {target_name}.", "en", "es", "English", "Spanish", "GLOSSARY")
    assert sp.startswith("From English to Spanish.") and sp.endswith("GLOSSARY")
    assert clean_single('"Hola"') == "Hola" and clean_single("```\nHola\n```") == "Hola"

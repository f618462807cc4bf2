"""Critical-error flags (issue 22 item 2): each check on hand-made cases that must and must not be flagged,
then the adversarial classes built from the bundled NTREX eng→spa references (every number changed, a negation
inserted or removed, names swapped between sentences, an invented sentence appended, truncated) against the
references themselves, and the rates on a scored card: CIs, per-entry values, verify."""

from __future__ import annotations

import random
import re

import pytest

import mt_eval
from data_paths import NTREX
from mt_eval.languages.card import language_card
from mt_eval.metrics.critical import worst_entries
from mt_eval.metrics.critical_checks import Pair, check_entry, digit_numbers, normalise_number, sentences
from mt_eval.runcard.verify import verify_card
from support.perturb import bumped_numbers, flipped_negation

EN_ES = Pair(language_card("es"), language_card("en"), True)


@pytest.mark.parametrize(("raw", "value"), [
    ("1,000", "1000"), ("1.000", "1000"), ("1 000", "1000"), ("1,000,000", "1000000"), ("3,5", "3.5"),
    ("3.5", "3.5"), ("1.50", "1.5"), ("07", "7"), ("2019", "2019"), ("1.000,5", "1000.5"), ("1,000.5", "1000.5"),
])
def test_number_spellings_normalise_to_one_value(raw: str, value: str) -> None:
    assert normalise_number(raw) == value


def test_a_space_joins_only_a_thousands_group() -> None:
    assert digit_numbers("En 2019 10 personas; 1 000 euros; 12 345 678") == ["2019", "10", "1000", "12345678"]


def test_sentences_are_counted_by_their_final_punctuation() -> None:
    assert sentences("") == 0 and sentences("Hola") == 1 and sentences("Hola. Adiós.") == 2
    assert sentences('Dijo «no». Luego se fue') == 2


def _flags(source: str, output: str, reference: str, pair: Pair = EN_ES) -> dict[str, list[str]]:
    return check_entry(source, output, reference, pair).offending()


def test_numbers_changed_dropped_or_invented_are_flagged_and_respelt_ones_are_not() -> None:
    src, ref = "Sales rose 12% to $1,500 in 2019.", "Las ventas subieron un 12 % hasta 1.500 dólares en 2019."
    assert _flags(src, "Las ventas subieron un 12 % hasta 1500 dólares en 2019.", ref) == {}
    assert _flags(src, "Las ventas subieron un 13 % hasta 1.500 dólares en 2019.", ref) == {"numbers": ["-12", "+13"]}
    assert _flags(src, "Las ventas subieron hasta 1.500 dólares en 2019.", ref) == {"numbers": ["-12"]}
    assert _flags("Two men were arrested.", "Dos hombres fueron detenidos.", "Dos hombres fueron detenidos.") == {}
    assert _flags("Two men were arrested.", "2 hombres fueron detenidos.", "Dos hombres fueron detenidos.") == {}
    # a number the reference does not keep is not required (a unit converted, a decade spelt out)
    assert _flags("In the 1990s.", "En los años noventa.", "En los años noventa.") == {}


def test_a_name_kept_by_the_reference_must_be_kept_and_a_translated_one_need_not() -> None:
    src = "On Monday, Angela Merkel met Emmanuel Macron in Berlin."
    ref = "El lunes, Angela Merkel se reunió con Emmanuel Macron en Berlín."
    assert _flags(src, ref, ref) == {}
    assert _flags(src, "El lunes, Angela Merkel se reunió con Boris Johnson en Berlín.", ref) == {
        "entities": ["-emmanuel", "-macron"]}
    # "Monday" is capitalised in English only, and the reference translates it: never required
    assert "entities" not in _flags(src, "Angela Merkel se reunió con Emmanuel Macron en Berlín el martes.", ref)


def test_names_across_scripts_are_not_checked_and_say_so() -> None:
    pair = Pair(language_card("mk"), language_card("en"), True)
    found = check_entry("Angela Merkel met Macron.", "Ангела Меркель встретилась с Макроном.",
                        "Ангела Меркель встретилась с Макроном.", pair)
    assert not found.checked("entities")  # null, never a guessed 0


def test_negation_inserted_or_removed_is_flagged_and_a_language_without_cues_is_not_checked() -> None:
    src, ref = "The minister did not resign.", "El ministro no dimitió."
    assert _flags(src, ref, ref) == {}
    assert _flags(src, "El ministro dimitió.", ref) == {"negation": ["0 cue(s), reference 1"]}
    assert _flags("He resigned.", "No dimitió.", "Dimitió.") == {"negation": ["1 cue(s), reference 0", "No"]}
    assert _flags("He did nothing.", "No hizo nada.", "No hizo nada.") == {}  # negative concord as the reference has it
    assert language_card("sw").negation_cues == ()
    swahili = Pair(language_card("sw"), language_card("en"), True)
    found = check_entry("He resigned.", "Hakujiuzulu.", "Alijiuzulu.", swahili)
    assert not found.checked("negation") and found.checked("numbers")


def test_appended_and_truncated_content_is_flagged() -> None:
    src, ref = "The bridge was closed on Friday.", "El puente se cerró el viernes."
    invented = ref + " Los vecinos celebraron una fiesta."
    assert _flags(src, invented, ref)["addition"]
    assert _flags(src, "El puente se cerró", ref) == {}  # a few words short: within the bounds
    assert _flags(src, "El puente", ref)["omission"]
    assert _flags(src, "", ref)["omission"]  # a failed entry is an empty output


# --- the bundled NTREX eng→spa slice: references and adversarial outputs built from them -----------------------

def _ntrex(n: int = 600) -> tuple[list[str], list[str]]:
    src = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:n]
    ref = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[:n]
    return src, ref


def _rate(outputs: list[str], src: list[str], ref: list[str], flag: str | None = None) -> float:
    found = [check_entry(s, o, r, EN_ES) for s, o, r in zip(src, outputs, ref, strict=True)]
    return sum((f.flagged(flag) if flag else f.any) for f in found) / len(found)


def test_references_are_not_flagged_and_every_adversarial_class_is() -> None:
    src, ref = _ntrex()
    assert _rate(ref, src, ref) == 0.0  # the reference licenses what each check requires: 0 by construction
    rng = random.Random(7)
    digits = [i for i, r in enumerate(ref) if re.search(r"\d", r)]
    changed = [bumped_numbers(ref[i]) for i in digits]
    assert _rate(changed, [src[i] for i in digits], [ref[i] for i in digits], "numbers") >= 0.95
    assert _rate([flipped_negation(r) for r in ref], src, ref, "negation") >= 0.95
    names = [[w for j, w in enumerate(r.split()) if j and w[:1].isupper()] for r in ref]
    pool = [w for ws in names for w in ws]
    with_names = [i for i, ws in enumerate(names) if ws]
    swapped = [" ".join(rng.choice(pool) if j and w[:1].isupper() else w for j, w in enumerate(ref[i].split()))
               for i in with_names]
    assert _rate(swapped, [src[i] for i in with_names], [ref[i] for i in with_names], "entities") >= 0.75
    appended = [r + " " + ref[(i + 300) % len(ref)] for i, r in enumerate(ref)]
    assert _rate(appended, src, ref, "addition") >= 0.9
    truncated = [" ".join(r.split()[: max(1, len(r.split()) // 2)]) for r in ref]
    assert _rate(truncated, src, ref, "omission") >= 0.9


def test_rates_are_on_the_card_with_intervals_and_verify_recomputes_them() -> None:
    src, ref = _ntrex(40)
    hyps = [bumped_numbers(r) if i % 4 == 0 else r for i, r in enumerate(ref)]
    result = mt_eval.score(hyps, ref, sources=src, lang="en-es")
    flagged = sum(1 for i, r in enumerate(ref) if i % 4 == 0 and re.search(r"\d", r))
    assert flagged > 0
    cer = result.metrics["critical_error_rate"]
    assert cer.value == pytest.approx(flagged / len(ref)) and cer.higher_is_better is False
    assert cer.ci is not None and cer.value is not None
    assert cer.ci[0] <= cer.value <= cer.ci[1] and cer.ci[1] > cer.ci[0]
    assert result.metrics["number_error_rate"].value == pytest.approx(flagged / len(ref))
    for metric_id in ("entity_error_rate", "negation_error_rate", "addition_rate", "omission_rate"):
        assert result.metrics[metric_id].value == 0.0
    card = result.card
    assert verify_card(card) == []
    count, worst = worst_entries(card)
    assert count == flagged and worst and all(set(w.flags) == {"numbers"} for w in worst)
    tampered = {**card, "scores": {**card["scores"], "critical_error_rate": 0.0}}
    assert any(p.startswith("scores.critical_error_rate") for p in verify_card(tampered))


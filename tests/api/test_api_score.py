"""``mt_eval.score``: in-memory lists of strings scored by the one pipeline, equal to sacrebleu.

Every corpus figure is checked against sacrebleu's own ``corpus_score`` on the very same strings (chrF++ is
``CHRF(word_order=2)``), on real NTREX-128 lines with Apertium's outputs and with outputs that should score
badly (shuffled, truncated), so a number that is merely plausible fails.
"""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path
from unittest import mock

import pytest
from sacrebleu.metrics import BLEU, CHRF, TER, lib_ter

import mt_eval
from mt_eval.errors import UserError
from mt_eval.metrics.ter_bound import SHIFT_BUDGET
from mt_eval.stats.config import BootstrapConfig

FAST = BootstrapConfig(200, 0.05, 7)  # intervals still drawn; fewer resamples keep the file fast


def _sacrebleu(hyps: list[str], refs: list[list[str]]) -> dict[str, float]:
    # TER: sacrebleu's own search stopped at the card's shift budget (decisions §63), its unbounded TER no higher
    with mock.patch.object(lib_ter, "_MAX_SHIFT_CANDIDATES", SHIFT_BUDGET):
        ter = TER().corpus_score(hyps, refs).score
    assert TER().corpus_score(hyps, refs).score <= ter
    return {"chrf_plus_plus": CHRF(word_order=2).corpus_score(hyps, refs).score,
            "chrf": CHRF().corpus_score(hyps, refs).score,
            "bleu": BLEU().corpus_score(hyps, refs).score,
            "ter": ter}


def _shuffled(outputs: list[str]) -> list[str]:
    moved = outputs[1:] + outputs[:1]  # every output on another entry's line
    random.Random(3).shuffle(moved)
    return moved


def _truncated(outputs: list[str]) -> list[str]:
    return [" ".join(o.split()[: max(1, len(o.split()) // 3)]) for o in outputs]


@pytest.fixture(scope="module")
def apertium(ntrex: tuple[list[str], list[str]], apertium_outputs: list[str]) -> mt_eval.EvalResult:
    sources, refs = ntrex
    return mt_eval.score(apertium_outputs, refs, sources=sources, lang="en-es", bootstrap=FAST)


def test_apertium_outputs_score_as_sacrebleu_scores_them(apertium: mt_eval.EvalResult,
                                                          ntrex: tuple[list[str], list[str]],
                                                          apertium_outputs: list[str]) -> None:
    expected = _sacrebleu(apertium_outputs, [ntrex[1]])
    for metric, value in expected.items():
        assert apertium[metric] == pytest.approx(value, rel=1e-12, abs=1e-12), metric
        assert apertium.metrics[metric].value == apertium.card["scores"][metric]
    assert 30 < apertium["chrf_plus_plus"] < 70  # a real MT system, not a degenerate string


@pytest.mark.parametrize("spoil", [_shuffled, _truncated], ids=["shuffled", "truncated"])
def test_bad_outputs_score_badly_and_still_as_sacrebleu(spoil, apertium: mt_eval.EvalResult,
                                                        ntrex: tuple[list[str], list[str]],
                                                        apertium_outputs: list[str]) -> None:
    sources, refs = ntrex
    hyps = spoil(apertium_outputs)
    bad = mt_eval.score(hyps, refs, sources=sources, lang="en-es", bootstrap=FAST)
    for metric, value in _sacrebleu(hyps, [refs]).items():
        assert bad[metric] == pytest.approx(value, rel=1e-12, abs=1e-12), metric
    assert bad["chrf_plus_plus"] < apertium["chrf_plus_plus"] - 10
    assert bad["bleu"] < apertium["bleu"] and bad.composite.value < apertium.composite.value


def test_intervals_per_entry_values_tier_and_the_sealed_card(apertium: mt_eval.EvalResult,
                                                             ntrex: tuple[list[str], list[str]],
                                                             apertium_outputs: list[str]) -> None:
    from mt_eval.runcard.verify import verify_card

    chrf = apertium.metrics["chrf_plus_plus"]
    assert chrf.ci is not None and chrf.ci[0] < chrf.value < chrf.ci[1]
    stored = apertium.card["scores"]["confidence_intervals"]["chrf_plus_plus"]
    assert chrf.ci == (stored["ci_lower"], stored["ci_upper"]) and chrf.higher_is_better
    assert apertium.metrics["ter"].higher_is_better is False
    assert apertium.composite.ci is not None and apertium.tier == apertium.card["scores"]["quality_tier"]
    assert len(apertium.entries) == len(apertium_outputs)
    sentence = CHRF(word_order=2)
    for entry, hyp, ref in zip(apertium.entries, apertium_outputs, ntrex[1], strict=True):
        assert entry.hypothesis == hyp and entry.reference == ref
        assert entry.values["chrf_plus_plus"] == pytest.approx(sentence.sentence_score(hyp, [ref]).score, abs=1e-9)
    assert verify_card(dict(apertium.card)) == []  # the card is a sealed card like any other
    assert apertium.path is None


def test_a_result_kept_in_memory_is_saved_as_a_card_that_verifies(apertium: mt_eval.EvalResult,
                                                                  tmp_path: Path) -> None:
    from mt_eval.runcard.io import load_card
    from mt_eval.runcard.verify import verify_card

    path = apertium.save(tmp_path / "card.json")
    assert verify_card(load_card(path), path) == [] and mt_eval.load_card(path).run_card_hash == apertium.run_card_hash


def test_the_result_is_frozen(apertium: mt_eval.EvalResult) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        apertium.tier = "gold"  # type: ignore[misc]
    with pytest.raises(TypeError):
        apertium.metrics["bleu"] = apertium.metrics["ter"]  # type: ignore[index]
    with pytest.raises(TypeError):
        apertium.entries[0].values["chrf"] = 100.0  # type: ignore[index]


def test_nothing_is_written_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         ntrex: tuple[list[str], list[str]]) -> None:
    monkeypatch.chdir(tmp_path)
    refs = ntrex[1][:5]
    mt_eval.score(refs, refs, lang="en-es", bootstrap=FAST)
    assert os.listdir(tmp_path) == []  # no runs/ folder, no card
    kept = mt_eval.score(refs, refs, lang="en-es", bootstrap=FAST, out=tmp_path / "card.json")
    assert kept.path == tmp_path / "card.json" and kept.path.is_file()
    assert mt_eval.load_card(kept.path).run_card_hash == kept.card["run_card_hash"]


def test_a_text_pair_on_disk_and_the_same_lists_give_the_same_card(tmp_path: Path, apertium: mt_eval.EvalResult,
                                                                   ntrex: tuple[list[str], list[str]],
                                                                   apertium_outputs: list[str]) -> None:
    """The one pipeline: ``score`` on lists equals ``mt-eval score`` on files holding those lines."""
    from mt_eval.corpus import load_text_pair

    sources, refs = ntrex
    for name, lines in (("src.en", sources), ("ref.es", refs), ("hyp.txt", apertium_outputs)):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    dataset = load_text_pair(tmp_path / "src.en", tmp_path / "ref.es", "en", "es")
    on_disk = mt_eval.score_predictions(dataset, tmp_path / "hyp.txt", bootstrap=FAST)
    assert apertium.card["dataset"]["sha256"] == dataset.sha256  # the text-pair rule, on the same bytes
    for key in ("chrf_plus_plus", "bleu", "ter", "composite", "hallucination_rate", "confidence_intervals"):
        assert apertium.card["scores"][key] == on_disk.card["scores"][key], key


def test_several_references_as_sacrebleu_takes_them(ntrex: tuple[list[str], list[str]],
                                                    apertium_outputs: list[str]) -> None:
    refs = ntrex[1][:12]
    other = [r.replace("de", "del") for r in refs]  # a second, different reference stream
    hyps = apertium_outputs[:12]
    both = mt_eval.score(hyps, [refs, other], lang="en-es", bootstrap=FAST)  # sacrebleu's [stream, stream]
    for metric, value in _sacrebleu(hyps, [refs, other]).items():
        assert both[metric] == pytest.approx(value, rel=1e-12, abs=1e-12), metric
    assert both["chrf_plus_plus"] != mt_eval.score(hyps, refs, lang="en-es", bootstrap=FAST)["chrf_plus_plus"]


def test_metrics_choose_what_the_result_reports(ntrex: tuple[list[str], list[str]]) -> None:
    refs = ntrex[1][:5]
    few = mt_eval.score(refs, refs, lang="en-es", metrics=["bleu", "chrf_plus_plus"], bootstrap=FAST)
    assert set(few.metrics) == {"bleu", "chrf_plus_plus"} and few["bleu"] == pytest.approx(100.0)
    assert set(few.entries[0].values) == {"chrf_plus_plus"}  # BLEU is a corpus-level metric
    assert few.composite.value is not None  # the composite and the card stay whole
    with pytest.raises(UserError, match="unknown metric 'blue'"):
        mt_eval.score(refs, refs, lang="en-es", metrics=["blue"])


@pytest.mark.parametrize(("hyps", "refs", "kw", "message"), [
    (["a", "b"], ["a"], {}, "2 hypotheses but 1 references"),
    (["a", "b"], ["a", " "], {}, "entry 2.*reference is empty"),
    (["a"], ["a"], {"sources": ["x", "y"]}, "1 hypotheses but 2 sources"),
    (["a"], ["a"], {"lang": "english"}, "lang 'english'"),
    ([1], ["a"], {}, "hypotheses.*strings"),
    ("a b", ["a"], {}, "hypotheses.*a list"),
], ids=["count", "empty-ref", "sources", "lang", "non-string", "bare-string"])
def test_bad_inputs_are_one_line_each(hyps, refs, kw, message) -> None:
    with pytest.raises(UserError, match=message):
        mt_eval.score(hyps, refs, **{"lang": "en-es", **kw})

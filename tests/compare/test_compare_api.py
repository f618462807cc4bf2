"""``compare()``: refusals, reproducibility, Holm across systems, and the composite's own function."""

from __future__ import annotations

import copy
import importlib

import numpy as np
import pytest
from compare_helpers import load

from mt_eval.comparison import COMPOSITE, compare
from mt_eval.errors import UserError
from mt_eval.runcard.rescore import table_from_card
from mt_eval.scoring import composite
from mt_eval.scoring.composite import composite_rule
from mt_eval.scoring.profiles import PROFILES
from mt_eval.stats import holm, percentile_interval, resample_counts, resampled_values
from mt_eval.stats.paired import sacrebleu_bootstrap_p_value

NAMES = ["a", "b", "near_a"]


@pytest.fixture(scope="module")
def three(cards):
    return [load(cards[n]) for n in NAMES]


@pytest.fixture(scope="module")
def result(three):
    return compare(three, names=NAMES)


def test_shape_and_defaults(result, three) -> None:
    assert [s.name for s in result.systems] == NAMES and result.baseline == "a"
    ids = [m.id for m in result.metrics]
    # every metric with a value on the cards (those without gold data are null and left out), in the
    # run's order (the card's statistics list; the file's keys are sorted)
    run_order = three[0]["statistics"]["metrics"]
    valued = [m for m in run_order if three[0]["scores"].get(m) is not None and m != "length_ratio"]
    assert ids == [*valued, COMPOSITE]
    assert {"exact_match_rate", "chrf_plus_plus", "chrf", "bleu", "ter"} <= set(ids)
    assert result.metric("ter").higher_is_better is False
    assert len(result.paired) == len(ids) * 2  # every candidate x every metric
    for system, card in zip(result.systems, three, strict=True):
        for metric in ("chrf_plus_plus", "bleu", "ter", COMPOSITE):
            ci = system.scores[metric]
            assert ci.point == pytest.approx(card["scores"][metric], abs=1e-12)  # the card's own number
            assert ci.ci_lower <= ci.point <= ci.ci_upper
    assert result.dataset["sha256"] == three[0]["dataset"]["sha256"]


def test_default_names_fall_back_to_sources(three) -> None:
    """All three are method 'predictions' with condition 'default': names come from the sources."""
    out = compare(three[:2], metrics=["bleu"], sources=["runs/base.json", "runs/new.json"])
    assert [s.name for s in out.systems] == ["base", "new"]


def test_identical_seeds_identical_results(three, result) -> None:
    again = compare(three, names=NAMES)
    assert again.as_dict() == result.as_dict()
    other = compare(three, names=NAMES, seed=7)
    row, other_row = result.result("near_a", "chrf"), other.result("near_a", "chrf")
    assert other_row.delta == row.delta  # the observed difference does not depend on the seed
    assert (other_row.ci_lower, other_row.p_value) != (row.ci_lower, row.p_value)
    assert other.seed == 7 and all(r.seed == 7 for r in other.paired)


def test_holm_across_three_systems(result) -> None:
    for spec in result.metrics:
        rows = result.for_metric(spec.id)
        assert [r.system for r in rows] == ["b", "near_a"]
        expected = holm([r.p_value for r in rows], result.alpha)
        for row, (p_adj, _) in zip(rows, expected, strict=True):
            assert row.p_adjusted == p_adj and row.correction == "holm"
            assert row.p_adjusted >= row.p_value
            excludes_zero = row.ci_lower > 0 or row.ci_upper < 0
            assert row.significant == (p_adj < result.alpha and row.delta != 0 and excludes_zero)
    # The adjustment is real: b has the smaller p, which is doubled (m = 2); near_a's larger p is
    # multiplied by 1 but may not fall below b's adjusted value (step-down monotonicity).
    b, near = result.result("b", "chrf"), result.result("near_a", "chrf")
    assert b.p_value < near.p_value
    assert b.p_adjusted == pytest.approx(2 * b.p_value)
    assert near.p_adjusted == pytest.approx(max(2 * b.p_value, near.p_value))
    assert b.significant and not near.significant


def test_no_correction(three) -> None:
    out = compare(three, names=NAMES, metrics=["chrf"], correction="none")
    assert all(r.p_adjusted == r.p_value for r in out.paired)


def test_composite_is_computed_by_the_composite_function(three, result) -> None:
    """Recompute the composite's paired result independently: the same resamples, each metric's
    aggregate, then ``mt_eval.scoring.composite`` per resample. Any other combination (mean of
    intervals, a re-implemented formula, separately drawn resamples) would not reproduce it."""
    tables = [table_from_card(c) for c in three[:2]]
    counts = resample_counts(len(three[0]["results"]), result.n_resamples, result.seed)
    rule = composite_rule(three[0])
    assert rule == "anchored-2"  # adequacy reads chrF++, the length ratio, BLEU and critical errors, weighted or not
    reads = ("chrf_plus_plus", "length_ratio", "bleu", "critical_error_rate")
    used = [m for m in tables[0].metrics if three[0]["scores"].get(m) is not None
            and (m in PROFILES[result.profile] or m in reads)]  # fmt: skip
    aggs = {m: tables[0].metrics[m].aggregate for m in used}
    va, vb = (resampled_values({m: t.stats[m] for m in used}, aggs, counts) for t in tables)
    weights = PROFILES[result.profile]
    comp_a, comp_b = composite(va, weights, rule), composite(vb, weights, rule)
    deltas = np.asarray(comp_b) - np.asarray(comp_a)
    row = result.result("b", COMPOSITE)
    assert row.score_a == pytest.approx(three[0]["scores"]["composite"], abs=1e-12)
    assert row.score_b == pytest.approx(three[1]["scores"]["composite"], abs=1e-12)
    assert (row.ci_lower, row.ci_upper) == percentile_interval(deltas, result.alpha)
    assert row.p_value == sacrebleu_bootstrap_p_value(row.delta, deltas)
    ci = result.systems[1].scores[COMPOSITE]
    assert (ci.ci_lower, ci.ci_upper) == percentile_interval(np.asarray(comp_b), result.alpha)


def test_composite_follows_the_profile_table(three, monkeypatch) -> None:
    """Change the profile's weights and the composite's test changes with them: with all weight on
    chrF++ (and no critical-error factor, which anchored-2 applies) the composite is chrF++/100, so its
    delta and p-value are chrF++'s."""
    monkeypatch.setitem(PROFILES, three[0]["profile"], {"chrf_plus_plus": 1.0})
    # the module (``mt_eval.scoring.composite`` as an attribute is the function the package re-exports)
    monkeypatch.setattr(importlib.import_module("mt_eval.scoring.composite"), "CRITICAL", "not measured")
    out = compare(three[:2], names=NAMES[:2], metrics=["chrf_plus_plus", COMPOSITE])
    chrf, comp = out.result("b", "chrf_plus_plus"), out.result("b", COMPOSITE)
    assert comp.delta == pytest.approx(chrf.delta / 100, rel=1e-12)
    assert comp.ci_lower == pytest.approx(chrf.ci_lower / 100, rel=1e-9)
    assert abs(comp.p_value - chrf.p_value) <= 1 / (out.n_resamples + 1)


def test_metric_restriction_and_aliases(three) -> None:
    out = compare(three[:2], names=NAMES[:2], metrics=["chrF++", "TER"])
    assert [m.id for m in out.metrics] == ["chrf_plus_plus", "ter"]
    assert COMPOSITE not in out.systems[0].scores
    with pytest.raises(UserError, match="unknown metric 'meteor'"):
        compare(three[:2], metrics=["meteor"])


def test_entry_order_is_aligned(three) -> None:
    """A card listing the same entries in another order is compared entry by entry, not row by row."""
    shuffled = copy.deepcopy(three[1])
    shuffled["results"].reverse()
    a = compare([three[0], three[1]], names=NAMES[:2], metrics=["chrf"])
    b = compare([three[0], shuffled], names=NAMES[:2], metrics=["chrf"])
    assert a.as_dict()["paired"] == b.as_dict()["paired"]


def test_refusals_name_both_cards(cards, three) -> None:
    other, subset = load(cards["other_data"]), load(cards["subset"])
    with pytest.raises(UserError, match=r"x\.json was scored on a different dataset than the baseline base\.json"):
        compare([three[0], other], sources=["base.json", "x.json"])
    with pytest.raises(UserError, match=r"sub\.json and the baseline base\.json cover different entries"):
        compare([three[0], subset], sources=["base.json", "sub.json"])
    profile_a = copy.deepcopy(three[1])
    base_profile = three[0]["profile"]
    profile_a["profile"] = other_profile = "B" if base_profile == "A" else "A"
    with pytest.raises(
        UserError, match=rf"p\.json uses profile {other_profile} but the baseline base\.json uses {base_profile}"
    ):
        compare([three[0], profile_a], sources=["base.json", "p.json"])
    with pytest.raises(UserError, match="at least two run cards"):
        compare([three[0]])
    with pytest.raises(UserError, match="alpha"):
        compare(three[:2], alpha=1.5)

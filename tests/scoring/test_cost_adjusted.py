"""The cost-adjusted score ranks cheap systems too (issue 22 item 7, docs/decisions.md).

§6.3's composite / log2(1 + 1000·c) explodes below $0.001 per entry (×70 at $1e-5); the floor that kept it
under the composite (decisions §3) made it equal the composite there, where sentence MT with current models
costs, so it ranked nothing. composite / log2(2 + 1000·c) is 1 at zero cost, strictly decreasing, never above
the composite, and within 5 % of §6.3 from $0.01 per entry up. Old cards keep their formula."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mt_eval.runcard.verify_economics import economics_problems
from mt_eval.scoring.composite import COST_ADJUSTED_FORMULA, FLOORED_FORMULA, cost_adjusted

COSTS = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]


def test_every_cost_ranks_and_never_beats_the_composite() -> None:
    values = [cost_adjusted(0.8, c) for c in COSTS]
    assert all(v is not None and v <= 0.8 for v in values)
    assert all(a is not None and b is not None and a > b for a, b in itertools.pairwise(values))


def test_cheap_systems_are_ranked_not_tied() -> None:
    """10× cheaper and 2.5 % worse wins below $0.001 per entry; the floored formula tied them at the composite."""
    cheap, dear = cost_adjusted(0.78, 1e-5), cost_adjusted(0.80, 1e-4)
    assert cheap is not None and dear is not None and cheap > dear
    old_cheap, old_dear = cost_adjusted(0.78, 1e-5, FLOORED_FORMULA), cost_adjusted(0.80, 1e-4, FLOORED_FORMULA)
    assert (old_cheap, old_dear) == (pytest.approx(0.78), pytest.approx(0.80))  # the floor: cost ignored
    # a much worse cheap system does not win on price alone
    bad = cost_adjusted(0.70, 1e-5)
    assert bad is not None and bad < dear


@pytest.mark.parametrize("cost", [1e-2, 1e-1, 1.0])
def test_close_to_the_spec_where_the_spec_is_finite(cost: float) -> None:
    spec = 0.6 / math.log2(1 + cost * 1000)  # §6.3 as written
    value = cost_adjusted(0.6, cost)
    assert value is not None and value == pytest.approx(spec, rel=0.05)


def test_unknown_or_free_is_null() -> None:
    assert cost_adjusted(0.6, 0.0) is None and cost_adjusted(0.6, None) is None and cost_adjusted(None, 0.1) is None


def _card(cost: float, adjusted: float | None, formula: str | None) -> dict[str, object]:
    block: dict[str, object] = {"total_cost_usd": cost * 2, "cost_per_entry_usd": cost, "status": "measured",
                                "source": "provider"}
    if formula is not None:
        block["cost_adjusted_formula"] = formula
    return {"cost": block, "totals": {"total_cost_usd": cost * 2, "cost_per_entry_usd": cost},
            "scores": {"composite": 0.6, "cost_adjusted": adjusted},
            "results": [{"source": "a", "latency_seconds": None}, {"source": "b", "latency_seconds": None}],
            "tokens": {"total_tokens": None}, "speed": {"status": "unknown"}}


def test_old_cards_verify_with_their_floored_formula() -> None:
    """A card without ``cost.cost_adjusted_formula`` was written with the floor: it still verifies, and a
    value that follows neither its formula is still refused."""
    old = _card(1e-5, 0.6, None)
    assert not [p for p in economics_problems(old) if "cost_adjusted" in p]
    forged = _card(1e-5, 0.59, None)
    assert [p for p in economics_problems(forged) if "cost_adjusted" in p]
    new = _card(1e-5, cost_adjusted(0.6, 1e-5), COST_ADJUSTED_FORMULA)
    assert not [p for p in economics_problems(new) if "cost_adjusted" in p]
    mixed = _card(1e-5, 0.6, COST_ADJUSTED_FORMULA)  # the floored value under the new formula's name
    assert [p for p in economics_problems(mixed) if "cost_adjusted" in p]
    unknown = _card(1e-5, 0.6, "composite × 100")
    assert [p for p in economics_problems(unknown) if "cost_adjusted_formula" in p]


def test_table_for_decisions() -> None:
    """The numbers docs/decisions.md quotes (composite 0.8)."""
    got = {c: round(float(np.asarray(cost_adjusted(0.8, c))), 4) for c in COSTS}
    assert got == {1e-6: 0.7994, 1e-5: 0.7943, 1e-4: 0.7474, 1e-3: 0.5047, 1e-2: 0.2232, 1e-1: 0.1199}

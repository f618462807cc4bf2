"""Holm–Bonferroni: a textbook example computed by hand, and the properties the run card relies on."""

from __future__ import annotations

import itertools

import pytest

from mt_eval.stats import holm


def test_textbook_example() -> None:
    # Sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> running max 0.06.
    result = holm([0.01, 0.04, 0.03, 0.005], alpha=0.05)
    adjusted = [adj for adj, _ in result]
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [reject for _, reject in result] == [True, False, False, True]


def test_capped_at_one_and_monotone() -> None:
    ps = [0.5, 0.2, 0.9, 0.01, 0.2]
    result = holm(ps)
    adjusted = [adj for adj, _ in result]
    assert max(adjusted) == 1.0
    order = sorted(range(len(ps)), key=ps.__getitem__)
    assert all(adjusted[i] <= adjusted[j] for i, j in itertools.pairwise(order))
    assert all(adj >= p for adj, p in zip(adjusted, ps, strict=True))
    assert adjusted[1] == adjusted[4]  # tied raw p-values, tied adjusted values


def test_step_down_stops_at_first_failure() -> None:
    # 0.001·3 = 0.003 rejects; 0.03·2 = 0.06 fails, so 0.035·1 = 0.035 (< alpha alone) is kept.
    result = holm([0.035, 0.001, 0.03])
    assert [reject for _, reject in result] == [False, True, False]
    assert result[0][0] == pytest.approx(0.06)


def test_boundary_and_trivial_cases() -> None:
    assert holm([]) == []
    assert holm([0.05]) == [(0.05, True)]  # adjusted p <= alpha rejects
    assert holm([0.025, 0.025], alpha=0.05) == [(0.05, True), (0.05, True)]


@pytest.mark.parametrize("bad", [[-0.1], [1.5], [float("nan")]])
def test_rejects_invalid_p_values(bad) -> None:
    with pytest.raises(ValueError, match="p-values"):
        holm(bad)
    with pytest.raises(ValueError, match="alpha"):
        holm([0.1], alpha=0)

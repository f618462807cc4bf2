"""Benchmark Spec §5/§7.2: no method reaches Deployable or above without community review.

The card keeps the tier its composite earns (the spec's §5.1 thresholds); everything a person
reads shows "deployable — awaiting review" and counts it as functional until a review passes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.render.html import render_html
from mt_eval.runcard.io import load_card
from mt_eval.scoring.composite import effective_tier, quality_tier, tier_label

SAVED = Path(__file__).resolve().parents[1] / "runcard" / "saved" / "card-2.0-apertium-eng-spa.json"


@pytest.mark.parametrize(("composite", "tier", "counts_as", "shown"), [
    (0.92, "fluent", "functional", "fluent — awaiting review"),
    (0.70, "deployable", "functional", "deployable — awaiting review"),
    (0.6999, "functional", "functional", "functional"),
    (0.31, "emerging", "emerging", "emerging"),
    (0.10, "baseline", "baseline", "baseline"),
])
def test_gate_caps_unreviewed_tiers(composite: float, tier: str, counts_as: str, shown: str) -> None:
    assert quality_tier(composite) == tier  # the card's tier is the spec's, unchanged
    assert effective_tier(tier) == counts_as
    assert tier_label(tier) == shown


def test_a_passed_review_lifts_the_cap() -> None:
    assert effective_tier("deployable", reviewed=True) == "deployable"
    assert tier_label("fluent", reviewed=True) == "fluent"


def test_show_and_report_say_awaiting_review() -> None:
    card = load_card(SAVED)
    assert card["scores"]["quality_tier"] == "deployable"  # a saved spec-4.1 card: Apertium eng→spa, 0.71
    result = CliRunner().invoke(app, ["show", str(SAVED), "--worst", "0"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "deployable — awaiting review" in result.stdout
    page = render_html(card)
    assert "deployable — awaiting review" in page
    assert 'class="badge tier-deployable"' not in page and 'class="badge tier-functional"' in page

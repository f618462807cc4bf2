"""Critical errors where people read a card: ``show`` (the rates and the worst entries with their offending tokens),
``report`` (its HTML section) and the web run page's data (no entry of a secret segment, counted or shown)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import mt_eval
from mt_eval.cli import app
from mt_eval.metrics.critical import critical_view
from mt_eval.render.html import render_html

SOURCES = ["Sales rose 12% in 2019.", "The minister did not resign.", "Angela Merkel met Emmanuel Macron in Berlin.",
           "The bridge was closed on Friday."]
REFERENCES = ["Las ventas subieron un 12 % en 2019.", "El ministro no dimitió.",
              "Angela Merkel se reunió con Emmanuel Macron en Berlín.", "El puente se cerró el viernes."]
OUTPUTS = ["Las ventas subieron un 15 % en 2019.", "El ministro dimitió.",
           "Angela Merkel se reunió con Boris Johnson en Berlín.", "El puente se cerró el viernes."]


@pytest.fixture(scope="module")
def card() -> dict:
    return mt_eval.score(OUTPUTS, REFERENCES, sources=SOURCES, lang="en-es").card


def test_show_prints_each_rate_and_the_worst_entries_with_their_tokens(card: dict, tmp_path: Path) -> None:
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(app, ["show", str(path)], terminal_width=250)
    assert result.exit_code == 0, result.output
    assert "Critical errors: 3 of 4 entries flagged" in result.output
    for text in ("-12", "+15", "0 cue(s), reference 1", "-emmanuel", "-macron", "critical_error_rate"):
        assert text in result.output, text


def test_report_has_a_critical_errors_section(card: dict) -> None:
    page = render_html(card)
    assert '<section id="critical">' in page and "3 of 4 entries flagged" in page
    assert "-macron" in page and "+15" in page and 'href="#critical"' in page


def test_the_web_view_counts_and_shows_no_secret_entry(card: dict) -> None:
    public = critical_view(card)
    assert public is not None and public["flagged"] == 3 and public["of"] == 4
    secret = json.loads(json.dumps(card))
    secret["results"][0]["segment"] = "gold_standard"  # the changed number sits in a secret entry
    view = critical_view(secret, keep=lambda r: r.get("segment") != "gold_standard")
    assert view is not None and view["flagged"] == 2 and view["of"] == 3
    assert all(w["entry_id"] != secret["results"][0]["entry_id"] for w in view["worst"])
    assert "15 %" not in json.dumps(view)


def test_a_card_scored_before_the_metrics_shows_no_section(card: dict) -> None:
    old = json.loads(json.dumps(card))
    for key in ("critical_error_rate", "number_error_rate", "entity_error_rate", "negation_error_rate",
                "addition_rate", "omission_rate"):
        old["metrics"].pop(key)
    assert critical_view(old) is None and '<section id="critical">' not in render_html(old)


def test_a_language_without_a_cue_list_says_negation_is_not_checked() -> None:
    card = mt_eval.score(["Hakujiuzulu."], ["Alijiuzulu."], sources=["He resigned."], lang="en-sw").card
    assert card["scores"]["negation_error_rate"] is None and card["scores"]["critical_error_rate"] == 0.0
    view = critical_view(card)
    assert view is not None and "negation error: not checked (no negation cue list on the sw language card)" in (
        view["summary"])

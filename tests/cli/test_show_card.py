"""`mt-eval show`: --json, -m, verification banner, terminal escapes, usage blocks of a predictions card."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.render.card_data import fst_label, neutral, usage_blocks
from mt_eval.runcard.io import load_card

runner = CliRunner()


def _tampered(card_path: Path, tmp: Path) -> Path:
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card["scores"]["bleu"] += 1.5
    bad = tmp / "tampered.json"
    bad.write_text(json.dumps(card), encoding="utf-8")
    return bad


def test_json_is_the_summary_and_plain(corpus_cards):
    card = load_card(corpus_cards["near"])
    result = runner.invoke(app, ["show", str(corpus_cards["near"]), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # nothing but JSON on stdout
    assert data["verified"] is True and data["problems"] == []
    assert data["method"]["name"] == "near-ref"  # --system named it
    assert data["run_card_hash"] == card["run_card_hash"] and data["composite"] == card["scores"]["composite"]
    assert data["scores"]["chrf_plus_plus"] == card["scores"]["chrf_plus_plus"]
    ci = card["scores"]["confidence_intervals"]["bleu"]
    assert data["confidence_intervals"]["bleu"] == {"lower": ci["ci_lower"], "upper": ci["ci_upper"]}
    assert data["cost"] is None and data["speed"] is None and data["tokens"] is None  # a replayed file
    assert "\x1b" not in result.stdout and "│" not in result.stdout


def test_metrics_option_limits_and_rejects_unknown(corpus_cards):
    result = runner.invoke(app, ["show", str(corpus_cards["near"]), "--json", "-m", "chrf++,bleu"])
    assert result.exit_code == 0, result.output
    assert set(json.loads(result.stdout)["scores"]) == {"chrf_plus_plus", "bleu"}
    shown = runner.invoke(app, ["show", str(corpus_cards["near"]), "--metrics", "ter"])
    table = shown.stdout.split("Scores", 1)[1].split("└", 1)[0]
    assert "ter " in table and "chrf_plus_plus" not in table and "bleu" not in table
    bad = runner.invoke(app, ["show", str(corpus_cards["near"]), "-m", "nosuch"])
    assert bad.exit_code == 2 and "unknown metric 'nosuch'" in bad.output and len(bad.output.splitlines()) == 1


def test_terminal_escapes_from_data_are_neutralised(corpus_cards):
    card = load_card(corpus_cards["evil"])
    assert any("\x1b]8;;http://evil\x07" in r["predicted"] for r in card["results"])  # the card holds them
    result = runner.invoke(app, ["show", str(corpus_cards["evil"]), "--worst", "200"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "\\x1b]8;;http://evil\\x07click" in result.stdout  # written out, visibly
    assert "<script>alert(1)</script> & <b>bold</b>" in result.stdout  # markup-looking text shown, not interpreted


def test_neutral_keeps_text_and_writes_controls():
    assert neutral("año\tñ\nx") == "año\tñ\nx"
    assert neutral("\x1b[2J\x9b\u202eabc\r") == "\\x1b[2J\\x9b\\u202eabc\\x0d"


def test_predictions_card_hides_usage_blocks_and_shows_fst_share(corpus_cards):
    card = load_card(corpus_cards["truncated"])
    # a replayed file: cost and speed unknown (null), never the $0 and replay-timed throughput cards once had
    assert card["cost"]["total_cost_usd"] is None and card["speed"]["entries_per_minute"] is None
    result = runner.invoke(app, ["show", str(corpus_cards["truncated"])])
    out = result.stdout
    for absent in ("Cost", "Tokens", "entries_per_minute", "elapsed_seconds", "total_cost_usd"):
        assert absent not in out, absent
    assert "cost: unknown" in out and "not measured" in out
    rates = [r["metrics"]["fst_acceptance_rate"] for r in card["results"]]
    assert any(r is not None for r in rates)
    worst = out.split("Worst 5 entries", 1)[1]
    assert "FST" in worst and "accepted " in worst and " %" in worst
    assert fst_label(0.714) == "accepted 71 %" and fst_label(None) == "—"


def test_usage_blocks_kept_for_a_paid_run(corpus_cards):
    card = load_card(corpus_cards["truncated"])
    card["method"] = {**card["method"], "name": "llm", "config": {"model": "m"}}
    card["tokens"] = {**card["tokens"], "prompt_tokens": 900, "completion_tokens": 100, "total_tokens": 1000}
    card["cost"] = {**card["cost"], "total_cost_usd": 0.12, "status": "measured", "source": "provider"}
    card["speed"] = {**card["speed"], "status": "measured"}
    titles = [t for t, _ in usage_blocks(card)[0]]
    assert titles == ["Cost", "Speed", "Tokens"]


def test_tampered_card_is_shown_under_a_banner(corpus_cards, tmp_path):
    bad = _tampered(corpus_cards["near"], tmp_path)
    result = runner.invoke(app, ["show", str(bad)])
    assert result.exit_code == 0  # still displayed
    assert result.stdout.index("NOT VERIFIED") < result.stdout.index("Scores")
    assert "scores.bleu" in result.stdout
    as_json = json.loads(runner.invoke(app, ["show", str(bad), "--json"]).stdout)
    assert as_json["verified"] is False and as_json["problems"][0].startswith("scores.bleu")
    clean = runner.invoke(app, ["show", str(corpus_cards["near"])])
    assert "NOT VERIFIED" not in clean.stdout


def test_piped_output_is_not_wrapped(corpus_cards):
    result = runner.invoke(app, ["show", str(corpus_cards["near"]), "--worst", "3"])
    lines = result.stdout.splitlines()
    head = lines[0]
    errors = load_card(corpus_cards["near"])["scores"]["errors"]
    assert head.startswith("near-ref on ") and head.rstrip().endswith(f"errors {errors}")
    assert len(head) > 80  # one line, where an 80-column console folded it
    assert lines[1].startswith("run ") and " hash " in lines[1] and lines[1].endswith("…")
    assert max(len(ln) for ln in lines) > 100  # tables get a wide page: the worst-entries table is not squeezed

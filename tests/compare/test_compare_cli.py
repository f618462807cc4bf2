"""``mt-eval compare`` end to end: tables, --json, refusals as one line with exit code 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

runner = CliRunner()


def invoke(app, *args: str):
    return runner.invoke(app, ["compare", *args])


def test_compact_table_one_row_per_metric_one_column_per_system(cli_app, cards) -> None:
    """The default: systems × metrics in one table, Δ with * and the Holm p, the composite as on each card."""
    from compare_helpers import load

    result = invoke(cli_app, str(cards["a"]), str(cards["b"]), str(cards["a"]), "--bootstrap", "300")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    composite = next(line for line in lines if line.lstrip().startswith("composite"))
    card_a, card_b = load(cards["a"]), load(cards["b"])
    cells = composite.split("│")
    assert cells[1].split()[0] == f"{card_a['scores']['composite']:.3f}"  # as written on the card
    assert cells[2].split()[0] == f"{card_b['scores']['composite']:.3f}" and "*" in cells[2]
    # the baseline against itself: no difference, p = 1.0 (sacrebleu would print 1/(B+1)), no star
    assert cells[3].split()[1:] == ["+0.000", "1.0000"]
    for label in ("chrF++ ↑", "TER ↓", "BLEU ↑", "exact match ↑"):
        assert any(line.lstrip().startswith(label) for line in lines), label
    assert "p raw" not in result.stdout  # the detail tables are behind --detail


def test_tables_name_systems_and_read_ter_the_right_way(cli_app, cards) -> None:
    result = invoke(cli_app, str(cards["a"]), str(cards["b"]), str(cards["near_a"]), "-m", "chrf++", "-m", "ter",
                    "-m", "composite", "--bootstrap", "300", "--detail")  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("chrF++ (higher is better)", "TER (lower is better)", "composite (higher is better)",
                 "baseline", "p Holm", "p raw", "Holm-adjusted across 2 systems"):
        assert text in out, text
    assert "*" in out  # b is significantly better than a
    for stem in ("a", "b", "near_a"):  # identical method names: the file stems tell them apart
        assert f" {stem} " in out


def test_render_reads_direction(cards) -> None:
    """On a wide terminal each verdict is on one line: TER's negative delta reads as better."""
    from compare_helpers import load
    from rich.console import Console

    from mt_eval.comparison import compare
    from mt_eval.render.compare import render

    result = compare([load(cards["a"]), load(cards["b"]), load(cards["near_a"])], names=["a", "b", "near_a"],
                     metrics=["ter", "chrf"], n_resamples=300)  # fmt: skip
    console = Console(width=160, record=True)
    render(result, console, detail=True)
    text = console.export_text()
    assert "better (lower TER)" in text
    ter_b = result.result("b", "ter")
    assert ter_b.delta < 0 and ter_b.significant
    assert f"{ter_b.delta:+.2f}*" in text
    near = result.result("near_a", "chrf")
    assert f"{near.verdict}, n.s." in text and not near.significant


def test_json_output_parses_and_has_the_fields(cli_app, cards) -> None:
    result = invoke(cli_app, str(cards["a"]), str(cards["b"]), "--json", "--bootstrap", "200", "--seed", "3")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["baseline"] == "a" and data["n_resamples"] == 200 and data["seed"] == 3
    assert data["method"] == "bootstrap" and data["correction"] == "holm"
    assert [s["name"] for s in data["systems"]] == ["a", "b"]
    assert set(data["systems"][0]["scores"]["chrf_plus_plus"]) >= {"point", "ci_lower", "ci_upper", "n_resamples"}
    row = next(r for r in data["paired"] if r["metric"] == "composite")
    for key in ("system", "baseline", "score_a", "score_b", "delta", "ci_lower", "ci_upper", "p_value",
                "p_adjusted", "significant", "significant_uncorrected", "higher_is_better", "method"):
        assert key in row, key
    assert row["system"] == "b" and row["significant"] is True
    assert {m["id"] for m in data["metrics"]} >= {"chrf_plus_plus", "bleu", "ter", "composite"}


def test_paired_ar_option(cli_app, cards) -> None:
    result = invoke(cli_app, str(cards["a"]), str(cards["near_a"]), "--paired-ar", "--trials", "500", "-m", "bleu",
                    "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["method"] == "approx-rand" and data["n_trials"] == 500
    assert data["paired"][0]["method"] == "approximate-randomization"


@pytest.mark.parametrize(
    ("other", "message"),
    [
        ("other_data", "was scored on a different dataset than the baseline"),
        ("subset", "cover different entries"),
    ],
)
def test_mismatched_cards_exit_2_with_one_line(cli_app, cards, other, message) -> None:
    result = invoke(cli_app, str(cards["a"]), str(cards[other]))
    assert result.exit_code == 2
    err = result.stderr.strip()
    assert message in err and str(cards[other].name) in err and str(cards["a"].name) in err
    assert len(err.splitlines()) == 1 and err.startswith("error:")
    assert "Traceback" not in result.output
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "meteor"], "unknown metric 'meteor'"),
        (["--alpha", "2"], "--alpha must lie strictly between 0 and 1"),
        (["--correction", "bonferroni"], "unknown --correction"),
    ],
)
def test_bad_options_exit_2(cli_app, cards, args, message) -> None:
    result = invoke(cli_app, str(cards["a"]), str(cards["b"]), *args)
    assert result.exit_code == 2 and message in result.stderr
    assert "Traceback" not in result.output


def test_missing_or_single_card(cli_app, cards, tmp_path) -> None:
    missing = invoke(cli_app, str(cards["a"]), str(tmp_path / "nope.json"))
    assert missing.exit_code == 2 and "run card not found" in missing.stderr
    single = invoke(cli_app, str(cards["a"]))
    assert single.exit_code == 2 and "at least two run cards" in single.stderr


def test_help_teaches(cli_app) -> None:
    result = runner.invoke(cli_app, ["compare", "--help"])
    assert result.exit_code == 0
    for text in ("BASELINE", "Example", "--paired-ar", "--bootstrap", "--json", "Holm", "lower-is-better"):
        assert text in result.output, text

"""`mt-eval report A.json B.json …`: one page comparing real cards, checked against compare() itself."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import pytest
from test_html_report import parse
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.comparison import compare
from mt_eval.render.html.diff import char_diff
from mt_eval.runcard.io import load_card

runner = CliRunner()
BOOT = "200"


@pytest.fixture(scope="module")
def page(corpus_cards: dict[str, Path]) -> dict[str, object]:
    cards = [corpus_cards[k] for k in ("truncated", "near", "evil")]
    out = corpus_cards["dir"] / "cmp.html"
    result = runner.invoke(app, ["report", *map(str, cards), "--out", str(out), "--bootstrap", BOOT])
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == str(out)
    text = out.read_text(encoding="utf-8")
    return {"html": text, "parsed": parse(text), "cards": cards, "out": out}


def test_metrics_table_is_compare_with_holm(page):
    result = compare([str(c) for c in page["cards"]], n_resamples=int(BOOT))
    p = page["parsed"]
    assert len(p.rows["comparison-table"]) == len(result.metrics) >= 6
    for spec in result.metrics:
        text = p.text(f"cmp-{spec.id}")
        digits = 2 if spec.scale > 1 else 4
        for i, system in enumerate(result.systems):
            ci = system.scores[spec.id]
            for v in (ci.point, ci.ci_lower, ci.ci_upper):
                assert f"{v:.{digits}f}" in text, (spec.id, system.name, v)
            if i:
                row = result.result(system.name, spec.id)
                assert f"Δ {row.delta:+.{digits}f}" in text
                p_text = "p < 0.001" if row.p_adjusted < 0.001 else f"p = {row.p_adjusted:.3f}"
                assert p_text in text
    assert result.correction == "holm" and "Holm-corrected" in page["html"]
    chrf = p.text("cmp-chrf_plus_plus")
    assert chrf.count("better") == 2  # near-ref and evil beat the truncated baseline, significantly


def test_systems_named_and_baseline_first(page):
    rows = page["parsed"].rows["systems-table"]
    # two cards are "predictions": compare names every system by its file then
    assert [r[0] for r in rows] == ["truncated (baseline)", "near", "evil"]
    assert rows[1][1].startswith("near-ref") and all(r[-1] == "✓ verified" for r in rows)


def test_one_distribution_per_metric(page):
    result = compare([str(c) for c in page["cards"]], n_resamples=50)
    html = page["html"]
    per_entry = set(load_card(page["cards"][0])["results"][0]["metrics"])
    for spec in result.metrics:
        if spec.id not in per_entry:  # composite, BLEU: corpus-level only, said so
            assert f'id="dist-{spec.id}"' not in html
            assert spec.id == "composite" or spec.id.upper() in page["parsed"].text("corpus-only").upper()
            continue
        block = html.split(f'id="dist-{spec.id}"', 1)[1].split("</figure>", 1)[0]
        assert "<svg" in block and block.count("<line") >= 3 + 3  # a baseline and a corpus-score line per system
    assert html.count('class="dist"') >= 6


def test_entries_side_by_side_with_escaped_character_diffs(page, corpus_cards):
    p, html = page["parsed"], page["html"]
    rows = p.rows["entries-table"]
    cards = [load_card(c) for c in page["cards"]]
    assert len(rows) == len(cards[0]["results"]) == 200
    assert len(rows[0]) == 4 + 3
    spreads = [float(r[1]) for r in rows]
    assert spreads == sorted(spreads, reverse=True)  # most disagreement first
    assert "<del>" in html and "<ins>" in html
    # the evil output: HTML stays text, terminal escapes are inert characters in a page
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert sum(1 for t, _ in p.tags if t == "script") == 1 and not any(t == "b" for t, _ in p.tags)
    by_id = {r["entry_id"]: r for r in cards[0]["results"]}
    row = next(r for r in rows if r[0] == "1")
    ref = by_id[1]["reference"]
    assert unescape(re.sub(r"<[^>]+>", "", char_diff(ref, cards[1]["results"][0]["predicted"]))) in row[5]


def test_char_diff_marks_what_changed():
    assert char_diff("la casa blanca", "la casa blanca") == "la casa blanca"
    assert char_diff("la casa", "las casas") == "la<ins>s</ins> casa<ins>s</ins>"
    assert char_diff("gato", "") == "<del>gato</del>"
    assert char_diff("a<b", "a<b>&") == "a&lt;b<ins>&gt;&amp;</ins>"


def test_self_contained(page):
    p, html = page["parsed"], page["html"]
    assert "http://" not in html.replace("http://evil", "") and "https://" not in html
    assert not any(t in ("link", "img", "iframe", "object", "embed") for t, _ in p.tags)
    for tag, name, value in p.attrs:
        assert name != "src", tag
        if name == "href":
            assert (value or "").startswith("#"), value


def test_never_overwrites_without_force(page, corpus_cards):
    out: Path = page["out"]
    before = out.read_text(encoding="utf-8")
    cards = list(map(str, page["cards"][:2]))
    refused = runner.invoke(app, ["report", *cards, "--out", str(out), "--bootstrap", "50"])
    assert refused.exit_code == 2 and len(refused.output.strip().splitlines()) == 1
    assert "already exists" in refused.output and "--force" in refused.output
    assert out.read_text(encoding="utf-8") == before
    forced = runner.invoke(app, ["report", *cards, "--out", str(out), "--bootstrap", "50", "--force"])
    assert forced.exit_code == 0 and out.read_text(encoding="utf-8") != before
    single = corpus_cards["dir"] / "single.html"
    assert runner.invoke(app, ["report", str(page["cards"][0]), "-o", str(single)]).exit_code == 0
    again = runner.invoke(app, ["report", str(page["cards"][0]), "-o", str(single)])
    assert again.exit_code == 2 and "already exists" in again.output
    assert runner.invoke(app, ["report", str(page["cards"][0]), "-o", str(single), "-f"]).exit_code == 0


def test_tampered_card_gets_a_warning_box(corpus_cards, tmp_path):
    card = json.loads(corpus_cards["near"].read_text(encoding="utf-8"))
    card["scores"]["chrf_plus_plus"] -= 2.0
    bad = tmp_path / "edited.json"
    bad.write_text(json.dumps(card), encoding="utf-8")
    single = runner.invoke(app, ["report", str(bad), "-o", str(tmp_path / "one.html")])
    assert single.exit_code == 0, single.output
    one = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert one.index('class="tamper"') < one.index("<header>") and "scores.chrf_plus_plus" in one
    multi = runner.invoke(app, ["report", str(corpus_cards["truncated"]), str(bad), "-o", str(tmp_path / "m.html"),
                                "--bootstrap", "50"])
    assert multi.exit_code == 0, multi.output
    html = (tmp_path / "m.html").read_text(encoding="utf-8")
    assert html.count('class="tamper"') == 1 and "edited.json" in html.split('class="tamper"', 1)[1][:400]
    assert "✗ not verified" in html
    clean = runner.invoke(app, ["report", str(corpus_cards["truncated"]), "-o", str(tmp_path / "ok.html")])
    assert clean.exit_code == 0 and 'class="tamper"' not in (tmp_path / "ok.html").read_text(encoding="utf-8")


def test_cards_of_different_corpora_are_one_line(corpus_cards, tmp_path):
    other = tmp_path / "other.json"
    hyp = tmp_path / "hyp.txt"
    src, ref = tmp_path / "src.en", tmp_path / "ref.es"
    src.write_text("Hello.\nGood night.\n", encoding="utf-8")
    ref.write_text("Hola.\nBuenas noches.\n", encoding="utf-8")
    hyp.write_text("Hola.\nBuena noche.\n", encoding="utf-8")
    made = runner.invoke(app, ["score", "--source-file", str(src), "--reference-file", str(ref), "-l", "en-es",
                               "-p", str(hyp), "-o", str(other), "--runs-dir", str(tmp_path / "runs"),
                               "--bootstrap", "0"])
    assert made.exit_code == 0, made.output
    result = runner.invoke(app, ["report", str(corpus_cards["near"]), str(other), "-o", str(tmp_path / "x.html")])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1
    assert result.output.startswith("error:") and not (tmp_path / "x.html").exists()

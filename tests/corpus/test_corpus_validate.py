"""Corpus summary counts, Benchmark Spec §11.1 warnings and their rendering."""

from __future__ import annotations

from pathlib import Path

from corpus_helpers import entry, envelope, write_json
from rich.console import Console

from mt_eval.corpus import load_corpus, load_text_pair, summarize
from mt_eval.render.corpus import render_summary


def _spec_complete_corpus() -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    plan = [("gold_standard", 50), ("development", 30), ("diagnostic", 10)]
    n = 0
    for segment, count in plan:
        for _ in range(count):
            n += 1
            entries.append(
                entry(
                    n,
                    segment=segment,
                    difficulty=1 + n % 5,
                    provenance="elicited",
                    register="formal" if n % 2 else "conversational",
                )
            )
    return entries


def test_complete_corpus_has_no_warnings(tmp_path: Path) -> None:
    summary = summarize(load_corpus(write_json(tmp_path, envelope(_spec_complete_corpus()))))
    assert summary.warnings == []
    assert summary.entry_count == 90
    assert summary.by_segment == {"gold_standard": 50, "held_out": 0, "development": 30, "diagnostic": 10}
    assert sum(summary.by_difficulty.values()) == 90 and set(summary.by_difficulty) == {1, 2, 3, 4, 5}
    assert summary.by_provenance["elicited"] == 90 and summary.missing_provenance == 0
    assert summary.by_register["formal"] == 45


def test_sparse_corpus_warns_on_each_minimum(tmp_path: Path) -> None:
    ds = load_corpus(write_json(tmp_path, envelope([entry(1, difficulty=2), entry(2, provenance="textbook")])))
    summary = summarize(ds)
    text = "\n".join(summary.warnings)
    assert "gold_standard has 0 entries" in text and "at least 50" in text
    assert "development has 2 entries" in text and "at least 30" in text
    assert "diagnostic has 0 entries" in text and "at least 10" in text
    assert "2 difficulty tiers (2, 3)" in text
    assert "0 registers (none)" in text
    assert "1 of 2 entries has no provenance" in text
    assert "2 entries have no segment" in text
    assert "1 entry has no difficulty" in text
    assert summary.by_provenance["(not given)"] == 1 and summary.by_provenance["corpus"] == 0


def test_text_pair_provenance_counts_as_given(tmp_path: Path) -> None:
    src, ref = tmp_path / "s.txt", tmp_path / "r.txt"
    src.write_text("a\nb\n", "utf-8")
    ref.write_text("c\nd\n", "utf-8")
    summary = summarize(load_text_pair(src, ref, "en", "es"))
    assert summary.missing_provenance == 0 and summary.by_provenance["corpus"] == 2


def test_render_summary_tables_and_yellow_warnings(tmp_path: Path) -> None:
    ds = load_corpus(write_json(tmp_path, envelope([entry(1, register="formal")], id="demo[1]")))
    console = Console(record=True, width=120, force_terminal=True, color_system="truecolor")
    render_summary(summarize(ds), console)
    plain = console.export_text(clear=False)
    assert "demo[1] v1.0" in plain  # brackets are not eaten as rich markup
    assert ds.sha256 in plain
    for heading in ("by segment", "by difficulty", "by provenance", "by register"):
        assert heading in plain
    assert "warning: segment gold_standard has 0 entries" in plain
    styled = console.export_text(styles=True)
    assert "\x1b[33mwarning:" in styled  # yellow


def test_render_all_clear(tmp_path: Path) -> None:
    console = Console(record=True, width=120)
    render_summary(summarize(load_corpus(write_json(tmp_path, envelope(_spec_complete_corpus())))), console)
    assert "meets the Benchmark Spec §11.1 corpus minimums" in console.export_text()

"""Benchmark Spec §2.3's minimum for the held_out segment (10 entries): a corpus that has a held_out segment
smaller than that is warned about; none at all is fine (§11.1 does not require one: it is reserved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_helpers import entry, envelope, write_json

from mt_eval.corpus import load_corpus, summarize
from mt_eval.corpus.validate import HELD_OUT_MINIMUM, SEGMENT_MINIMUMS


def _corpus(tmp_path: Path, held_out: int) -> list[str]:
    entries = [entry(n, segment="held_out" if n <= held_out else "development") for n in range(1, held_out + 31)]
    return summarize(load_corpus(write_json(tmp_path, envelope(entries)))).warnings


@pytest.mark.parametrize(("held_out", "warned"), [(0, False), (1, True), (9, True), (10, False), (12, False)])
def test_held_out_below_ten_is_warned(tmp_path: Path, held_out: int, warned: bool) -> None:
    lines = [w for w in _corpus(tmp_path, held_out) if w.startswith("segment held_out")]
    assert bool(lines) == warned
    if warned:
        assert f"has {held_out} entr" in lines[0] and "at least 10" in lines[0] and "§2.3" in lines[0]


def test_the_minimum_is_the_spec_table() -> None:
    """§2.3's Minimum Size column: development 30, diagnostic 10, gold_standard 50, held_out 10."""
    assert {s.value: n for s, n in SEGMENT_MINIMUMS.items()} == {"gold_standard": 50, "development": 30,
                                                                  "diagnostic": 10}
    assert HELD_OUT_MINIMUM == 10

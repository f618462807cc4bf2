"""The hallucination rate keeps each source's support across runs (``hallucination.source_supports``): every
system scored on a test set reads the same sources. The statistics must be exactly those of a fresh computation,
for good outputs and for outputs that should be flagged (another line's reference, scrambled words)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import mt_eval
from mt_eval.metrics import hallucination

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def _outputs() -> tuple[list[str], list[str], dict[str, list[str]]]:
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:40]
    sources, refs = [str(e["source"]) for e in entries], [str(e["reference"]) for e in entries]
    rng = random.Random(5)
    scrambled = []
    for r in refs:
        words = r.split()
        rng.shuffle(words)
        scrambled.append(" ".join(words))
    return sources, refs, {"references": refs, "another_line": refs[1:] + refs[:1], "scrambled": scrambled}


def _rates(sources: list[str], refs: list[str], hyps: list[str]) -> tuple[float, np.ndarray]:
    result = mt_eval.score(hyps, refs, sources=sources, lang="en-es", bootstrap=None)
    return result["hallucination_rate"], np.array([e.values.get("hallucination_rate") for e in result.entries],
                                                  dtype=object)


def test_remembered_supports_give_a_fresh_computations_statistics() -> None:
    sources, refs, systems = _outputs()
    fresh = {}
    for name, hyps in systems.items():
        hallucination._SUPPORTS.clear()
        fresh[name] = _rates(sources, refs, hyps)
    assert fresh["another_line"][0] > fresh["references"][0]  # the metric still tells them apart
    for name, hyps in systems.items():  # now every source's support is remembered
        value, per_entry = _rates(sources, refs, hyps)
        assert value == fresh[name][0] and list(per_entry) == list(fresh[name][1]), name
    assert sum(len(v) for v in hallucination._SUPPORTS.values()) >= len(set(sources))


def test_the_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    sources, refs, systems = _outputs()
    monkeypatch.setattr(hallucination, "MAX_SUPPORTS", 10)
    first = _rates(sources, refs, systems["another_line"])
    second = _rates(sources, refs, systems["another_line"])  # started again past the bound: the same numbers
    assert first[0] == second[0] and list(first[1]) == list(second[1])
    assert all(len(v) <= len(set(sources)) for v in hallucination._SUPPORTS.values())

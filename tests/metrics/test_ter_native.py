"""TER's edit distance in C (``metrics/ter_edit.c``) returns exactly what sacrebleu's ``BeamEditDistance`` returns:
the distance and the trace ``_shift`` aligns with, on real NTREX references and on outputs built to score badly
(scrambled, reversed, truncated, repeated, one word against many: the beam widens), and on random sequences over
a three-word vocabulary, where ties decide every cell. Where the library cannot be used, sacrebleu's class is.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from sacrebleu.metrics import TER, lib_ter

from mt_eval import native
from mt_eval.metrics import ter_bound, ter_native
from mt_eval.metrics.ter_native import NativeEditDistance, beam_edit_distance
from support.native import require

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def _function() -> object:
    return require(ter_native._function, "ter_edit.c")


def _pairs() -> list[tuple[list[str], list[str]]]:
    rng = random.Random(7)
    refs = [str(e["reference"]).split() for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]]
    pairs = []
    for ref in refs:
        scrambled = ref[:]
        rng.shuffle(scrambled)
        pairs += [(ref, ref), (ref, scrambled), (ref, ref[::-1]), (ref, [w for w in ref if rng.random() > 0.3]),
                  (ref, ref[: len(ref) // 3]), ((ref * 3)[: len(ref) + 7], ref), (ref, ref[:1]), (ref, []),
                  (ref[:1], ref * 4)]
    for _ in range(300):  # ties everywhere: three words, lengths from 0 to 60
        ref = [rng.choice("abc") for _ in range(rng.randint(1, 60))]
        pairs.append((ref, [rng.choice("abc") for _ in range(rng.randint(0, 60))]))
    return pairs


def test_distance_and_trace_equal_sacrebleus_on_every_pair() -> None:
    function = _function()
    pairs = _pairs()
    assert len(pairs) > 2000
    for ref, hyp in pairs:
        assert NativeEditDistance(function, ref)(hyp) == lib_ter.BeamEditDistance(ref)(hyp), (ref, hyp)


def test_one_object_answers_many_hypotheses_as_sacrebleus_cached_one_does() -> None:
    """sacrebleu's object caches rows across calls (a shift search calls it per candidate); ours recomputes them."""
    function = _function()
    rng = random.Random(3)
    ref = str(json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][5]["reference"]).split()
    ours, theirs = NativeEditDistance(function, ref), lib_ter.BeamEditDistance(ref)
    for _ in range(200):
        hyp = ref[:]
        rng.shuffle(hyp)
        assert ours(hyp) == theirs(hyp)


def test_ter_statistics_equal_sacrebleus_ter_on_bad_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole bounded search with the C distance gives the statistics it gives with sacrebleu's, and with the
    full budget both equal sacrebleu's own TER per segment."""
    _function()
    pairs = _pairs()[:135]
    native_edits = [ter_bound.bounded_edit_rate(hyp, ref) for ref, hyp in pairs]
    monkeypatch.setattr(ter_bound, "beam_edit_distance", lib_ter.BeamEditDistance)
    assert [ter_bound.bounded_edit_rate(hyp, ref) for ref, hyp in pairs] == native_edits
    monkeypatch.undo()
    sacre = TER(case_sensitive=True)  # the words as given: sacrebleu lowercases by default
    everything = _pairs()
    # sacrebleu's unbounded search on scrambled lines takes seconds each: dropped, truncated and one-word lines
    # of NTREX, and the three-word random ones
    for ref, hyp in [p for i, p in enumerate(everything[:1800]) if i % 9 in (3, 4, 6)][:90] + everything[-12:]:
        stats = sacre._extract_corpus_statistics([" ".join(hyp)], [[" ".join(ref)]])[0]
        budget = lib_ter._MAX_SHIFT_CANDIDATES
        assert list(ter_bound.bounded_edit_rate(hyp, ref, budget)) == [stats[0], stats[1]]


def test_sacrebleus_class_where_the_library_is_missing_or_the_matrix_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    ref, hyp = ["a", "b", "c", "d"], ["d", "c", "b", "a", "e"]
    monkeypatch.setattr(ter_native, "_function", lambda: None)
    assert isinstance(beam_edit_distance(ref), lib_ter.BeamEditDistance)
    monkeypatch.undo()
    function = _function()
    monkeypatch.setattr(ter_native, "MAX_CELLS", 10)
    big = NativeEditDistance(function, ref)
    assert big(hyp) == lib_ter.BeamEditDistance(ref)(hyp) and big._fallback is not None  # sacrebleu's answered


def test_no_compiler_means_no_library(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    monkeypatch.setattr(native, "compiler", lambda: None)
    assert native.compiled("probe", {"probe.c": "int f(void) { return 1; }\n"}, "probe.c", ("-fPIC",),
                           ("-shared",)) is None
    assert not any(tmp_path.rglob("*.so"))


def test_a_source_that_does_not_compile_is_none_and_a_good_one_is_cached(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    if native.compiler() is None:
        pytest.skip("no C compiler")
    monkeypatch.setenv(native.CACHE_ENV, str(tmp_path))
    assert native.compiled("broken", {"broken.c": "int f(void) { return }\n"}, "broken.c", ("-fPIC",),
                           ("-shared",)) is None
    good = native.compiled("probe", {"probe.c": "int f(void) { return 1; }\n"}, "probe.c", ("-fPIC",), ("-shared",))
    assert good is not None and good.parent == tmp_path / "mt-eval" / "native"
    assert native.compiled("probe", {"probe.c": "int f(void) { return 1; }\n"}, "probe.c", ("-fPIC",),
                           ("-shared",)) == good  # read from the cache
    other = native.compiled("probe", {"probe.c": "int f(void) { return 2; }\n"}, "probe.c", ("-fPIC",), ("-shared",))
    assert other is not None and other != good  # another source, another file: never a stale library

"""TER's edit distance in C: sacrebleu's numbers, without its pure-Python inner loop.

``lib_ter._shift`` (Tercom's greedy shift search, sacrebleu's own code, bounded in ``ter_bound.py``) calls an edit
distance once per shift candidate, and that call was 81 % of TER's time and TER the largest single cost of
scoring (decisions §88). ``ter_edit.c`` computes exactly what sacrebleu's ``BeamEditDistance`` returns, the
distance and the trace ``_shift`` aligns with, compiled once per machine (``mt_eval.native``). Where no C
compiler is installed, or a matrix would be too large to allocate, sacrebleu's class is used: the same numbers
(tests/metrics/test_ter_native.py compares the two, traces included, on real and adversarial segments).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from sacrebleu.metrics import lib_ter

from mt_eval.native import c_function

EditDistance = Callable[[list[str]], tuple[int, str]]
# cells of one edit-distance matrix (9 bytes each): beyond this (an 8,000-word line against an 8,000-word
# reference) sacrebleu's own class, whose Python rows are larger still, is called as before
MAX_CELLS = 1 << 26


def _function() -> Any | None:
    """``ter_edit_distance`` from the compiled library, or None (no compiler, no source, a failed build)."""
    int32_p = ctypes.POINTER(ctypes.c_int32)
    return c_function("mt_eval.metrics", "ter_edit.c", "ter_edit_distance", ctypes.c_int64,
                      (int32_p, ctypes.c_int32, int32_p, ctypes.c_int32, ctypes.c_char_p, int32_p))


class NativeEditDistance:
    """``lib_ter.BeamEditDistance(words_ref)``: called with a hypothesis, (distance, trace)."""

    def __init__(self, function: Any, words_ref: list[str]) -> None:
        self._function = function
        self._words_ref = words_ref
        self._ids: dict[str, int] = {}
        for word in words_ref:
            self._ids.setdefault(word, len(self._ids))
        self._ref = (ctypes.c_int32 * len(words_ref))(*(self._ids[w] for w in words_ref))
        self._fallback: lib_ter.BeamEditDistance | None = None

    def _python(self) -> lib_ter.BeamEditDistance:
        if self._fallback is None:
            self._fallback = lib_ter.BeamEditDistance(self._words_ref)
        return self._fallback

    def __call__(self, words_hyp: list[str]) -> tuple[int, str]:
        n_hyp, n_ref = len(words_hyp), len(self._words_ref)
        if (n_hyp + 1) * (n_ref + 1) > MAX_CELLS:
            return self._python()(words_hyp)
        ids = self._ids.get  # a word the reference lacks is -1: it never matches
        hyp = (ctypes.c_int32 * n_hyp)(*(ids(w, -1) for w in words_hyp))
        trace = ctypes.create_string_buffer(n_hyp + n_ref + 1)
        length = ctypes.c_int32(0)
        distance = self._function(hyp, n_hyp, self._ref, n_ref, trace, ctypes.byref(length))
        if distance < 0:  # no memory, or the trace met a cell the beam never set: sacrebleu's (and its exception)
            return self._python()(words_hyp)
        return int(distance), trace.raw[: length.value].decode("ascii")


def beam_edit_distance(words_ref: list[str]) -> EditDistance:
    """What ``lib_ter._shift`` calls for one reference: the compiled edit distance, else sacrebleu's own."""
    function = _function()
    if function is None:
        return lib_ter.BeamEditDistance(words_ref)
    return NativeEditDistance(function, words_ref)

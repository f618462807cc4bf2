"""chrF's per-segment statistics in C: sacrebleu's counts without its Python n-gram dictionaries.

``sacre._chrf_row`` counts each segment's character and word n-grams in ``Counter`` objects; that was the
largest cost of chrF++ (the composite's anchor) after TER. ``chrf_count.c`` takes the same inputs (the text
without whitespace as code points, sacrebleu's punctuation-split words as ids) and returns the same row, compiled
once per machine (``mt_eval.native``). Where no compiler is installed, ``rows`` returns None and the Python
transcription is used: the same numbers (tests/metrics/test_chrf_native.py compares them on every NTREX
language pair's references against degraded outputs and on random text).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

from mt_eval.native import c_function


def _function() -> Any | None:
    uint32_p = ctypes.POINTER(ctypes.c_uint32)
    return c_function("mt_eval.metrics", "chrf_count.c", "chrf_statistics", ctypes.c_int,
                      (ctypes.c_char_p, ctypes.c_int32, ctypes.c_char_p, ctypes.c_int32, ctypes.c_int32,
                       uint32_p, ctypes.c_int32, uint32_p, ctypes.c_int32, ctypes.c_int32,
                       ctypes.POINTER(ctypes.c_int64)))


def _code_points(text: str) -> bytes:
    """The text without whitespace (sacrebleu's ``"".join(text.split())``), one little-endian uint32 per character."""
    return "".join(text.split()).encode("utf-32-le", "surrogatepass")


def rows(metric: Any, hypotheses: Sequence[str], references: Sequence[str]) -> list[list[int]] | None:
    """sacrebleu's chrF statistics row per (hypothesis, reference) for ``metric`` (a ``sacrebleu.CHRF``: its
    char_order, word_order and punctuation splitting), or None where the C function is not available."""
    function = _function()
    if function is None:
        return None
    char_order, word_order = int(metric.char_order), int(metric.word_order)
    out = (ctypes.c_int64 * (3 * (char_order + word_order)))()
    no_words = (ctypes.c_uint32 * 0)()
    result: list[list[int]] = []
    for hypothesis, reference in zip(hypotheses, references, strict=True):
        hyp_chars, ref_chars = _code_points(hypothesis), _code_points(reference)
        hyp_words, ref_words = no_words, no_words
        if word_order > 0:
            ids: dict[str, int] = {}
            hyp_ids = [ids.setdefault(w, len(ids)) for w in metric._remove_punctuation(hypothesis)]
            ref_ids = [ids.setdefault(w, len(ids)) for w in metric._remove_punctuation(reference)]
            hyp_words = (ctypes.c_uint32 * len(hyp_ids))(*hyp_ids)
            ref_words = (ctypes.c_uint32 * len(ref_ids))(*ref_ids)
        status = function(hyp_chars, len(hyp_chars) // 4, ref_chars, len(ref_chars) // 4, char_order,
                          hyp_words, len(hyp_words), ref_words, len(ref_words), word_order, out)
        if status != 0:
            return None  # out of memory for one segment's windows: the caller's Python path, for all of them
        result.append(list(out))
    return result

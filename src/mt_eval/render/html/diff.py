"""Character-level difference of a prediction against its reference, as escaped HTML.

The prediction is written as edits of the reference: ``<del>`` holds reference characters the
prediction lacks, ``<ins>`` characters it adds, and what they share is plain text. Characters,
not words, because the harness's languages include agglutinative and unsegmented scripts, where a
one-letter suffix is the whole error and a word diff would mark the entire word.
"""

from __future__ import annotations

from difflib import SequenceMatcher

from mt_eval.render.html.parts import e

MAX_DIFF_CHARS = 3000
"""Longer texts are shown without a diff: SequenceMatcher is quadratic in the worst case, and a
page must render in well under a second per entry."""


SHORT_EQUAL = 2
"""A run of at most this many shared characters between two edits is folded into them: "Galeés"
against "Gales" reads better as one replaced word than as five fragments around a shared "G", "a"."""

Op = tuple[str, str, str]  # (tag, reference text, predicted text)


def _ops(reference: str, predicted: str) -> list[Op]:
    # autojunk off: its "popular character" heuristic treats spaces and vowels as junk in any
    # text over 200 characters, which breaks the alignment of ordinary sentences
    matcher = SequenceMatcher(None, reference, predicted, autojunk=False)
    return [("equal" if op == "equal" else "edit", reference[a0:a1], predicted[b0:b1])
            for op, a0, a1, b0, b1 in matcher.get_opcodes()]


def _cleanup(ops: list[Op]) -> list[Op]:
    """Fold short shared runs that sit between two edits into them, then merge adjacent edits."""
    folded = [("edit", a, b) if tag == "equal" and 0 < i < len(ops) - 1 and len(a) <= SHORT_EQUAL
              and ops[i - 1][0] == "edit" and ops[i + 1][0] == "edit" else (tag, a, b)
              for i, (tag, a, b) in enumerate(ops)]
    merged: list[Op] = []
    for tag, a, b in folded:
        if merged and tag == "edit" and merged[-1][0] == "edit":
            merged[-1] = ("edit", merged[-1][1] + a, merged[-1][2] + b)
        else:
            merged.append((tag, a, b))
    return merged


def char_diff(reference: str, predicted: str) -> str:
    """``predicted`` as HTML, its differences from ``reference`` marked; every piece escaped."""
    if len(reference) > MAX_DIFF_CHARS or len(predicted) > MAX_DIFF_CHARS:
        return e(predicted)
    parts: list[str] = []
    for tag, ref_text, pred_text in _cleanup(_ops(reference, predicted)):
        if tag == "equal":
            parts.append(e(pred_text))
            continue
        if ref_text:
            parts.append(f"<del>{e(ref_text)}</del>")
        if pred_text:
            parts.append(f"<ins>{e(pred_text)}</ins>")
    return "".join(parts)

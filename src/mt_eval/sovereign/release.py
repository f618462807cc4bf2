"""What leaves: ``RESULT.json``, the one thing a submitter receives from a gold run, and its leak check.

The result holds the status (``ok`` or an error class from :data:`ERROR_CLASSES`), every metric and
the composite at 2 decimals, breakdowns only for groups of at least :data:`MIN_GROUP` entries (a
smaller group's score says too much about its few entries), the counts of failed entries per error
class, and the ``sovereign`` block. No outputs, no timings, no stdout/stderr.

**Residual channel.** The method's translations must leave the sandbox to be scored, so a hostile
method can encode the sources it was given into them. That is why translations never go back to the
submitter: only aggregate scores at 2 decimals do. A method could still modulate its scores (e.g. a
bit per run in the second decimal) — the per-method run budget and the audit log bound that channel
to a few bits per run; it is not closed.

Before anything is released, :func:`leak_check` refuses a result in which any run of 3 tokens, or of
12 characters, of any secret source or reference appears (case and spacing folded).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from mt_eval.errors import UserError

ERROR_CLASSES = ("timeout", "crashed", "exceeded_memory", "exceeded_disk", "protocol_error",
                 "refused_egress", "budget_exhausted", "sandbox_failed", "no_entries")
MIN_GROUP = 10
NGRAM_TOKENS = 3
NGRAM_CHARS = 12
# card scores that are not a metric of the translations (timings, counts) are never released
_NOT_RELEASED = {"avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds", "cost_adjusted"}


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text.casefold()).strip()


class SecretIndex:
    """Every 3-token and 12-character window of the secret texts, for an O(result) check."""

    def __init__(self, texts: Iterable[str]) -> None:
        self.tokens: set[tuple[str, ...]] = set()
        self.chars: set[str] = set()
        for text in texts:
            folded = _fold(text)
            words = folded.split()
            self.tokens.update(tuple(words[i:i + NGRAM_TOKENS]) for i in range(len(words) - NGRAM_TOKENS + 1))
            self.chars.update(folded[i:i + NGRAM_CHARS] for i in range(len(folded) - NGRAM_CHARS + 1))

    def leaks(self, released: str) -> bool:
        folded = _fold(released)
        words = folded.split()
        if any(tuple(words[i:i + NGRAM_TOKENS]) in self.tokens for i in range(len(words) - NGRAM_TOKENS + 1)):
            return True
        return any(folded[i:i + NGRAM_CHARS] in self.chars for i in range(len(folded) - NGRAM_CHARS + 1))


def leak_check(released: str, secrets: SecretIndex) -> None:
    """Refuse (without saying which text: that would leak it) when ``released`` carries a secret n-gram."""
    if secrets.leaks(released):
        raise UserError("release refused: the result contains a secret n-gram "
                        f"(≥ {NGRAM_TOKENS} tokens or ≥ {NGRAM_CHARS} characters of a source or reference)")


def _metric_values(scores: dict[str, Any], metric_ids: Iterable[str]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in ["composite", *sorted(metric_ids)]:
        value = scores.get(key)
        if key in _NOT_RELEASED or isinstance(value, bool):
            continue
        out[key] = round(float(value), 2) if isinstance(value, int | float) else None
    return out


def breakdowns(scores: dict[str, Any], metric_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The card's ``by_*`` groups with at least :data:`MIN_GROUP` entries, values at 2 decimals."""
    ids = list(metric_ids)
    out: dict[str, dict[str, Any]] = {}
    for key, groups in sorted(scores.items()):
        if not key.startswith("by_") or not isinstance(groups, dict):
            continue
        kept = {name: {"entries": int(g.get("total") or 0), **_metric_values(g, ids)}
                for name, g in sorted(groups.items())
                if isinstance(g, dict) and int(g.get("total") or 0) >= MIN_GROUP}
        if kept:
            out[key] = kept
    return out


def result_document(status: str, card: dict[str, Any] | None, errors: dict[str, int],
                    sovereign: dict[str, Any]) -> dict[str, Any]:
    """RESULT.json's content (the issue's contract plus the per-class counts of failed entries)."""
    if status != "ok" and status not in ERROR_CLASSES:
        raise ValueError(f"unknown status {status!r}")
    scores = card["scores"] if card else {}
    metric_ids = list((card or {}).get("metrics") or {})
    return {"status": status,
            "scores": _metric_values(scores, metric_ids) if card else {},
            "breakdowns": breakdowns(scores, metric_ids) if card else {},
            "errors": {k: int(v) for k, v in sorted(errors.items()) if k in ERROR_CLASSES},
            "sovereign": sovereign}


def released_text(document: dict[str, Any]) -> str:
    """The exact text written to RESULT.json (the leak check reads this, not the dict)."""
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"

"""What leaves: ``RESULT.json``, the one thing a submitter receives from a gold run, its schema, the
number of bits per run that schema lets a method send, and the leak check (docs/decisions.md §44).

A method runs on secret sources, so anything it can move in what is released is a channel out of the
vault: a bundle that saw a source can encode it into released numbers. The release is therefore a
fixed, narrow schema, validated before anything is written (:func:`check_release`), and its capacity
is counted (:func:`channel_bits`: log2 of the number of documents a method can cause):

* ``status``: ``ok`` or one error class of :data:`ERROR_CLASSES`;
* ``scores``: the headline only, :data:`HEADLINE` — the composite in steps of 0.01 and chrF++ in whole
  points, each **floored** to its step (a released score never overstates, and the quality tier, whose
  thresholds are multiples of the step, is the tier of the released value);
* ``failed``: the share of failed entries as a bucket, :data:`FAILED_BUCKETS` (a method chooses which
  entries crash, so exact per-class counts would be a channel of their own);
* ``breakdowns``: only those the governance policy declares public (``[release] public_breakdowns``,
  default none), only when every group of it has at least :data:`MIN_GROUP` entries, each group's
  entry count (fixed by the segment) and composite in steps of :data:`GROUP_STEP`;
* ``sovereign``: :data:`SOVEREIGN_FIELDS`, every one set before the method runs (bundle, segment,
  sandbox, egress configuration, organisation) except the audit line's hash, which also hashes a
  time stamp, the log's chain and the full card's hash (a random run id): nothing a method can choose.

The public card (``public_card.py``) publishes the same values (:func:`public_scores`) plus what the
leaderboard needs — the composite's interval and the failed-entry counts — counted in
:func:`public_card_bits`.

Before anything is released, :func:`leak_check` refuses a result in which any run of 3 tokens, or of
12 characters, of any secret source or reference appears (case and spacing folded).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mt_eval.errors import UserError
from mt_eval.scoring.composite import quality_tier

ERROR_CLASSES = ("timeout", "crashed", "exceeded_memory", "exceeded_disk", "protocol_error",
                 "refused_egress", "budget_exhausted", "sandbox_failed", "no_entries")
MIN_GROUP = 10
NGRAM_TOKENS = 3
NGRAM_CHARS = 12
# metric id -> (step, top): the released grid is 0, step, 2·step, …, top (and null)
HEADLINE: dict[str, tuple[float, float]] = {"composite": (0.01, 1.0), "chrf_plus_plus": (1.0, 100.0)}
GROUP_METRIC, GROUP_STEP = "composite", 0.05  # a breakdown is a diagnostic: coarser than the headline
FAILED_BUCKETS = ("none", "few", "many")  # 0, at most FEW_SHARE of the entries, more
FEW_SHARE = 0.10
BREAKDOWNS = ("by_difficulty", "by_provenance", "by_register", "by_segment")
DOCUMENT_FIELDS = ("status", "scores", "failed", "breakdowns", "sovereign")
SOVEREIGN_FIELDS = frozenset({"bundle_sha256", "method", "version", "terms_version", "segment", "entries",
                              "sandbox", "egress", "organisation", "audit_line_sha256"})
EGRESS_FIELDS = frozenset({"mode", "provider", "models"})
COUNTS = ("total", "evaluated", "errors")  # the public card's counts (the store's coverage rule reads errors)
_HEX64 = re.compile(r"[0-9a-f]{64}")


class ReleaseRefused(UserError):
    """A document with a field outside the release schema: nothing is written."""


@dataclass(frozen=True)
class ReleaseSchema:
    """What one run may release beyond the fixed headline: the governance policy's public breakdowns.
    ``scores_on_error``: a preflight (public entries) keeps its scores when its strict status is an
    error class; a gold run is ``ok`` whenever any entry was scored, so it never needs that."""

    public_breakdowns: tuple[str, ...] = ()
    scores_on_error: bool = False


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def quantise(value: Any, step: float, top: float) -> float | None:
    """``value`` floored to a multiple of ``step`` in [0, top]; ``None`` for a missing or non-finite value.
    (The 1e-9 keeps 0.29, stored as 0.28999…, at 0.29.)"""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    steps = math.floor(min(max(float(value), 0.0), top) / step + 1e-9)
    return round(steps * step, _decimals(step))


def _ceil(value: Any, step: float, top: float) -> float | None:
    """``value`` raised to a multiple of ``step`` (an interval's upper end widens, never narrows)."""
    low = quantise(value, step, top)
    if low is None:
        return None
    return low if low >= float(value) - 1e-9 else round(min(low + step, top), _decimals(step))


def on_grid(value: Any, step: float, top: float) -> bool:
    """Whether ``value`` is ``None`` or one of the released levels 0, step, …, top."""
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= top:
        return False
    return abs(value / step - round(value / step)) < 1e-6


def levels(step: float, top: float) -> int:
    """How many values a released metric can take: the grid and null."""
    return round(top / step) + 2


def failed_bucket(failed: int, entries: int) -> str:
    """The released share of failed entries."""
    if failed <= 0:
        return "none"
    return "few" if failed <= FEW_SHARE * entries else "many"


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


def headline(scores: Mapping[str, Any]) -> dict[str, float | None]:
    """The released headline metrics of a card's ``scores``."""
    return {metric: quantise(scores.get(metric), step, top) for metric, (step, top) in HEADLINE.items()}


def _public_groups(scores: Mapping[str, Any], schema: ReleaseSchema) -> dict[str, dict[str, Mapping[str, Any]]]:
    """The card's public breakdowns whose every group has at least ``MIN_GROUP`` entries (a breakdown
    with one small group is withheld whole: the others' values would give the small one by difference)."""
    out: dict[str, dict[str, Mapping[str, Any]]] = {}
    for key in schema.public_breakdowns:
        groups = scores.get(key)
        if isinstance(groups, Mapping) and groups and all(
                isinstance(g, Mapping) and int(g.get("total") or 0) >= MIN_GROUP for g in groups.values()):
            out[key] = {str(name): g for name, g in sorted(groups.items())}
    return out


def result_document(status: str, card: Mapping[str, Any] | None, errors: Mapping[str, int], entries: int,
                    sovereign: Mapping[str, Any], schema: ReleaseSchema | None = None) -> dict[str, Any]:
    """RESULT.json's content (module docstring), checked against the schema before it is returned.
    ``errors``: failed entries per class (the sandbox report's); only their bucket is released."""
    schema = schema or ReleaseSchema()
    if status != "ok" and status not in ERROR_CLASSES:
        raise ValueError(f"unknown status {status!r}")
    scores = card["scores"] if card else {}
    groups = _public_groups(scores, schema) if card else {}
    document = {"status": status,
                "scores": headline(scores) if card else {},
                "failed": failed_bucket(min(entries, sum(errors.values())), entries),
                "breakdowns": {key: {name: {"entries": int(g["total"]),
                                            GROUP_METRIC: quantise(g.get(GROUP_METRIC), GROUP_STEP, 1.0)}
                                     for name, g in found.items()} for key, found in groups.items()},
                "sovereign": dict(sovereign)}  # fmt: skip
    check_release(document, schema)
    return document


def _refuse(field: str, why: str) -> ReleaseRefused:
    return ReleaseRefused(f"release refused: RESULT.json {field} {why}", field=field,
                          hint="only the release schema leaves (mt_eval.sovereign.release, docs/decisions.md §44)")


def _check_sovereign(block: Any) -> None:
    if not isinstance(block, Mapping) or not set(block) <= SOVEREIGN_FIELDS:
        raise _refuse("sovereign", f"holds a field outside {sorted(SOVEREIGN_FIELDS)}")
    egress = block.get("egress", {})
    if not isinstance(egress, Mapping) or not set(egress) <= EGRESS_FIELDS:
        raise _refuse("sovereign.egress", f"holds a field outside {sorted(EGRESS_FIELDS)} (usage is never released)")
    audit = block.get("audit_line_sha256")
    if audit is not None and not (isinstance(audit, str) and _HEX64.fullmatch(audit)):
        raise _refuse("sovereign.audit_line_sha256", "is not a sha256")
    if not isinstance(block.get("entries", 0), int):
        raise _refuse("sovereign.entries", "is not a count")


def check_release(document: Mapping[str, Any], schema: ReleaseSchema) -> None:
    """Refuse (:class:`ReleaseRefused`) a document with any field or value outside the schema, so that
    :func:`channel_bits` bounds what a released document can carry, rather than assuming it."""
    if set(document) != set(DOCUMENT_FIELDS):
        raise _refuse("fields", f"are {sorted(document)}, not {list(DOCUMENT_FIELDS)}")
    status, scores, breakdowns = document["status"], document["scores"], document["breakdowns"]
    if status != "ok" and status not in ERROR_CLASSES:
        raise _refuse("status", "is not ok or an error class")
    if document["failed"] not in FAILED_BUCKETS:
        raise _refuse("failed", f"is not one of {list(FAILED_BUCKETS)}")
    if not isinstance(scores, Mapping) or (scores and set(scores) != set(HEADLINE)):
        raise _refuse("scores", f"are not exactly {list(HEADLINE)}")
    if (status == "ok") != bool(scores) and not (scores and schema.scores_on_error):
        raise _refuse("scores", "are released with an error status, or missing with ok")
    for metric, (step, top) in HEADLINE.items():
        if scores and not on_grid(scores[metric], step, top):
            raise _refuse(f"scores.{metric}", f"is not a multiple of {step} in [0, {top:g}]")
    if not isinstance(breakdowns, Mapping) or not set(breakdowns) <= set(schema.public_breakdowns) or (
            breakdowns and not scores):
        raise _refuse("breakdowns", "name a breakdown the governance policy does not declare public")
    for key, groups in breakdowns.items():
        if not isinstance(groups, Mapping) or not groups:
            raise _refuse(f"breakdowns.{key}", "is not a set of groups")
        for name, group in groups.items():
            where = f"breakdowns.{key}.{name}"
            if not isinstance(group, Mapping) or set(group) != {"entries", GROUP_METRIC}:
                raise _refuse(where, f"holds other fields than entries and {GROUP_METRIC}")
            if isinstance(group["entries"], bool) or not isinstance(group["entries"], int) or \
                    group["entries"] < MIN_GROUP:
                raise _refuse(f"{where}.entries", f"is not a count of at least {MIN_GROUP}")
            if not on_grid(group[GROUP_METRIC], GROUP_STEP, 1.0):
                raise _refuse(f"{where}.{GROUP_METRIC}", f"is not a multiple of {GROUP_STEP}")
    _check_sovereign(document["sovereign"])


def channel_bits(schema: ReleaseSchema, groups: Mapping[str, int] | None = None) -> float:
    """The most a method can send per run through a document :func:`check_release` accepts: log2 of the
    number of such documents that differ in anything the method can move. ``groups``: how many groups
    each public breakdown has on the segment (fixed by the segment, like each group's entry count).

    An ok document: every headline level × every group level × every failed bucket. An error
    document: its class × every bucket (× the ok document's values too for a preflight). The
    ``sovereign`` block adds nothing: it is fixed before the method runs (module docstring)."""
    scored = math.prod(levels(step, top) for step, top in HEADLINE.values())
    for key in schema.public_breakdowns:
        scored *= levels(GROUP_STEP, 1.0) ** (groups or {}).get(key, 0)
    errors = len(ERROR_CLASSES) * (1 + (scored if schema.scores_on_error else 0))
    return math.log2(len(FAILED_BUCKETS) * (scored + errors))


def public_scores(scores: Mapping[str, Any], schema: ReleaseSchema) -> dict[str, Any]:
    """The public card's ``scores``: the card's keys, every value the method moves withheld (null) but
    the headline at RESULT.json's precision, the quality tier of the released composite, the counts,
    the composite's interval widened outward to the same grid, and the public breakdowns only."""
    out: dict[str, Any] = {key: None for key in scores if not key.startswith("by_")}
    out |= {key: scores[key] for key in COUNTS if key in scores} | headline(scores)
    out["quality_tier"] = quality_tier(out["composite"])
    cis = scores.get("confidence_intervals")
    if isinstance(cis, Mapping):
        step, top = HEADLINE["composite"]
        interval = cis.get("composite") or {}
        out["confidence_intervals"] = {k: cis[k] for k in ("method", "n_resamples", "alpha", "seed") if k in cis}
        if interval:
            out["confidence_intervals"]["composite"] = {"ci_lower": quantise(interval.get("ci_lower"), step, top),
                                                        "ci_upper": _ceil(interval.get("ci_upper"), step, top)}
    for key, groups in _public_groups(scores, schema).items():
        out[key] = {}
        for name, g in groups.items():
            value = quantise(g.get(GROUP_METRIC), GROUP_STEP, 1.0)
            out[key][name] = {**{k: None for k in g}, **{k: g[k] for k in COUNTS if k in g},
                              GROUP_METRIC: value, "quality_tier": quality_tier(value)}
    return out


def public_card_bits(schema: ReleaseSchema, entries: int, group_sizes: Mapping[str, Sequence[int]] | None = None
                     ) -> float:
    """What a public card (one per submission, made from two agreeing runs) can carry that a method
    moves: the headline, the composite's two interval ends, the failed-entry count (and each public
    group's composite and failed count), and the day of its time stamp (a method can delay its end by
    at most one run's wall time: one bit, crossing midnight or not)."""
    step, top = HEADLINE["composite"]
    count = math.prod(levels(s, t) for s, t in HEADLINE.values()) * levels(step, top) ** 2 * (entries + 1) * 2
    for key in schema.public_breakdowns:
        for size in (group_sizes or {}).get(key, ()):
            count *= levels(GROUP_STEP, 1.0) * (size + 1)
    return math.log2(count)


def released_text(document: dict[str, Any], schema: ReleaseSchema | None = None) -> str:
    """The exact text written to RESULT.json (the leak check reads this, not the dict); checked against
    the schema again, since the audit line's hash is added after the document was built."""
    check_release(document, schema or ReleaseSchema())
    return json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def release_schema(public_breakdowns: Iterable[str], preflight: bool = False) -> ReleaseSchema:
    """The schema for a governance policy's public breakdowns (``Policy.public_breakdowns``)."""
    return ReleaseSchema(tuple(public_breakdowns), scores_on_error=preflight)

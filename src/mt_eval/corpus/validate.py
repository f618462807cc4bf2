"""``mt-eval validate``: what a corpus contains and where it falls short of the spec.

Loading already rejects anything malformed; this reports the *shape* of a valid corpus against
Benchmark Spec §11.1 (segment minimums, difficulty and register spread, provenance on every
entry). Shortfalls are warnings, not errors: a public development corpus legitimately has no
gold_standard segment, and the author should see the gap, not be blocked by it.

"Missing" means the field was not written in the file. The model fills defaults (segment
development, difficulty 3, provenance corpus) so evaluation can proceed, but counting a default
as if the author had chosen it would let an unannotated corpus pass §11.1 by accident.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TypeVar

from mt_eval.corpus.models import Dataset, Provenance, Register, Segment
from mt_eval.corpus.variant_class import check_variant_classes

# Benchmark Spec §11.1 (and §2.3) minimum entries per segment; held_out is not required there.
SEGMENT_MINIMUMS: dict[Segment, int] = {
    Segment.GOLD_STANDARD: 50,
    Segment.DEVELOPMENT: 30,
    Segment.DIAGNOSTIC: 10,
}
# §2.3's minimum for held_out: not required (§11.1; the segment is reserved), but one that exists is this big
HELD_OUT_MINIMUM = 10
MIN_DIFFICULTY_TIERS = 3
MIN_REGISTERS = 2
NOT_GIVEN = "(not given)"


@dataclass
class CorpusSummary:
    """Counts and §11.1 warnings for one dataset (or a selection of one)."""

    dataset_id: str
    version: str
    language_pair: str
    source_language: str
    target_language: str
    sha256: str
    path: str
    entry_count: int
    by_segment: dict[str, int] = field(default_factory=dict)
    by_difficulty: dict[int, int] = field(default_factory=dict)
    by_provenance: dict[str, int] = field(default_factory=dict)
    by_register: dict[str, int] = field(default_factory=dict)
    missing_segment: int = 0
    missing_difficulty: int = 0
    missing_provenance: int = 0
    warnings: list[str] = field(default_factory=list)


K = TypeVar("K", str, int)


def _count(keys: list[K], order: list[K]) -> dict[K, int]:
    counts = Counter(keys)
    return {k: counts.get(k, 0) for k in order}


def summarize(dataset: Dataset) -> CorpusSummary:
    """Count entries by segment, difficulty, provenance and register and check §11.1; an unknown
    ``variant_class`` is refused (one line): scoring would otherwise apply no rule where the author meant one."""
    entries = dataset.entries
    check_variant_classes(entries, dataset.path)
    info = dataset.info
    given = [e.model_fields_set for e in entries]
    summary = CorpusSummary(
        dataset_id=info.id,
        version=info.version,
        language_pair=info.language_pair,
        source_language=info.source_language,
        target_language=info.target_language,
        sha256=dataset.sha256,
        path=dataset.path,
        entry_count=len(entries),
        by_segment=_count([e.segment.value for e in entries], [s.value for s in Segment]),
        by_difficulty=_count([e.difficulty for e in entries], [1, 2, 3, 4, 5]),
        by_provenance=_count(
            [e.provenance.value if "provenance" in f else NOT_GIVEN for e, f in zip(entries, given, strict=True)],
            [p.value for p in Provenance] + [NOT_GIVEN],
        ),
        by_register=_count(
            [e.register.value if e.register is not None else NOT_GIVEN for e in entries],
            [r.value for r in Register] + [NOT_GIVEN],
        ),
        missing_segment=sum("segment" not in f for f in given),
        missing_difficulty=sum("difficulty" not in f for f in given),
        missing_provenance=sum("provenance" not in f for f in given),
    )
    summary.warnings = _warnings(summary)
    return summary


def _n(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def _warnings(s: CorpusSummary) -> list[str]:
    out: list[str] = []
    for segment, minimum in SEGMENT_MINIMUMS.items():
        have = s.by_segment.get(segment.value, 0)
        if have < minimum:
            out.append(
                f"segment {segment.value} has {_n(have, 'entry', 'entries')}; "
                f"Benchmark Spec §11.1 asks for at least {minimum}"
            )
    held_out = s.by_segment.get(Segment.HELD_OUT.value, 0)
    if 0 < held_out < HELD_OUT_MINIMUM:
        out.append(f"segment held_out has {_n(held_out, 'entry', 'entries')}; Benchmark Spec §2.3 asks for at least "
                   f"{HELD_OUT_MINIMUM} (or none: it is reserved for future evaluation)")
    tiers = [d for d, n in s.by_difficulty.items() if n]
    if len(tiers) < MIN_DIFFICULTY_TIERS:
        out.append(
            f"entries cover {_n(len(tiers), 'difficulty tier', 'difficulty tiers')} "
            f"({', '.join(map(str, tiers)) or 'none'}); §11.1 asks for at least {MIN_DIFFICULTY_TIERS} of 5"
        )
    registers = [r for r, n in s.by_register.items() if n and r != NOT_GIVEN]
    if len(registers) < MIN_REGISTERS:
        out.append(
            f"entries use {_n(len(registers), 'register', 'registers')} ({', '.join(registers) or 'none'}); "
            f"§11.1 asks for at least {MIN_REGISTERS}"
        )
    if s.missing_provenance:
        out.append(
            f"{s.missing_provenance} of {_n(s.entry_count, 'entry', 'entries')} "
            f"{'has' if s.missing_provenance == 1 else 'have'} no provenance; "
            "§11.1 asks for provenance on every entry"
        )
    if s.missing_segment:
        out.append(
            f"{_n(s.missing_segment, 'entry has', 'entries have')} no segment and count"
            f"{'s' if s.missing_segment == 1 else ''} as development"
        )
    if s.missing_difficulty:
        out.append(
            f"{_n(s.missing_difficulty, 'entry has', 'entries have')} no difficulty and count"
            f"{'s' if s.missing_difficulty == 1 else ''} as tier 3"
        )
    return out

"""Choosing a subset of a corpus from the command line (``--segment``, ``--ids``, ``--difficulty``).

Syntax: ``--ids 1-50,77`` (comma-separated ids and inclusive ranges), ``--difficulty 2-4`` or
``--difficulty 1,5``, ``--segment development`` or ``--segment development,diagnostic``.
Filters combine with AND, corpus order is kept.

The selected dataset keeps the SHA-256 of the *whole* file: the hash identifies the data the
ids refer to, and the run card records which entries were evaluated separately.
Ids that the corpus lacks are ignored (``--ids 1-100`` on a 60-entry file is natural), but a
selection that leaves nothing is an error, since a run over zero entries has no scores.
"""

from __future__ import annotations

import re

from mt_eval.corpus.models import Dataset, Segment
from mt_eval.errors import UserError

# Guards against "--ids 1-999999999999" allocating a set the size of memory.
MAX_SELECTED = 10_000_000
_RANGE = re.compile(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?")


def parse_int_range(text: str, *, option: str = "--difficulty") -> set[int]:
    """Parse one integer or one inclusive range ``a-b``."""
    return _parse_range(text, option, "expected a number or a range like 2-4")


def _parse_range(text: str, option: str, hint: str) -> set[int]:
    match = _RANGE.fullmatch(text)
    if match is None:
        raise UserError(f"{option}: invalid value {text.strip()!r}", hint=hint)
    low = int(match.group(1))
    high = int(match.group(2)) if match.group(2) is not None else low
    if high < low:
        raise UserError(f"{option}: range {low}-{high} is reversed", hint=f"write {high}-{low}")
    if high - low + 1 > MAX_SELECTED:
        raise UserError(f"{option}: range {low}-{high} is too large (over {MAX_SELECTED:,} values)")
    return set(range(low, high + 1))


def parse_id_ranges(text: str, *, option: str = "--ids") -> set[int]:
    """Parse a comma-separated list of integers and inclusive ranges, e.g. ``1-50,77``."""
    if not text.strip():
        raise UserError(f"{option}: empty value", hint="expected e.g. 1-50,77")
    selected: set[int] = set()
    for part in text.split(","):
        if not part.strip():
            raise UserError(f"{option}: empty item in {text.strip()!r}", hint="expected e.g. 1-50,77")
        selected |= _parse_range(part, option, "expected e.g. 1-50,77")
        if len(selected) > MAX_SELECTED:
            raise UserError(f"{option}: selects over {MAX_SELECTED:,} values")
    return selected


def _parse_segments(text: str) -> set[Segment]:
    allowed = [s.value for s in Segment]
    chosen: set[Segment] = set()
    for part in text.split(","):
        name = part.strip()
        if name not in allowed:
            raise UserError(f"--segment: unknown segment {name!r} (allowed: {', '.join(allowed)})")
        chosen.add(Segment(name))
    return chosen


def select_entries(
    dataset: Dataset,
    *,
    segment: str | None = None,
    ids: str | None = None,
    difficulty: str | None = None,
) -> Dataset:
    """Apply the CLI filters; syntax errors name the option, an empty result is an error."""
    entries = dataset.entries
    applied: list[str] = []
    if segment is not None:
        segments = _parse_segments(segment)
        entries = [e for e in entries if e.segment in segments]
        applied.append(f"--segment {segment}")
    if ids is not None:
        wanted = parse_id_ranges(ids, option="--ids")
        entries = [e for e in entries if e.id in wanted]
        applied.append(f"--ids {ids}")
    if difficulty is not None:
        levels = parse_id_ranges(difficulty, option="--difficulty")
        outside = sorted(x for x in levels if not 1 <= x <= 5)
        if outside:
            raise UserError(f"--difficulty: {outside[0]} is out of range 1-5")
        entries = [e for e in entries if e.difficulty in levels]
        applied.append(f"--difficulty {difficulty}")
    if not entries:
        raise UserError(
            f"no entries match {' '.join(applied)}",
            file=dataset.path or None,
            hint=f"the corpus has {len(dataset.entries)} entries",
        )
    return dataset.model_copy(update={"entries": entries})

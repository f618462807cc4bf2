"""Reviewer conduct: how a reviewer rated, beside what (``quality`` tests the controls). Issue 21: three
scripted accounts rated controls 0 and everything else 3 with one timing script and passed quality
control; nothing looked at the pattern. Each check below flags a reviewer, and a flagged reviewer is left
out like one who fails the control test (``ratings.reviewer_checks``): never counted by the gate.

* **straight-lining**: at least ``STRAIGHT_SHARE`` of a reviewer's ratings of real outputs are one value
  (over ``STRAIGHT_MIN`` or more). Machine translation is never that uniform over a stratified sample of
  a hundred entries; a person who finds it so has not read.
* **implausible speed**: the median time per item is below ``SPEED_FLOOR`` seconds: too fast to read a
  source and its translation. Time is the seconds the page measured, else the gaps between the server's
  (or the file's) time stamps; a reviewer with neither for most items is flagged as untimed.
* **identical timings / time stamps** within one reviewer: half or more of the items took the same
  hundredth of a second, or were stamped in the same second. A person's clock never repeats like that.
* **the same pattern as another account**: two reviewers of a campaign whose sorted timings match to
  ``TIMING_TOLERANCE`` on half the items, whose stamps fall within a second of each other for half the
  items, or whose ratings are identical on every one of ``SAME_RATINGS_MIN`` or more common items. The
  same script under two names, the sybil case; both are flagged.

What it cannot catch: a script that draws its ratings and timings from a person-like distribution, per
account. That is what the controls (indistinguishable by construction), the references withheld until
rating, and the gate's count of invited, distinct, verified identities are for (``standing``).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from itertools import combinations, pairwise
from typing import Protocol

STRAIGHT_SHARE = 0.9
STRAIGHT_MIN = 20
SPEED_FLOOR = 3.0  # seconds per item: reading a source sentence and one translation takes longer
TIMED_MIN = 10  # timing checks need this many timed items
SAME_SHARE = 0.5  # the share of items on which two clocks (or one clock) agree that flags them
TIMING_TOLERANCE = 0.01  # seconds: the page measures to the millisecond
STAMP_TOLERANCE = 1.0  # seconds between two accounts' stamps of the same item (or the same place)
SAME_RATINGS_MIN = 30
OUTPUT = "output"


class Rated(Protocol):
    """What the checks read of a rating (``ratings.RatingRow`` has it)."""

    @property
    def reviewer(self) -> str: ...
    @property
    def item_id(self) -> int: ...
    @property
    def kind(self) -> str: ...
    @property
    def value(self) -> int: ...
    @property
    def seconds(self) -> float | None: ...
    @property
    def rated_at(self) -> datetime | None: ...


def _epoch(moment: datetime) -> float:
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _durations(rows: Sequence[Rated]) -> list[float] | None:
    """Seconds per item: the measured ones when most items have them, else the gaps between consecutive
    time stamps; None when neither covers half the items."""
    seconds = [r.seconds for r in rows if r.seconds is not None]
    if len(seconds) * 2 >= len(rows):
        return seconds
    stamps = sorted(_epoch(r.rated_at) for r in rows if r.rated_at is not None)
    if len(stamps) * 2 >= len(rows) and len(stamps) > 1:
        return [b - a for a, b in pairwise(stamps)]
    return None


def _modal_share(values: Sequence[object]) -> tuple[object, float]:
    value, count = Counter(values).most_common(1)[0]
    return value, count / len(values)


def own_flags(rows: Sequence[Rated]) -> list[str]:
    """Flags from one reviewer's ratings alone."""
    flags = []
    outputs = [r.value for r in rows if r.kind == OUTPUT]
    if len(outputs) >= STRAIGHT_MIN:
        value, share = _modal_share(outputs)
        if share >= STRAIGHT_SHARE:
            flags.append(f"straight-lining: {share:.0%} of real outputs rated {value}")
    if len(rows) >= TIMED_MIN:
        durations = _durations(rows)
        if durations is None:
            flags.append("no timing recorded for most items")
        elif len(durations) >= TIMED_MIN:
            median = statistics.median(durations)
            if median < SPEED_FLOOR:
                flags.append(f"implausible speed: median {median:.1f} s per item (floor {SPEED_FLOOR:g} s)")
        seconds = [round(r.seconds, 2) for r in rows if r.seconds is not None]
        if len(seconds) >= TIMED_MIN:
            value, share = _modal_share(seconds)
            if share >= SAME_SHARE:
                flags.append(f"identical timings: {share:.0%} of items took exactly {value} s")
        stamps = [int(_epoch(r.rated_at)) for r in rows if r.rated_at is not None]
        if len(stamps) >= TIMED_MIN and _modal_share(stamps)[1] >= SAME_SHARE:
            flags.append("identical time stamps on most items")
    return flags


def _agree(a: Sequence[float], b: Sequence[float], tolerance: float) -> bool:
    """Whether ``a`` and ``b`` (paired) agree within ``tolerance`` on ``SAME_SHARE`` of at least
    ``TIMED_MIN`` pairs."""
    n = min(len(a), len(b))
    return n >= TIMED_MIN and sum(abs(x - y) <= tolerance for x, y in zip(a, b, strict=False)) >= SAME_SHARE * n


def pair_flags(first: Sequence[Rated], second: Sequence[Rated]) -> list[str]:
    """What two reviewers' ratings share that two people's never do (from the first's side)."""
    other = second[0].reviewer
    flags = []
    a = {r.item_id: r for r in first}
    b = {r.item_id: r for r in second}
    common = sorted(set(a) & set(b))
    timed = [i for i in common if a[i].seconds is not None and b[i].seconds is not None]
    # sorted: the same script replays its timings whatever order each account met the items in
    if _agree(sorted(a[i].seconds or 0.0 for i in timed), sorted(b[i].seconds or 0.0 for i in timed),
              TIMING_TOLERANCE):
        flags.append(f"timing pattern identical to {other}'s")
    stamped = [i for i in common if a[i].rated_at is not None and b[i].rated_at is not None]
    same_item = _agree([_epoch(a[i].rated_at) for i in stamped if a[i].rated_at],  # type: ignore[arg-type]
                       [_epoch(b[i].rated_at) for i in stamped if b[i].rated_at], STAMP_TOLERANCE)  # type: ignore[arg-type]
    same_place = _agree(sorted(_epoch(r.rated_at) for r in first if r.rated_at is not None),
                        sorted(_epoch(r.rated_at) for r in second if r.rated_at is not None), STAMP_TOLERANCE)
    if same_item or same_place:
        flags.append(f"rated at the same moments as {other}")
    if len(common) >= SAME_RATINGS_MIN and all(a[i].value == b[i].value for i in common):
        flags.append(f"identical ratings to {other}'s on all {len(common)} common items")
    return flags


def conduct_flags(rows: Sequence[Rated]) -> dict[str, list[str]]:
    """Every reviewer's flags over one campaign's ratings (empty list: nothing found)."""
    by_reviewer: dict[str, list[Rated]] = defaultdict(list)
    for r in rows:
        by_reviewer[r.reviewer].append(r)
    flags = {name: own_flags(rs) for name, rs in by_reviewer.items()}
    for x, y in combinations(sorted(by_reviewer), 2):
        flags[x] += pair_flags(by_reviewer[x], by_reviewer[y])
        flags[y] += pair_flags(by_reviewer[y], by_reviewer[x])
    return flags

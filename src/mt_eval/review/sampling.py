"""Which entries a review campaign shows, and in what blind order (Benchmark Spec §7.3, step 2).

The sample is stratified by difficulty tier and register: every (tier, register) stratum gets its share
of the sample in proportion to its size (largest remainders), after a floor of ``MIN_PER_TIER`` entries
per difficulty tier wherever the tier has that many, so a corpus that is mostly tier 3 still has every
tier reviewed. Inside a stratum, entries are drawn with ``random.Random`` seeded from the campaign seed
and the stratum, so the same seed and corpus always give the same sample, and adding a stratum does not
reshuffle the others.

The blind order of the outputs shown for one entry is a permutation seeded by (campaign seed, reviewer,
entry): it differs between entries and between reviewers, so position says nothing about the method.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_SIZE = 100
MIN_PER_TIER = 10


@dataclass(frozen=True)
class Candidate:
    """An entry that may be sampled: its id and the two axes of stratification."""

    entry_id: int
    difficulty: int
    register: str | None


def _rng(*parts: object) -> random.Random:
    """A generator seeded from ``parts`` through SHA-256 (stable across Python versions and processes)."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _apportion(total: int, sizes: dict[tuple[int, str], int]) -> dict[tuple[int, str], int]:
    """``total`` split over keys in proportion to ``sizes`` (largest remainders), never above a size."""
    quota = dict.fromkeys(sizes, 0)
    left = min(total, sum(sizes.values()))
    while left > 0:
        room = {k: s - quota[k] for k, s in sizes.items() if s > quota[k]}
        weight = sum(room.values())
        shares = {k: left * r / weight for k, r in room.items()}
        given = {k: min(room[k], int(v)) for k, v in shares.items()}
        if not sum(given.values()):  # all shares below one: hand out by largest remainder
            for k in sorted(shares, key=lambda k: (-shares[k], k))[:left]:
                given[k] = 1
        for k, v in given.items():
            quota[k] += v
        left -= sum(given.values())
    return quota


def stratified_sample(candidates: Sequence[Candidate], size: int = DEFAULT_SIZE, seed: int = 0,
                      min_per_tier: int = MIN_PER_TIER) -> list[int]:
    """Entry ids of a stratified sample of ``size`` (all of them when there are fewer), sorted."""
    strata: dict[tuple[int, str], list[int]] = defaultdict(list)
    for c in candidates:
        strata[(c.difficulty, c.register or "")].append(c.entry_id)
    sizes = {k: len(v) for k, v in strata.items()}
    if size >= sum(sizes.values()):
        return sorted(c.entry_id for c in candidates)
    tiers = sorted({tier for tier, _ in sizes})
    floor = min(min_per_tier, size // max(1, len(tiers)))
    quota = dict.fromkeys(sizes, 0)
    for tier in tiers:
        in_tier = {k: s for k, s in sizes.items() if k[0] == tier}
        for k, v in _apportion(min(floor, sum(in_tier.values())), in_tier).items():
            quota[k] = v
    rest = _apportion(size - sum(quota.values()), {k: sizes[k] - quota[k] for k in sizes})
    chosen: list[int] = []
    for key in sorted(strata):
        ids = sorted(strata[key])
        chosen += _rng(seed, "stratum", *key).sample(ids, quota[key] + rest[key])
    return sorted(chosen)


def blind_order(n: int, seed: int, reviewer: str, entry_id: int) -> list[int]:
    """A permutation of ``range(n)`` for one reviewer's view of one entry."""
    order = list(range(n))
    _rng(seed, "blind", reviewer, entry_id).shuffle(order)
    return order


def entry_order(entry_ids: Sequence[int], seed: int, reviewer: str) -> list[int]:
    """The order in which one reviewer meets the entries (each reviewer a different one)."""
    order = list(entry_ids)
    _rng(seed, "entries", reviewer).shuffle(order)
    return order

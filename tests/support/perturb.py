"""Adversarial outputs made from references, shared by the tests and the benchmarks (``support.perturb``);
``benchmarks/adversarial.py`` keeps the issue-22 table's own variants (numbers +3, per-line seeds).

These build what a gamer or a broken system would submit (word salad, typos, changed numbers, a flipped
negation, ordinary damage), to check that metrics score it badly; they are test data, not the domain's own
perturbations (``mt_eval.robustness.perturb`` is what ``robustness`` runs against a method). Every function is
deterministic (seeded), so a test and a benchmark built on one seed see the same outputs. The benchmarks import
it as the tests do: ``benchmarks/ntrex_common.py`` puts ``tests/`` on ``sys.path``.
"""

from __future__ import annotations

import random
import re

_NUMBER = re.compile(r"\d+")


def word_salad(lines: list[str], seed: int) -> list[str]:
    """Each line's own words in a random order (one generator over all lines): every word right, no sentence."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split()
        rng.shuffle(words)
        out.append(" ".join(words))
    return out


def typos(index: int, text: str) -> str:
    """Two adjacent interior letters swapped in one word of ten (at least one), seeded by ``index``; only
    lower-case words of 4+ letters, since a misspelt name is a name not preserved (the entity check's business)."""
    words = text.split()
    long = [k for k, w in enumerate(words) if len(w) >= 4 and w.isalpha() and w.islower()]
    rng = random.Random(index)
    for k in rng.sample(long, min(len(long), max(1, len(words) // 10))):
        w = words[k]
        j = rng.randrange(1, len(w) - 2)
        words[k] = w[:j] + w[j + 1] + w[j] + w[j + 2 :]
    return " ".join(words)


def bumped_numbers(text: str) -> str:
    """Every number one higher (7 → 8, 2019 → 2020): the smallest wrong number."""
    return _NUMBER.sub(lambda m: str(int(m.group()) + 1), text)


def flipped_negation(text: str) -> str:
    """The negation cue ``no`` (Spanish, Catalan) removed where the line has one, else inserted as second word."""
    words = text.split()
    if "no" in words:
        words.remove("no")
    else:
        words.insert(1, "no")
    return " ".join(words)


def degrade(index: int, line: str) -> str:
    """Four kinds of damage in rotation, so scores are realistic rather than 0 or 100."""
    words = line.split()
    kind = index % 4
    if kind == 0:
        words = [w for i, w in enumerate(words) if i % 3 != 2]
    elif kind == 1 and len(words) > 1:
        words[0], words[1] = words[1], words[0]
    elif kind == 2:
        words = words[:-1]
    return " ".join(words)

"""Critical-error flags on NTREX eng→spa and eng→cat: the references (which must not be flagged), outputs built
from them that must be (every number changed, a negation inserted or removed, names swapped between sentences,
an invented sentence appended, truncated to half), two character typos per line, and with ``--apertium`` the
Apertium eng→spa translation of every line.

Prints, per output class, the share of entries with any flag and each check's rate (``metrics.critical_checks``,
the same function the metric calls). Run: ``.venv/bin/python benchmarks/bench_critical.py [--apertium]
[--data DIR]``.
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from ntrex_common import DEFAULT_NTREX, SOURCE, read_lines, reference

from mt_eval.languages.card import language_card
from mt_eval.metrics.critical_checks import FLAGS, Pair, check_entry
from support.perturb import bumped_numbers, flipped_negation

PAIRS = {"spa": "es", "cat": "ca"}


def _typos(line: str, rng: random.Random) -> str:
    words = line.split()
    for _ in range(2):
        i = rng.randrange(len(words))
        w = words[i]
        if len(w) > 3:
            j = rng.randrange(1, len(w) - 2)
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


def classes(refs: list[str]) -> dict[str, tuple[list[int], Callable[[int], str]]]:
    """Output class -> (the lines it applies to, the output for line i)."""
    rng = random.Random(7)
    names = [[w for j, w in enumerate(r.split()) if j and w[:1].isupper()] for r in refs]
    pool = [w for ws in names for w in ws]
    every = list(range(len(refs)))
    return {
        "references": (every, lambda i: refs[i]),
        "numbers changed": ([i for i, r in enumerate(refs) if re.search(r"\d", r)],
                            lambda i: bumped_numbers(refs[i])),
        "negation flipped": (every, lambda i: flipped_negation(refs[i])),
        "names swapped": ([i for i, ws in enumerate(names) if ws], lambda i: " ".join(
            rng.choice(pool) if j and w[:1].isupper() else w for j, w in enumerate(refs[i].split()))),
        "sentence appended": (every, lambda i: refs[i] + " " + refs[(i + 300) % len(refs)]),
        "truncated": (every, lambda i: " ".join(refs[i].split()[: max(1, len(refs[i].split()) // 2)])),
        "two typos": (every, lambda i: _typos(refs[i], rng)),
    }


def report(label: str, rows: list[int], outputs: Callable[[int], str], src: list[str], refs: list[str],
           pair: Pair) -> None:
    found = [check_entry(src[i], outputs(i), refs[i], pair) for i in rows]
    rates = {c: sum(f.flagged(c) for f in found) / len(found) for c in FLAGS}
    detail = "  ".join(f"{c} {v:.3f}" for c, v in rates.items())
    print(f"  {label:18s} n={len(found):5d}  any {sum(f.any for f in found) / len(found):.3f}  {detail}")


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_NTREX, metavar="DIR")
    parser.add_argument("--apertium", action="store_true", help="also Apertium eng→spa on every line")
    args = parser.parse_args()
    src_all = read_lines(args.data / SOURCE)
    for iso3, code in PAIRS.items():
        refs = read_lines(args.data / reference(iso3))
        src = src_all[: len(refs)]
        pair = Pair(language_card(code), language_card("en"), True)
        print(f"eng→{iso3} ({len(refs)} lines)")
        for label, (rows, outputs) in classes(refs).items():
            report(label, rows, outputs, src, refs, pair)
        if args.apertium and iso3 == "spa":
            done = subprocess.run(["apertium", "-u", "eng-spa"], input="\n".join(src) + "\n", capture_output=True,
                                  text=True, check=True)
            apertium = [line.strip() for line in done.stdout.split("\n")[: len(src)]]
            report("Apertium", list(range(len(src))), apertium.__getitem__, src, refs, pair)
    return 0


if __name__ == "__main__":
    sys.exit(main())

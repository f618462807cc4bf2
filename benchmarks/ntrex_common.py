"""Shared by the NTREX benchmarks: where the data is, how it is read; hypotheses come from ``support.perturb``.

The data defaults to the repository's own copy (``tests/data/ntrex128``: the English source and
the five references the benchmarks use are there whole), so ``make bench`` runs on a fresh clone;
``--data DIR`` points a benchmark at another NTREX-128 checkout with the same file names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# the test helpers package (tests/support), as pytest's pythonpath: the adversarial outputs the benchmarks score
# (support.perturb) are the tests' own, one copy
if str(REPO / "tests") not in sys.path:
    sys.path.insert(0, str(REPO / "tests"))
DEFAULT_NTREX = REPO / "tests" / "data" / "ntrex128"
SOURCE = "newstest2019-src.eng.txt"


def reference(iso3: str) -> str:
    """The file name of one language's NTREX-128 reference (``spa`` -> ``newstest2019-ref.spa.txt``)."""
    return f"newstest2019-ref.{iso3}.txt"


def data_dir(doc: str | None, needs: list[str], argv: list[str] | None = None) -> Path:
    """The NTREX-128 folder from ``--data DIR`` (default: the repository's copy); ``doc`` is the
    benchmark's docstring, whose first line becomes the ``--help`` description.

    Every file in ``needs`` must be there: a benchmark on missing data is an error (exit 2 with the
    missing paths), never a silent skip, because a skipped benchmark reads like a passed one.
    """
    parser = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_NTREX, metavar="DIR",
                        help=f"NTREX-128 folder with {', '.join(needs)} (default: {DEFAULT_NTREX})")  # fmt: skip
    args = parser.parse_args(argv)
    missing = [str(args.data / name) for name in needs if not (args.data / name).is_file()]
    if missing:
        parser.error("NTREX-128 data not found: " + ", ".join(missing))
    return Path(args.data)


def read_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8").split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines

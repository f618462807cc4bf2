#!/usr/bin/env python3
"""Build ``examples/ntrex128-eng-spa-sovereign.json``: the demo corpus with secret segments, for the
README's sovereign walk-through (``mt-eval vault seal`` keeps gold_standard and held_out secret).

The 200 NTREX-128 entries of ``examples/ntrex128-eng-spa.json``, texts unchanged; only ``segment`` is
set: the first 50 entries ``gold_standard``, the next 20 ``held_out``; the other 130 keep their
``development``/``diagnostic`` segment and stay public (preflight runs on the development ones).

Run from the repository root::

    python examples/build_sovereign_corpus.py            # (re)write the corpus
    python examples/build_sovereign_corpus.py --check    # exit 1 if the checked-in file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE, OUT = HERE / "ntrex128-eng-spa.json", HERE / "ntrex128-eng-spa-sovereign.json"
GOLD, HELD_OUT = 50, 20
RULE = (f"gold_standard for the first {GOLD} entries, held_out for the next {HELD_OUT}; the rest keep the "
        "demo corpus's development/diagnostic segment (examples/build_sovereign_corpus.py)")


def build() -> str:
    data = json.loads(SOURCE.read_text(encoding="utf-8"))
    for i, entry in enumerate(data["entries"]):
        if i < GOLD + HELD_OUT:
            entry["segment"] = "gold_standard" if i < GOLD else "held_out"
    info = data["dataset"]
    info["id"] = "ntrex128-eng-spa-sovereign-demo"
    info["description"] = (f"{info['description']}; {GOLD} gold_standard and {HELD_OUT} held_out entries "
                           "for the sovereign walk-through")
    info["metadata_rules"] = {**info["metadata_rules"], "segment": RULE}
    return json.dumps(data, ensure_ascii=False, indent=2) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if the checked-in file differs from a fresh build")
    args = parser.parse_args(argv)
    text = build()
    if args.check:
        same = OUT.exists() and OUT.read_text(encoding="utf-8") == text
        print(f"{OUT.name}: {'up to date' if same else 'STALE: run examples/build_sovereign_corpus.py'}")
        return 0 if same else 1
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

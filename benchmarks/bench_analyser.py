"""Analyser throughput on NTREX Spanish references: mt-eval (cold and warm) beside raw lt-proc.

Prints words/second; the goal for warm (memoised) analysis is >= 50,000 words/s.
Run: ``.venv/bin/python benchmarks/bench_analyser.py [--data DIR]`` (``--data``: another NTREX-128
folder; default ``tests/data/ntrex128``, where the Spanish references are whole).
"""

from __future__ import annotations

import subprocess
import sys
import time

from ntrex_common import data_dir, reference

from mt_eval.analyzers.registry import open_analyser
from mt_eval.languages.card import language_card
from mt_eval.languages.words import words


def main() -> int:
    path = data_dir(__doc__, [reference("spa")]) / reference("spa")
    card = language_card("es")
    assert card.analyser
    ws = [w.text for line in path.read_text(encoding="utf-8").splitlines() for w in words(line, card)]
    analyser = open_analyser(card.analyser)
    t = time.perf_counter()
    analyser.analyse_many(ws)
    cold = len(ws) / (time.perf_counter() - t)
    t = time.perf_counter()
    for _ in range(5):
        analyser.analyse_many(ws)
    warm = 5 * len(ws) / (time.perf_counter() - t)
    analyser.close()
    t = time.perf_counter()
    subprocess.run(["lt-proc", card.analyser.split(":", 1)[1]], input="\n".join(ws).encode(), capture_output=True,
                   check=True)
    raw = len(ws) / (time.perf_counter() - t)
    print(f"{len(ws)} words: mt-eval cold {cold:,.0f} w/s, warm {warm:,.0f} w/s; raw lt-proc {raw:,.0f} w/s; "
          f"warm/raw {warm / raw:.1f}x (goal warm >= 50,000 w/s: {'met' if warm >= 50_000 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Analyser throughput on NTREX Spanish references: mt-eval (cold and warm) beside raw lt-proc.

Prints words/second; the goal for warm (memoised) analysis is >= 50,000 words/s.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from mt_eval.analyzers.base import open_analyser
from mt_eval.languages.card import language_card
from mt_eval.languages.words import words

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ntrex128" / "newstest2019-ref.spa.txt"


def main() -> int:
    card = language_card("es")
    assert card.analyser
    ws = [w.text for line in DATA.read_text(encoding="utf-8").splitlines() for w in words(line, card)]
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

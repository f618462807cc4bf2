"""Engine concurrency: 1,000 entries, 100 ms per request, --concurrency 16, vs the ideal N/C·latency.

Ideal = 1000 / 16 × 0.100 s = 6.25 s (a perfect pipe: 16 requests always in flight, zero
overhead). Measured = the engine's wall time over real HTTP to the fake OpenAI server in a separate
process. Prints ``ratio = measured / ideal`` (goal ≤ 1.15). Exits 1 only if a translation is wrong.
"""

from __future__ import annotations

import sys

from llm_common import dataset, external_server, llm, run, translate_text

N, C, LATENCY = 1000, 16, 0.100


def main() -> int:
    ds = dataset(N)
    with external_server(LATENCY) as url:
        run(llm(url, concurrency=C), dataset(C))  # warm-up: interpreter, imports, connections
        out, wall = run(llm(url, concurrency=C), ds)
    ideal = N / C * LATENCY
    wrong = sum(t.text != translate_text(e.source) for t, e in zip(out, ds.entries, strict=True))
    print(f"concurrency: {N} entries, {LATENCY * 1000:.0f} ms latency, --concurrency {C}")
    print(f"  ideal N/C·latency {ideal:.2f} s   measured {wall:.2f} s   ratio = {wall / ideal:.3f} (goal ≤ 1.15)")
    print(f"  wrong translations: {wrong}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

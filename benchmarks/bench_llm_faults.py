"""Fault tolerance: 20% of requests fail (429 + Retry-After, 500, timeouts), vs the same run without.

Peer: the identical run against a server that never fails. Prints the share of entries translated
(goal 100%), the cache rows that hold anything but a good answer (goal 0), the retries, and
``ratio = wall time with faults / without`` for context (timeouts cost their timeout).
Exit 1 if an entry is missing or wrong, or the cache holds an error.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from llm_common import FakeOpenAI, Fault, Translator, dataset, llm, run, translate_text

from mt_eval.providers.cache import ResponseCache

N, C, LATENCY, TIMEOUT = 500, 16, 0.02, 0.5


def plan(n: int) -> Fault | None:
    kinds = [Fault(status=429, retry_after="0.2"), Fault(status=500), Fault(delay=TIMEOUT * 2)]
    return kinds[(n // 5) % 3] if n % 5 == 0 else None


def main() -> int:
    ds = dataset(N)
    walls, failures = {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for faulty in (False, True):
            cache = Path(tmp) / f"cache-{faulty}.sqlite"
            with FakeOpenAI(responder=Translator(), base_delay=LATENCY, fault_for=plan if faulty else None) as server:
                method = llm(server.base_url, concurrency=C, timeout_s=TIMEOUT, max_retries=10, cache_path=str(cache))
                out, walls[faulty] = run(method, ds)
                failed = sum(r.status != 200 for r in server.requests)
            good = sum(t.error is None and t.text == translate_text(e.source)
                       for t, e in zip(out, ds.entries, strict=True))
            rows = ResponseCache(cache).contents()
            bad_rows = sum("injected" in c or not c.strip() for c in rows) + abs(len(rows) - N)
            failures += (N - good) + bad_rows
            label = "20% faults" if faulty else "no faults "
            print(f"  {label}: {len(server.requests)} requests ({failed} failed, {method.stats.retries} retries), "
                  f"translated {good}/{N} = {good / N:.0%}, bad cache rows {bad_rows}, {walls[faulty]:.2f} s")
    print(f"faults: {N} entries, --concurrency {C}, 1 in 5 requests fails (429 Retry-After 0.2 s / 500 / timeout)")
    print(f"  ratio = wall with faults / without = {walls[True] / walls[False]:.2f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Verified batching: an 8,000-token coaching prompt, 400 entries, --batch-size 25 vs --batch-size 1.

Peer: the same run with --batch-size 1 (the coaching prompt is paid once per entry). Prints
``ratio = prompt tokens (batch 25) / prompt tokens (batch 1)`` (goal ≤ 1/15 = 0.067), as counted by
the server. A third run has the server mis-number 5% of batched answers (a neighbour's id, or an
id the batch does not have); every such entry must be re-requested alone (each alone request pays
the coaching prompt again, so that run's ratio is printed too) and zero misaligned results remain.
Exit 1 if any result is misaligned or a mis-numbered entry was not re-requested alone.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from llm_common import FakeOpenAI, Translator, dataset, llm, run, translate_text

from mt_eval.corpus.models import Dataset

N, K, COACHING_WORDS = 400, 25, 8000


def measure(ds: Dataset, coaching: Path, k: int, misnumber: float) -> tuple[int, int, Translator, int]:
    """(prompt tokens the server received, requests, translator, misaligned results)."""
    translator = Translator(misnumber_rate=misnumber)
    translator.register([(e.id, e.source) for e in ds.entries])
    with FakeOpenAI(responder=translator) as server:
        out, wall = run(llm(server.base_url, batch_size=k, concurrency=16, coaching_file=str(coaching)), ds)
        tokens = sum(sum(len(str(m["content"]).split()) for m in r.body["messages"]) for r in server.requests)
    misaligned = sum(t.text != translate_text(e.source) or t.error is not None
                     for t, e in zip(out, ds.entries, strict=True))
    label = f"--batch-size {k:>2}" + (f", {misnumber:.0%} mis-numbered" if misnumber else "")
    print(f"  {label}: {len(server.requests)} requests, {tokens:,} prompt tokens, {wall:.2f} s, "
          f"misaligned {misaligned}")
    return tokens, len(server.requests), translator, misaligned


def main() -> int:
    ds = dataset(N)
    with tempfile.TemporaryDirectory() as tmp:
        coaching = Path(tmp) / "coaching.txt"
        coaching.write_text(" ".join(f"rule{i}" for i in range(COACHING_WORDS)), encoding="utf-8")
        single, _, _, bad1 = measure(ds, coaching, 1, 0.0)
        batched, _, _, bad2 = measure(ds, coaching, K, 0.0)
        faulty, _, translator, bad3 = measure(ds, coaching, K, 0.05)
    wrong = translator.misnumbered
    not_alone = len(wrong - set(translator.single_ids))
    print(f"batching: {N} entries, {COACHING_WORDS:,}-token coaching prompt, peer --batch-size 1")
    print(f"  ratio = prompt tokens batch {K} / batch 1 = {batched / single:.4f} = 1/{single / batched:.1f}"
          " (goal ≤ 1/15)")
    print(f"  with 5% mis-numbered: {len(wrong)} answers mis-numbered, {len(wrong) - not_alone} re-requested alone, "
          f"misaligned results {bad3}; ratio then = 1/{single / faulty:.1f}")
    return 1 if bad1 or bad2 or bad3 or not_alone or batched * 15 > single else 0


if __name__ == "__main__":
    sys.exit(main())

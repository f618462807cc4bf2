"""A notebook as a script: mt_eval called from inside a running event loop, as a Jupyter cell is.

    python examples/notebook.py        # needs Apertium eng-spa (make demo); writes nothing

It scores in-memory lists (NTREX-128 references, perturbed) and Apertium's translations of a few NTREX
entries, and checks chrF++, BLEU and TER against sacrebleu's own corpus scores on the same strings.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sacrebleu.metrics import BLEU, CHRF, TER

import mt_eval

CORPUS = Path(__file__).with_name("ntrex128-eng-spa.json")
SACREBLEU = {"chrf_plus_plus": CHRF(word_order=2), "bleu": BLEU(), "ter": TER()}


def check_against_sacrebleu(result: mt_eval.EvalResult, hyps: list[str], refs: list[str]) -> None:
    for metric, scorer in SACREBLEU.items():
        theirs = scorer.corpus_score(hyps, [refs]).score
        ours = result[metric]
        assert ours is not None and abs(ours - theirs) < 1e-9, (metric, ours, theirs)
        print(f"  {metric:<15} {ours:8.4f}  equal to sacrebleu ({theirs:.4f})")


async def main() -> None:
    asyncio.get_running_loop()  # we are inside a running loop, where asyncio.run() would raise
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:20]
    sources = [e["source"] for e in entries]
    refs = [e["reference"] for e in entries]

    # 1. lists of strings, as sacrebleu takes them: the references with every fourth word dropped
    hyps = [" ".join(w for i, w in enumerate(r.split()) if i % 4 != 3) for r in refs]
    dropped = mt_eval.score(hyps, refs, sources=sources, lang="en-es", system="every-4th-word-dropped")
    print(dropped.summary())
    check_against_sacrebleu(dropped, hyps, refs)

    # 2. a method by its spec on five corpus entries: a plain call, safe in this loop
    apertium = mt_eval.evaluate(CORPUS, "apertium:eng-spa", ids="1-5")
    outputs = [e.hypothesis for e in apertium.entries]
    print(apertium)
    check_against_sacrebleu(apertium, outputs, refs[:5])

    # 3. the coroutine, awaited: the same outputs and scores
    again = await mt_eval.evaluate_async(CORPUS, "apertium:eng-spa", ids="1-5")
    assert [e.hypothesis for e in again.entries] == outputs and again["chrf_plus_plus"] == apertium["chrf_plus_plus"]

    # 4. two systems on the same entries, compared with a paired bootstrap
    truncated = mt_eval.score([" ".join(r.split()[:4]) for r in refs], refs, sources=sources, lang="en-es",
                              system="first-4-words")
    row = mt_eval.compare([dropped, truncated], metrics=["chrf_plus_plus"]).paired[0]
    print(f"  {row.system} vs {row.baseline}: chrF++ {row.delta:+.2f}, {row.verdict}, p = {row.p_adjusted:.4f}")
    assert row.verdict == "worse" and row.significant
    print("notebook: every figure equal to sacrebleu")


if __name__ == "__main__":
    asyncio.run(main())

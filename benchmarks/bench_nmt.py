"""nmt:DIR throughput on CPU (entries/s), beside Apertium and the lexicon floor on the same NTREX entries.

A tiny NLLB-style checkpoint (tests/support/nmt.py: M2M100 architecture, d_model 16, one layer each side)
measures the method's own overhead (tokenising, batching, beam search bookkeeping, the worker thread); a
real NLLB-200-distilled-600M is about 40 000 times the weights, so its throughput is the model's, not ours.
The peers run in the same process on the same entries, so the ratios hold on any machine.

    python benchmarks/bench_nmt.py [--entries 200] [--batch-size 16]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from mt_eval.languages.card import language_card  # noqa: E402
from mt_eval.methods.base import Method, TranslationRequest  # noqa: E402
from mt_eval.methods.lexicon import LexiconMethod  # noqa: E402
from mt_eval.methods.nmt import NMTMethod, NMTSettings  # noqa: E402
from support.nmt import build_tiny_nllb  # noqa: E402


def entries_per_second(method: Method, requests: list[TranslationRequest]) -> float:
    async def go() -> float:
        await method.open()
        try:
            started = time.perf_counter()
            out = await method.translate(requests)
            elapsed = time.perf_counter() - started
        finally:
            await method.close()
        assert all(t.error is None for t in out), [t.error for t in out if t.error][:3]
        return len(requests) / elapsed

    return asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    lines = (REPO / "tests" / "data" / "ntrex128" / "newstest2019-src.eng.txt").read_text(encoding="utf-8")
    sources = lines.splitlines()[: args.entries]
    requests = [TranslationRequest(i, s, "en", "es") for i, s in enumerate(sources, 1)]
    tmp = Path(tempfile.mkdtemp(prefix="bench-nmt-"))
    try:
        checkpoint = build_tiny_nllb(tmp / "tiny-nllb", max_length=64, num_beams=4)
        en, es = language_card("en"), language_card("es")
        rates: dict[str, float] = {}
        for batch in sorted({1, args.batch_size}):
            nmt = NMTMethod(str(checkpoint), en, es, NMTSettings(batch_size=batch))
            rates[f"nmt (tiny NLLB, batch {batch}, beams 4, <= 64 tokens)"] = entries_per_second(nmt, requests)
        (tmp / "en-es.tsv").write_text("the\tel\nof\tde\nand\ty\n", encoding="utf-8")
        rates["lexicon (word by word)"] = entries_per_second(LexiconMethod(str(tmp / "en-es.tsv")), requests)
        if shutil.which("apertium"):
            from mt_eval.methods.apertium import ApertiumMethod

            rates["apertium:eng-spa"] = entries_per_second(ApertiumMethod("eng-spa"), requests)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    peer = "apertium:eng-spa" if "apertium:eng-spa" in rates else "lexicon (word by word)"
    print(f"{len(requests)} NTREX-128 entries, CPU; ratio against {peer}")
    for name, rate in rates.items():
        print(f"  {name:<48} {rate:10.1f} entries/s  {rate / rates[peer]:8.3f}x")


if __name__ == "__main__":
    main()

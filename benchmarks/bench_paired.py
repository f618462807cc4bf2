"""Paired comparison of two ~10,000-entry runs: ``mt-eval compare`` against ``sacrebleu --paired-bs``.

Workload: NTREX-128 references for Spanish, German, French, Portuguese and Italian concatenated
into one 9,985-entry corpus (declared as target ``es``: all five use BLEU's 13a tokenizer, so the
statistics are what each language would give on its own). System A is a deterministic
degradation of the references; B equals A except on every 100th line, where a different third of
the words is dropped: a close pair, so the p-values are informative rather than at their floor.
Both cards are made with the real ``mt-eval score`` command, which stores each run's per-entry
statistics beside its card (``<card>.stats.npz``; setup, not timed).

Timed as a user runs them, each a fresh process (interpreter start and imports included), the two
interleaved ``--repeats`` times so that load on a shared machine hits both alike:

* peer   ``sacrebleu REF -i A B -m chrf --paired-bs --paired-bs-n 1000``: chrF alone (extracting
         its statistics for both systems, then the test);
* ours   ``mt-eval compare card_a.json card_b.json --bootstrap 1000``: every metric on the cards
         (exact match, chrF++, chrF, BLEU, TER, the language-aware ones with a value) and the
         composite, each system's CIs and every paired test with Holm, rendered as tables. The
         statistics come from the sidecars; no metric runs. Goal: ours ≤ 0.10 × peer.

The ratio is of the fastest runs (as ``timeit`` reports: other processes on a shared machine only
ever add time); medians and CPU seconds (user + system of the process) are printed beside it.

For context, once: the same command with the sidecars moved away, which rebuilds every metric's
statistics from ``results[]`` (the path older cards take). Exit 1 if ``compare`` fell back while
the sidecars were there, or if its chrF p-value differs from sacrebleu's by more than one resample.
Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_paired.py [--data DIR] [--repeats N]``.
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ntrex_common import SOURCE, data_dir, read_lines, reference

from support.perturb import degrade

LANGS = ["spa", "deu", "fra", "por", "ita"]
N_RESAMPLES = 1000
GOAL = 0.10
MT_EVAL = [sys.executable, "-m", "mt_eval"]  # what the ``mt-eval`` script runs, in this interpreter


def drop_third(line: str, offset: int) -> str:
    return " ".join(w for i, w in enumerate(line.split()) if i % 3 != offset)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prepare(ntrex: Path, tmp: Path) -> dict[str, Path]:
    """The concatenated corpus, two close systems, and their cards (with statistics sidecars)."""
    src_lines = read_lines(ntrex / SOURCE)
    refs = [line for lang in LANGS for line in read_lines(ntrex / reference(lang))]
    a = [degrade(i, r) for i, r in enumerate(refs)]
    b = [drop_third(r, 1) if i % 100 == 0 else h for i, (r, h) in enumerate(zip(refs, a, strict=True))]
    paths = {"src": write(tmp / "src.en", src_lines * len(LANGS)), "ref": write(tmp / "ref.txt", refs),
             "a": write(tmp / "a.txt", a), "b": write(tmp / "b.txt", b)}  # fmt: skip
    procs = []
    for name in ("a", "b"):  # both cards at once: setup only, two cores
        paths[f"card_{name}"] = tmp / f"card_{name}.json"
        cmd = [*MT_EVAL, "score", "--source-file", str(paths["src"]), "--reference-file", str(paths["ref"]),
               "--source-lang", "en", "--target-lang", "es", "--predictions", str(paths[name]),
               "--condition", name, "--runs-dir", str(tmp / "runs"), "--out", str(paths[f"card_{name}"])]  # fmt: skip
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"mt-eval score failed: {err[-2000:]}")
    for name in ("a", "b"):
        if not paths[f"card_{name}"].with_suffix(".stats.npz").is_file():
            raise SystemExit(f"mt-eval score wrote no statistics sidecar beside {paths[f'card_{name}']}")
    return paths


def timed(cmd: list[str]) -> tuple[float, float, str, str]:
    """(wall seconds, CPU seconds of the child, stdout, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return elapsed, cpu, done.stdout, done.stderr


def peer_cmd(paths: dict[str, Path]) -> list[str]:
    """sacrebleu's paired bootstrap on chrF. ``-f text``: its JSON output fails on paired results
    (float32 is not JSON serialisable in sacrebleu 2.6)."""
    return [sys.executable, "-m", "sacrebleu", str(paths["ref"]), "-i", str(paths["a"]), str(paths["b"]),
            "-m", "chrf", "--paired-bs", "--paired-bs-n", str(N_RESAMPLES), "-f", "text", "-w", "4"]  # fmt: skip


def ours_cmd(paths: dict[str, Path], *extra: str) -> list[str]:
    return [*MT_EVAL, "compare", str(paths["card_a"]), str(paths["card_b"]), "--bootstrap", str(N_RESAMPLES), *extra]


def peer_p(out: str) -> float:
    return float(re.findall(r"\(p = ([0-9.]+)\)", out)[0])


def main() -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--repeats", type=int, default=5)
    known, rest = parser.parse_known_args()
    ntrex = data_dir(__doc__, [SOURCE, *(reference(lang) for lang in LANGS)], rest)
    with tempfile.TemporaryDirectory() as tmp:
        paths = prepare(ntrex, Path(tmp))
        n = len(read_lines(paths["ref"]))
        peer_t: list[tuple[float, float]] = []
        ours_t: list[tuple[float, float]] = []
        fallbacks: list[str] = []
        for _ in range(max(1, known.repeats)):  # interleaved: the same load for both sides
            wall, cpu, out, _ = timed(peer_cmd(paths))
            peer_t.append((wall, cpu))
            p_peer = peer_p(out)
            wall, cpu, _, err = timed(ours_cmd(paths))
            ours_t.append((wall, cpu))
            fallbacks += [line for line in err.splitlines() if "warning" in line]
        _, _, out, _ = timed(ours_cmd(paths, "--json"))  # the numbers, not timed
        result = json.loads(out)
        for name in ("a", "b"):  # the path an older card takes, for context
            card = paths[f"card_{name}"]
            card.with_suffix(".stats.npz").rename(card.with_suffix(".moved"))
        t_rebuild, _, _, err_rebuild = timed(ours_cmd(paths))
    chrf = next(r for r in result["paired"] if r["metric"] == "chrf")
    metrics = [m["id"] for m in result["metrics"]]
    peer, ours = min(w for w, _ in peer_t), min(w for w, _ in ours_t)
    ratio = ours / peer
    print(f"entries: {n} per system, 2 systems, {N_RESAMPLES} resamples, {len(ours_t)} interleaved runs each")
    print(f"metrics compared ({len(metrics)}): {', '.join(metrics)}")
    print(f"{'':34s} {'fastest':>8s} {'median':>8s} {'CPU min':>8s}   runs (wall s)")
    for label, runs in (("sacrebleu --paired-bs, chrF only", peer_t), ("mt-eval compare, every metric", ours_t)):
        walls = [w for w, _ in runs]
        print(f"{label:34s} {min(walls):7.3f}s {statistics.median(walls):7.3f}s {min(c for _, c in runs):7.3f}s   "
              f"{_runs(walls)}")  # fmt: skip
    median_ratio = statistics.median(w for w, _ in ours_t) / statistics.median(w for w, _ in peer_t)
    cpu_ratio = min(c for _, c in ours_t) / min(c for _, c in peer_t)
    print(f"ratio = ours/sacrebleu = {ratio:.3f} (fastest runs; goal <= {GOAL:.2f}: "
          f"{'met' if ratio <= GOAL else 'NOT met'}); medians {median_ratio:.3f}, CPU {cpu_ratio:.3f}")
    print(f"context: mt-eval compare without the sidecars (rebuilding every metric from results[]): "
          f"{t_rebuild:7.3f} s = {t_rebuild / peer:.2f}x sacrebleu; it warned: {'warning' in err_rebuild}")  # fmt: skip
    print(f"chrF p-value: mt-eval {chrf['p_value']:.4f}, sacrebleu {p_peer:.4f} (chrF delta {chrf['delta']:+.4f})")
    if fallbacks:
        print("compare did NOT use the stored statistics: " + fallbacks[0])
        return 1
    if abs(chrf["p_value"] - p_peer) > 1 / (N_RESAMPLES + 1) + 5e-5:
        print("chrF p-values DISAGREE beyond one resample")
        return 1
    return 0


def _runs(times: list[float]) -> str:
    return ", ".join(f"{t:.2f}" for t in times)


if __name__ == "__main__":
    sys.exit(main())

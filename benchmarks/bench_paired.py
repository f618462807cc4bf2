"""Paired comparison of two ~10,000-entry runs, mt-eval against ``sacrebleu --paired-bs``.

Workload: NTREX-128 references for Spanish, German, French, Portuguese and Italian concatenated
into one 9,985-entry corpus (declared as target ``es``: all five use BLEU's 13a tokenizer, so the
statistics are what each language would give on its own). System A is a deterministic
degradation of the references; B equals A except on every 100th line, where a different third of
the words is dropped: a close pair, so the p-values are informative rather than at their floor.
Both cards are made with the real ``mt-eval score`` command (setup, not timed).

Timed, with the peer measured in the same run:

* peer        ``sacrebleu REF -i A B -m chrf --paired-bs`` (chrF alone, 1000 resamples), a fresh
              process: extraction of chrF statistics for both systems plus the test;
* comparison  ``compare_tables`` from precomputed statistics: every metric (exact match, chrF++,
              chrF, BLEU, TER) and the composite, per-system CIs and paired tests, 1000 resamples
              (median of 5). Goal: ≤ 1 s;
* end to end  ``compare([card_a, card_b])`` as the CLI runs it: reading both cards, rebuilding
              every metric's statistics from ``results[]`` (``tables_from_cards``) and the
              comparison; measured in this process once (imports, about 0.6 s, excluded);
* like for like  end to end restricted to chrF, as the peer is: ``compare(cards,
              metrics=["chrf"])``, which rebuilds only the metrics compared.

Each figure is printed with its ratio to the peer; chrF's p-value is checked against sacrebleu's.
Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_paired.py [--data DIR]`` (``--data``: another
NTREX-128 folder; default ``tests/data/ntrex128``).
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ntrex_common import SOURCE, data_dir, degrade, read_lines, reference

LANGS = ["spa", "deu", "fra", "por", "ita"]
N_RESAMPLES = 1000
REPEATS = 5
MT_EVAL = [sys.executable, "-c", "from mt_eval.cli import main; main()"]


def drop_third(line: str, offset: int) -> str:
    return " ".join(w for i, w in enumerate(line.split()) if i % 3 != offset)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prepare(ntrex: Path, tmp: Path) -> dict[str, Path]:
    """The concatenated corpus, two close systems, and their cards."""
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
    return paths


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def peer(paths: dict[str, Path]) -> tuple[float, float]:
    """sacrebleu's paired bootstrap on chrF: (seconds, p-value). ``-f text``: its JSON output fails
    on paired results (float32 is not JSON serialisable in sacrebleu 2.6)."""
    cmd = [sys.executable, "-m", "sacrebleu", str(paths["ref"]), "-i", str(paths["a"]), str(paths["b"]),
           "-m", "chrf", "--paired-bs", "--paired-bs-n", str(N_RESAMPLES), "-f", "text", "-w", "4"]  # fmt: skip
    elapsed, out = timed(cmd)
    return elapsed, float(re.findall(r"\(p = ([0-9.]+)\)", out)[0])


def ours(paths: dict[str, Path]) -> tuple[float, float, dict[str, float], Any]:
    """(end-to-end seconds, median comparison seconds, end-to-end phases, result)."""
    from mt_eval.api import load_card
    from mt_eval.comparison import compare_tables, tables_from_cards

    sources = [str(paths["card_a"]), str(paths["card_b"])]
    t0 = time.perf_counter()
    cards = [load_card(p) for p in sources]
    t_read = time.perf_counter()
    tables = tables_from_cards(cards, sources=sources)
    t_rescore = time.perf_counter()
    result = compare_tables(tables, profile=cards[0]["profile"], names=["a", "b"], n_resamples=N_RESAMPLES)
    t_done = time.perf_counter()
    phases = {"read cards": t_read - t0, "rebuild statistics": t_rescore - t_read, "compare": t_done - t_rescore}
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        again = compare_tables(tables, profile=cards[0]["profile"], names=["a", "b"], n_resamples=N_RESAMPLES)
        times.append(time.perf_counter() - start)
        assert again == result  # same seed, same numbers
    return t_done - t0, statistics.median(times), phases, result


def chrf_only(paths: dict[str, Path]) -> tuple[float, float]:
    """``mt-eval compare A B --metric chrf`` as a function: only chrF is rebuilt. (seconds, p)."""
    from mt_eval.api import load_card
    from mt_eval.comparison import compare

    start = time.perf_counter()
    cards = [load_card(paths["card_a"]), load_card(paths["card_b"])]
    result = compare(cards, metrics=["chrf"], n_resamples=N_RESAMPLES, names=["a", "b"])
    return time.perf_counter() - start, result.result("b", "chrf").p_value


def main() -> int:
    ntrex = data_dir(__doc__, [SOURCE, *(reference(lang) for lang in LANGS)])
    with tempfile.TemporaryDirectory() as tmp:
        paths = prepare(ntrex, Path(tmp))
        n = len(read_lines(paths["ref"]))
        t_peer, p_peer = peer(paths)
        t_e2e, t_cmp, phases, result = ours(paths)
        t_like, p_like = chrf_only(paths)
    metrics = [m.id for m in result.metrics]
    p_ours = result.result("b", "chrf").p_value
    goal = "met" if t_cmp <= 1 else "NOT met"
    print(f"entries: {n} per system, 2 systems, {N_RESAMPLES} resamples")
    print(f"sacrebleu --paired-bs, chrF only (fresh process):   {t_peer:7.3f} s")
    print(f"mt-eval comparison from statistics ({', '.join(metrics)}; CIs + paired tests, median of {REPEATS}): "
          f"{t_cmp:7.3f} s   ratio {t_cmp / t_peer:.3f}x sacrebleu   (goal <= 1 s: {goal})")
    print(f"mt-eval end to end from cards (rebuilding every metric's statistics + comparison): {t_e2e:7.3f} s   "
          f"ratio {t_e2e / t_peer:.2f}x sacrebleu")  # fmt: skip
    print("end-to-end phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in phases.items()))
    print(f"mt-eval end to end, chrF only (compare --metric chrf): {t_like:7.3f} s   "
          f"ratio {t_like / t_peer:.2f}x sacrebleu")  # fmt: skip
    delta = result.result("b", "chrf").delta
    print(f"chrF p-value: mt-eval {p_ours:.4f}, sacrebleu {p_peer:.4f} (chrF delta {delta:+.4f})")
    if max(abs(p_ours - p_peer), abs(p_like - p_peer)) > 1 / (N_RESAMPLES + 1) + 5e-5:
        print("chrF p-values DISAGREE beyond one resample")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

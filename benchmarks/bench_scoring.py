"""Scoring throughput: ~10,000 segments with CIs, mt-eval against the sacrebleu command line.

Workload: NTREX-128 English→{Spanish, German, French, Portuguese, Italian}, 5 × 1,997 = 9,985
segments; the hypotheses are a deterministic degradation of the references. Per language,
measured as wall time of a fresh process (interpreter start, imports and all), interleaved so
that load on a shared machine hits both sides alike:

* peer   ``sacrebleu REF -i HYP -m bleu chrf ter --chrf-word-order 2 --confidence`` (chrF++,
         BLEU, TER, 1000-resample bootstrap; sacrebleu's "chrf" with word order 2 *is* chrF++);
* ours   the mt-eval path a run takes: ``MetricTable.compute`` over chrF++, chrF, BLEU and TER
         (the issue's set; the language-aware metrics a card may add are measured by
         ``bench_analyser.py``), per-entry values of each, and ``bootstrap_many`` CIs for every
         metric plus the composite (1000 resamples). chrF comes on top of the peer's work (it
         reuses chrF++'s character statistics; extraction runs on both cores,
         ``scoring/extraction.py``).

Prints both times and their ratios (goal: ours ≤ 0.75 × sacrebleu) and checks that chrF++, BLEU
and TER are identical to sacrebleu's to the 12 decimals it prints. Exit status 0 unless a score
differs. Run: ``make bench`` or ``.venv/bin/python benchmarks/bench_scoring.py [--data DIR]``
(``--data``: another NTREX-128 folder; default ``tests/data/ntrex128``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ntrex_common import SOURCE, data_dir, degrade, read_lines, reference

LANGS = [("spa", "es"), ("deu", "de"), ("fra", "fr"), ("por", "pt"), ("ita", "it")]
N_RESAMPLES = 1000
# what the issue specifies and the peer computes (plus chrF); language-aware metrics are benchmarked elsewhere
METRICS = ["chrf_plus_plus", "chrf", "bleu", "ter"]
WIDTH = 12  # decimals sacrebleu prints; scores are compared at this precision
SACRE_KEYS = {"chrF2++": "chrf_plus_plus", "BLEU": "bleu", "TER": "ter"}


def prepare(ntrex: Path, tmp: Path) -> list[dict[str, Any]]:
    src = ntrex / SOURCE
    jobs = []
    for iso3, code in LANGS:
        ref = ntrex / reference(iso3)
        hyp = tmp / f"hyp.{iso3}"
        hyp.write_text("\n".join(degrade(i, s) for i, s in enumerate(read_lines(ref))) + "\n", encoding="utf-8")
        jobs.append({"lang": code, "src": str(src), "ref": str(ref), "hyp": str(hyp)})
    return jobs


def timed(cmd: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(cmd)}\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def run_sacrebleu(job: dict[str, Any]) -> tuple[float, dict[str, float]]:
    cmd = [sys.executable, "-m", "sacrebleu", job["ref"], "-i", job["hyp"], "-m", "bleu", "chrf", "ter",
           "--chrf-word-order", "2", "--confidence", "--confidence-n", str(N_RESAMPLES),
           "-w", str(WIDTH), "-f", "json"]  # fmt: skip
    elapsed, out = timed(cmd)
    return elapsed, {SACRE_KEYS[d["name"]]: float(d["score"]) for d in json.loads(out)}


def run_ours(job: dict[str, Any], mode: str) -> tuple[float, dict[str, Any]]:
    cmd = [sys.executable, __file__, "--worker", mode, job["src"], job["ref"], job["hyp"], job["lang"]]
    elapsed, out = timed(cmd)
    return elapsed, json.loads(out)


# --------------------------------------------------------------------------------------------
# Worker: one language in a fresh process, timed from the parent (imports included).


def worker(mode: str, src: str, ref: str, hyp: str, lang: str) -> None:
    t0 = time.perf_counter()
    import numpy as np

    from mt_eval.comparison import composite_combine
    from mt_eval.corpus import load_text_pair
    from mt_eval.languages.card import language_card
    from mt_eval.metrics.base import MetricContext
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.scoring.scores import MetricTable
    from mt_eval.stats import bootstrap_many

    t_import = time.perf_counter()
    dataset = load_text_pair(src, ref, "en", lang)
    hyps = read_lines(Path(hyp))
    target, source = language_card(lang), language_card("en")
    ctx = MetricContext(dataset.entries, target, source)
    errors = np.zeros(len(hyps), dtype=bool)
    metrics = metrics_for(target, only=METRICS)
    t_load = time.perf_counter()
    table = MetricTable.compute(metrics, hyps, ctx, errors)
    t_stats = time.perf_counter()
    per_entry = {m: table.entry_values(m) for m in table.metrics}
    values = table.values()
    t_entry = time.perf_counter()
    aggregates = {m: metric.aggregate for m, metric in table.metrics.items()}
    cis = bootstrap_many(table.stats, aggregates, composite_combine(target.profile), n_resamples=N_RESAMPLES)
    t_boot = time.perf_counter()
    assert all(v is None or len(v) == len(hyps) for v in per_entry.values())
    print(json.dumps({
        "scores": values, "composite_ci": [cis["composite"].ci_lower, cis["composite"].ci_upper],
        "phases": {"import": t_import - t0, "load": t_load - t_import, "statistics": t_stats - t_load,
                   "entry_values": t_entry - t_stats, "bootstrap": t_boot - t_entry},
    }))  # fmt: skip


def main() -> int:
    ntrex = data_dir(__doc__, [SOURCE, *(reference(iso3) for iso3, _ in LANGS)])
    totals = {"sacrebleu": 0.0, "current": 0.0}
    phases: dict[str, dict[str, float]] = {"current": {}}
    mismatches: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        jobs = prepare(ntrex, Path(tmp))
        for job in jobs:
            t_sacre, sacre = run_sacrebleu(job)
            t_cur, cur = run_ours(job, "current")
            totals["sacrebleu"] += t_sacre
            totals["current"] += t_cur
            for name, got in (("current", cur),):
                for key, value in got["phases"].items():
                    phases[name][key] = phases[name].get(key, 0.0) + value
                for key, expected in sacre.items():
                    if float(f"{got['scores'][key]:.{WIDTH}f}") != expected:
                        mismatches.append(f"{job['lang']} {key} {name}: {got['scores'][key]!r} vs {expected!r}")
            print(f"  {job['lang']}: sacrebleu {t_sacre:6.2f} s   mt-eval {t_cur:6.2f} s")
    n = sum(len(read_lines(Path(j["ref"]))) for j in jobs)
    sac = totals["sacrebleu"]
    print(f"segments: {n} ({len(LANGS)} languages), {N_RESAMPLES} bootstrap resamples")
    print(f"sacrebleu CLI (chrF++ BLEU TER --confidence):       {sac:7.2f} s")
    print(f"mt-eval (MetricTable + entry values + bootstrap_many): {totals['current']:7.2f} s   "
          f"ratio {totals['current'] / sac:.2f}x sacrebleu (goal <= 0.75x)")  # fmt: skip
    for name, spent in phases.items():
        print(f"phases ({name}, summed in-process): " + ", ".join(f"{k} {v:.2f} s" for k, v in spent.items()))
    if mismatches:
        print("corpus scores DIFFER from sacrebleu:\n  " + "\n  ".join(mismatches))
        return 1
    print(f"corpus scores identical to sacrebleu (chrF++, BLEU, TER to {WIDTH} decimals) in all {len(LANGS)} languages")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*sys.argv[2:7])
        sys.exit(0)
    sys.exit(main())

"""Scoring time on adversarial outputs: word salad against the same words in order, through ``mt-eval score``.

Workload: NTREX-128 eng→spa lines 401–600 (``--lines``), the English source and the Spanish reference. Two
outputs, each scored by a fresh ``mt-eval score`` process (interpreter start, every metric, CIs, the sealed
card on disk), alternating which goes first in each repeat so that load on a shared machine hits both alike:

* in order: the reference itself (the same words, in their order);
* word salad: each reference's words in a seeded random order (issue 22: a 500-line salad card took about a
  quarter of an hour, TER's shift search).

Prints both medians and ``ratio = salad / in order`` (goal ≤ 3; exit status 1 above it). ``--long-line``
also scores one 1 MB output line (beside an ordinary line) and prints how long that took and the one line the
card's warnings say about it.

``--budgets 25,50,100`` measures TER's shift budget (``metrics.ter_bound.SHIFT_BUDGET``) as a choice: every
repeat runs every budget on both outputs, interleaved (the budget is set in the scoring process before the CLI
starts, so nothing else changes), with the load average printed; an untimed run of each output first fills the
embedding cache, so no timed run pays for embedding what another does not. ``--apertium`` adds what each
budget costs in accuracy: corpus TER of Apertium eng→spa on all 1,997 NTREX lines at each budget against
sacrebleu's own (unbounded) TER, and how many lines end their search at the budget.

Run: ``.venv/bin/python benchmarks/bench_word_salad.py [--repeats N] [--lines A:B] [--long-line]
[--budgets N,N,...] [--apertium] [--data DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ntrex_common import DEFAULT_NTREX, SOURCE, read_lines, reference

from support.perturb import word_salad

GOAL = 3.0
SEED = 22
MT_EVAL = Path(sys.executable).with_name("mt-eval")


# ``mt-eval`` with TER's shift budget set first (the module constant and the copy the signature reads)
WITH_BUDGET = ("import sys; from mt_eval.metrics import sacre, ter_bound; "
               "ter_bound.SHIFT_BUDGET = sacre.SHIFT_BUDGET = int(sys.argv.pop(1)); "
               "from mt_eval.cli import main; sys.argv[0] = 'mt-eval'; sys.exit(main())")


def score(src: Path, ref: Path, hyps: list[str], folder: Path, name: str,
          budget: int | None = None) -> tuple[float, dict]:
    hyp = folder / f"{name}.txt"
    hyp.write_text("\n".join(hyps) + "\n", encoding="utf-8")
    card = folder / f"{name}.json"
    command = [str(MT_EVAL)] if budget is None else [sys.executable, "-c", WITH_BUDGET, str(budget)]
    start = time.perf_counter()
    subprocess.run([*command, "score", "--source-file", str(src), "--reference-file", str(ref), "-l", "en-es",
                    "--predictions", str(hyp), "-o", str(card)], check=True, capture_output=True)
    return time.perf_counter() - start, json.loads(card.read_text(encoding="utf-8"))


def budgets(src: Path, ref: Path, outputs: dict[str, list[str]], folder: Path, choices: list[int],
            repeats: int) -> None:
    """Every budget on both outputs in every repeat, interleaved; medians and ratios per budget."""
    for name, hyps in outputs.items():  # untimed: fills the embedding cache for both outputs
        score(src, ref, hyps, folder, "warm_" + name.replace(" ", "_"), choices[0])
    times: dict[tuple[int, str], list[float]] = {}
    ter: dict[tuple[int, str], float] = {}
    for k in range(repeats):
        order = [(b, name) for b in choices for name in outputs]
        for budget, name in order if k % 2 == 0 else order[::-1]:
            elapsed, card = score(src, ref, outputs[name], folder, f"{budget}_{name.replace(' ', '_')}", budget)
            times.setdefault((budget, name), []).append(elapsed)
            ter[budget, name] = card["scores"]["ter"]
        print(f"  repeat {k + 1}: load average {os.getloadavg()[0]:.1f}")
    for budget in choices:
        med = {name: statistics.median(times[budget, name]) for name in outputs}
        print(f"budget {budget:4d}: in order {med['in order']:6.2f} s (TER {ter[budget, 'in order']:.2f}), "
              f"word salad {med['word salad']:6.2f} s (TER {ter[budget, 'word salad']:.2f}): "
              f"ratio {med['word salad'] / med['in order']:.2f}")


def apertium_ter(data: Path, choices: list[int]) -> None:
    """Corpus TER of Apertium eng→spa (all NTREX lines) at each budget against sacrebleu's unbounded TER."""
    from sacrebleu.metrics import TER, lib_ter

    from mt_eval.metrics.ter_bound import BoundedTER

    sources, refs = read_lines(data / SOURCE), read_lines(data / reference("spa"))
    mt = subprocess.run(["apertium", "-u", "eng-spa"], input="\n".join(sources) + "\n", capture_output=True,
                        text=True, check=True).stdout.splitlines()
    start = time.perf_counter()
    full = TER().corpus_score(mt, [refs]).score
    print(f"Apertium eng→spa, {len(mt)} lines: sacrebleu TER {full:.2f} ({time.perf_counter() - start:.1f} s)")
    for budget in choices:
        stopped = 0
        for hyp, ref in zip(mt, refs, strict=True):  # a line whose search reaches the budget's last candidate
            checked = lib_ter._MAX_SHIFT_CANDIDATES - budget
            words, ed = hyp.split(), lib_ter.BeamEditDistance(ref.split())
            while checked < lib_ter._MAX_SHIFT_CANDIDATES:
                delta, words, checked = lib_ter._shift(words, ref.split(), ed, checked)
                if delta <= 0:
                    break
            stopped += checked >= lib_ter._MAX_SHIFT_CANDIDATES
        start = time.perf_counter()
        bounded = BoundedTER(budget).corpus_score(mt, [refs]).score
        print(f"  budget {budget:4d}: TER {bounded:.2f} ({bounded - full:+.2f}; {stopped} lines reach the budget; "
              f"{time.perf_counter() - start:.1f} s)")


def long_line(folder: Path, sources: list[str], refs: list[str]) -> None:
    """One 1 MB output line (refused with one line), and one just within ``MAX_OUTPUT_CHARS`` (timed)."""
    from mt_eval.scoring.limits import MAX_OUTPUT_CHARS

    src, ref = folder / "src2.txt", folder / "ref2.txt"
    src.write_text("\n".join(sources) + "\n", encoding="utf-8")
    ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
    words = word_salad([" ".join(refs * 400)], SEED)[0]  # real words in no order: the worst case for TER
    for size in (1_048_576, MAX_OUTPUT_CHARS):
        hyp = folder / "long.txt"
        hyp.write_text(refs[0] + "\n" + (words * (size // len(words) + 1))[:size].strip() + "\n", encoding="utf-8")
        start = time.perf_counter()
        done = subprocess.run([str(MT_EVAL), "score", "--source-file", str(src), "--reference-file", str(ref), "-l",
                               "en-es", "--predictions", str(hyp), "-o", str(folder / "long.json")],
                              capture_output=True, text=True)
        said = (done.stderr.strip().splitlines() or ["(nothing)"])[-1]
        print(f"one output line of {size:,} characters: exit {done.returncode} in {time.perf_counter() - start:.2f} s"
              + (f"; {said}" if done.returncode else ""))


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_NTREX, metavar="DIR")
    parser.add_argument("--lines", default="400:600", help="which lines, Python slice A:B (default 400:600)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--long-line", action="store_true", help="also score one 1 MB output line")
    parser.add_argument("--budgets", help="compare TER shift budgets, e.g. 25,50,100 (instead of the plain run)")
    parser.add_argument("--apertium", action="store_true", help="with --budgets: Apertium eng→spa TER per budget")
    args = parser.parse_args()
    a, b = (int(x) for x in args.lines.split(":"))
    sources = read_lines(args.data / SOURCE)[a:b]
    refs = read_lines(args.data / reference("spa"))[a:b]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        src, ref = folder / "src.txt", folder / "ref.txt"
        src.write_text("\n".join(sources) + "\n", encoding="utf-8")
        ref.write_text("\n".join(refs) + "\n", encoding="utf-8")
        times: dict[str, list[float]] = {"in order": [], "word salad": []}
        outputs = {"in order": refs, "word salad": word_salad(refs, SEED)}
        if args.budgets:
            choices = [int(b) for b in args.budgets.split(",")]
            budgets(src, ref, outputs, folder, choices, args.repeats)
            if args.apertium:
                apertium_ter(args.data, choices)
            return 0
        ter: dict[str, float] = {}
        for k in range(args.repeats):
            for name in (list(outputs) if k % 2 == 0 else list(outputs)[::-1]):
                elapsed, card = score(src, ref, outputs[name], folder, name.replace(" ", "_"))
                times[name].append(elapsed)
                ter[name] = card["scores"]["ter"]
        med = {name: statistics.median(t) for name, t in times.items()}
        for name, t in med.items():
            print(f"{name:11s} median {t:7.2f} s over {args.repeats} (TER {ter[name]:.2f}; {len(refs)} lines)")
        ratio = med["word salad"] / med["in order"]
        print(f"ratio = word salad / in order = {ratio:.2f} (goal ≤ {GOAL})")
        if args.long_line:
            long_line(folder, sources[:2], refs[:2])
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())

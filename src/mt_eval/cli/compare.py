"""``mt-eval compare``: is one system really better than another on this corpus?"""

from __future__ import annotations

import gc
import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.markup import escape

from mt_eval.cli.common import BOOTSTRAP, AlphaOpt, BootOpt, JsonOpt, SeedOpt, check_seed, err, opt, out
from mt_eval.comparison import Comparison, compare, load_for_compare
from mt_eval.comparison.engine import Correction, Method
from mt_eval.errors import UserError
from mt_eval.render.compare import render

AR_TRIALS = 10_000  # approximate-randomisation trials; enough for p to two significant digits at 0.01


def run_compare(
    cards: Sequence[Path],
    *,
    metrics: list[str] | None = None,
    n_resamples: int = BOOTSTRAP.n_resamples,
    alpha: float = BOOTSTRAP.alpha,
    seed: int = BOOTSTRAP.seed,
    paired_ar: bool = False,
    n_trials: int = AR_TRIALS,
    correction: str = "holm",
    as_json: bool = False,
    detail: bool = False,
    console: Console | None = None,
    status: Console | None = None,
    warn_to: Console | None = None,
    strict: bool = False,
) -> Comparison:
    """Load the cards, compare them with the first, and print tables (or JSON on stdout).

    Each card's statistics come from its sealed sidecar; a card without a usable one gets one
    ``warning:`` line on ``warn_to`` (stderr) before its statistics are rebuilt from ``results[]``.
    ``status`` (a terminal console, normally stderr) shows a spinner meanwhile. A shown value that differs
    from its card's sealed one gets one ``changed:`` line (metric, old → new, reason); ``strict`` refuses.
    """
    if correction not in ("holm", "none"):
        raise UserError(f"unknown --correction '{correction}' (use holm or none)")
    check_seed(seed)
    method: Method = "approx-rand" if paired_ar else "bootstrap"
    # No cycle collection while comparing: the work makes little garbage, and each collection would
    # walk every object the imports created (a few percent of a 10,000-entry comparison).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _compare_and_print(cards, metrics, n_resamples, alpha, seed, method, correction, n_trials, as_json,
                                  console, status, warn_to, detail, strict)  # fmt: skip
    finally:
        if collecting:
            gc.enable()


def _compare_and_print(
    cards: Sequence[Path], metrics: list[str] | None, n_resamples: int, alpha: float, seed: int, method: Method,
    correction: str, n_trials: int, as_json: bool, console: Console | None, status: Console | None,
    warn_to: Console | None, detail: bool = False, strict: bool = False,
) -> Comparison:
    # both cards at once: reading and hashing them releases the GIL for most of the time
    with ThreadPoolExecutor(max_workers=min(4, len(cards)) or 1) as pool:
        loaded = list(pool.map(load_for_compare, cards))
    for card in loaded:
        if card.fallback and warn_to is not None:
            warn_to.print(f"[yellow]warning:[/yellow] {escape(card.fallback)}", highlight=False, soft_wrap=True)
    spinner = status.status(f"comparing {len(loaded)} run cards…") if status is not None else nullcontext()
    with spinner:
        result = compare(
            [c.card for c in loaded], metrics=metrics, n_resamples=n_resamples, alpha=alpha, seed=seed,
            method=method, correction=cast(Correction, correction), n_trials=n_trials,
            sources=[c.source for c in loaded], statistics=[c.statistics for c in loaded],
        )  # fmt: skip
    for change in result.changes:  # a number that is not the sealed one: one line each, the reason included
        if warn_to is not None:
            warn_to.print(f"[yellow]changed:[/yellow] {escape(change.line())}", highlight=False, soft_wrap=True)
    if strict and result.changes:
        raise UserError(f"--strict: {len(result.changes)} value(s) would differ from their sealed cards, first "
                        f"{result.changes[0].line()}", hint="compare cards scored with the same metrics")
    if as_json:
        # Plain print: rich would wrap long lines and colour the JSON.
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    else:
        render(result, console or Console(), detail=detail)
    return result


HELP = "\n\n".join([
    "Compare systems with a BASELINE on the same corpus: each score with its confidence interval, the "
    "difference from the baseline with a paired significance test, and Holm correction when several "
    "systems face one baseline.",
    "The first card is the baseline. All cards must cover the same corpus and entries (dataset.sha256 "
    "and entry ids) with the same profile; the cards alone are enough. Per-entry statistics are read "
    "from each card's sealed sidecar (<card>.stats.npz, written beside it); a card without one is "
    "rescored from its results, with a warning. A value that differs from its sealed card (a composite "
    "recomputed without a metric another card lacks) is listed on stderr with the reason; --strict refuses. "
    "A difference is marked * only "
    "when its (Holm-adjusted) p-value is below --alpha and the interval of the difference excludes "
    "zero. TER is lower-is-better: a negative Δ reads as better.",
    "Example: mt-eval compare runs/apertium.json runs/llm.json runs/llm-coached.json "
    "--metric chrf++ --metric ter --bootstrap 2000",
    "Example (scripts): mt-eval compare base.json new.json --json | jq '.paired[] | select(.significant)'",
])


def compare_command(
    cards: Annotated[list[Path], typer.Argument(
        help="Run cards: the BASELINE first, then one or more systems.", metavar="BASELINE.json SYSTEM.json...",
        show_default=False)],
    metric: Annotated[list[str] | None, opt(
        "Only this metric (repeatable): chrf_plus_plus (chrf++), chrf, bleu, ter, exact_match_rate, "
        "length_ratio, composite. Default: all but length_ratio, plus composite.", "--metric", "-m")] = None,
    bootstrap: BootOpt = BOOTSTRAP.n_resamples, alpha: AlphaOpt = BOOTSTRAP.alpha, seed: SeedOpt = BOOTSTRAP.seed,
    paired_ar: Annotated[bool, opt("Approximate randomisation instead of the paired bootstrap.",
                                   "--paired-ar")] = False,
    trials: Annotated[int, opt("Approximate-randomisation trials (with --paired-ar).")] = AR_TRIALS,
    correction: Annotated[str, opt("Multiple-comparison correction: holm or none.")] = "holm",
    as_json: JsonOpt = False,
    detail: Annotated[bool, opt("One table per metric with raw and adjusted p-values and the interval of Δ.",
                                "--detail")] = False,
    strict: Annotated[bool, opt("Refuse (exit 2) when a shown value would differ from the one sealed on its card "
                                "(e.g. a composite recomputed without a metric another card lacks).",
                                "--strict")] = False,
) -> None:
    run_compare(
        cards, metrics=metric or None, n_resamples=bootstrap, alpha=alpha, seed=seed, paired_ar=paired_ar,
        n_trials=trials, correction=correction, as_json=as_json, detail=detail, console=out,
        status=err if err.is_terminal else None, warn_to=err, strict=strict,
    )  # fmt: skip

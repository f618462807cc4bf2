"""``mt-eval compare``: is one system really better than another on this corpus?

Registered on the main app by ``register(app)``; the body is ``run_compare`` so that it can
raise ``UserError`` and leave the one-line message and exit code 2 to ``mt_eval.cli.guarded``
(imported lazily: ``mt_eval.cli`` imports this module to register the command).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, cast

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.comparison import COMPOSITE, Comparison, MetricSpec, compare
from mt_eval.comparison.engine import Correction, Method
from mt_eval.errors import UserError
from mt_eval.stats import DEFAULT_SEED

LABELS = {
    "chrf_plus_plus": "chrF++", "chrf": "chrF", "bleu": "BLEU", "ter": "TER",
    "exact_match_rate": "exact match", "length_ratio": "length ratio", COMPOSITE: "composite",
}
TEST_NAMES = {"bootstrap": "paired bootstrap", "approx-rand": "approximate randomisation"}


def run_compare(
    cards: Sequence[Path],
    *,
    metrics: list[str] | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    paired_ar: bool = False,
    n_trials: int = 10_000,
    correction: str = "holm",
    as_json: bool = False,
    console: Console | None = None,
    status: Console | None = None,
) -> Comparison:
    """Load the cards, compare them with the first, and print tables (or JSON on stdout).

    ``status`` (a terminal console, normally stderr) shows a spinner while the cards' statistics
    are rebuilt, which takes seconds for a few thousand entries.
    """
    from mt_eval.api import load_card

    if correction not in ("holm", "none"):
        raise UserError(f"unknown --correction '{correction}' (use holm or none)")
    method: Method = "approx-rand" if paired_ar else "bootstrap"
    loaded = [load_card(path) for path in cards]
    spinner = status.status(f"rescoring {len(loaded)} run cards…") if status is not None else nullcontext()
    with spinner:
        result = compare(
            loaded, metrics=metrics, n_resamples=n_resamples, alpha=alpha, seed=seed, method=method,
            correction=cast(Correction, correction), n_trials=n_trials, sources=[str(p) for p in cards],
        )  # fmt: skip
    if as_json:
        # Plain print: rich would wrap long lines and colour the JSON.
        print(json.dumps(result.as_dict(), ensure_ascii=False, indent=2))
    else:
        render(result, console or Console())
    return result


def render(result: Comparison, console: Console) -> None:
    """One table per metric, then the legend that says how to read the marks."""
    ds = result.dataset
    console.print(
        f"[bold]{len(result.systems)} systems[/bold] on {escape(str(ds.get('id', '?')))} "
        f"({ds.get('entry_count', '?')} entries, profile {result.profile}); baseline "
        f"[bold]{escape(result.baseline)}[/bold]"
    )
    for spec in result.metrics:
        console.print(_metric_table(result, spec))
    test = TEST_NAMES[result.method]
    count = f"{result.n_trials} trials" if result.method == "approx-rand" else f"{result.n_resamples} resamples"
    family = len(result.systems) - 1
    if family == 1:
        corrected = "of the single comparison (nothing to adjust)"
    elif result.correction == "holm":
        corrected = f"Holm-adjusted across {family} systems per metric"
    else:
        corrected = "not corrected for multiple comparisons"
    console.print(
        f"* significant at α = {result.alpha:g}: p {corrected}, and the {100 * (1 - result.alpha):g}% interval "
        f"of Δ excludes 0. Two-sided {test} ({count}, seed {result.seed}); intervals: percentile bootstrap "
        f"({result.n_resamples} resamples). Δ = system − baseline in the metric's own units.",
        highlight=False,
    )


def _metric_table(result: Comparison, spec: MetricSpec) -> Table:
    """Rows: systems. Score and Δ carry their intervals on a second line so the table fits 80 columns."""
    direction = {True: "higher is better", False: "lower is better", None: "no direction"}[spec.higher_is_better]
    conf = f"{100 * (1 - result.alpha):g}%"
    table = Table(title=f"{LABELS.get(spec.id, spec.id)} ({direction})", title_justify="left", show_edge=False)
    p_name = "p Holm" if result.correction == "holm" else "p"
    for col in ("system", f"score\n{conf} CI", f"Δ vs baseline\n{conf} CI", p_name, "p raw", "verdict"):
        text = col in ("system", "verdict")
        table.add_column(col, justify="left" if text else "right", overflow="fold", no_wrap=not text)
    digits = 2 if spec.scale >= 10 else 4
    for system in result.systems:
        ci = system.scores[spec.id]
        cells = [escape(system.name), f"{_num(ci.point, digits)}\n{_interval(ci.ci_lower, ci.ci_upper, digits)}"]
        if system.name == result.baseline:
            table.add_row(*cells, "[dim]baseline[/dim]", "", "", "")
            continue
        row = result.result(system.name, spec.id)
        mark = "*" if row.significant else " "
        delta = f"{_num(row.delta, digits, signed=True)}{mark}\n{_interval(row.ci_lower, row.ci_upper, digits)}"
        table.add_row(*cells, delta, _p(row.p_adjusted), _p(row.p_value), _verdict(row.verdict, row.significant, spec))
    return table


def _verdict(verdict: str, significant: bool, spec: MetricSpec) -> str:
    """Direction-aware words: for TER a negative Δ reads "better (lower TER)"."""
    if verdict == "same":
        return "same score"
    if not significant:
        return f"[dim]{verdict}, n.s.[/dim]"
    style = {"better": "green", "worse": "red"}.get(verdict, "")
    text = verdict
    if spec.higher_is_better is False:
        text += f" ({'lower' if verdict == 'better' else 'higher'} {LABELS.get(spec.id, spec.id)})"
    return f"[{style}]{text}[/{style}]" if style else text


def _num(value: float, digits: int, *, signed: bool = False) -> str:
    if value is None or math.isnan(value):
        return "—"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def _interval(lo: float, hi: float, digits: int) -> str:
    if math.isnan(lo) or math.isnan(hi):
        return "—"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _p(value: float) -> str:
    return "—" if math.isnan(value) else f"{value:.4f}"


CardsArg = Annotated[list[Path], typer.Argument(
    help="Run cards: the BASELINE first, then one or more systems.", metavar="BASELINE.json SYSTEM.json...",
    show_default=False)]
MetricOpt = Annotated[list[str] | None, typer.Option(
    "--metric", "-m", help="Only this metric (repeatable): chrf_plus_plus (chrf++), chrf, bleu, ter, "
    "exact_match_rate, length_ratio, composite. Default: all but length_ratio, plus composite.")]
BootstrapOpt = Annotated[int, typer.Option("--bootstrap", "-b", help="Bootstrap resamples (CIs and the paired test).")]
AlphaOpt = Annotated[float, typer.Option(help="Significance level; intervals are (1 - alpha).")]
SeedOpt = Annotated[int, typer.Option(help="Random seed; 12345 (sacrebleu's default) reproduces its resamples.")]
ArOpt = Annotated[bool, typer.Option("--paired-ar", help="Approximate randomisation instead of the paired bootstrap.")]
TrialsOpt = Annotated[int, typer.Option(help="Approximate-randomisation trials (with --paired-ar).")]
CorrectionOpt = Annotated[str, typer.Option(help="Multiple-comparison correction: holm or none.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the full result as JSON on stdout (for scripts).")]


HELP = "\n\n".join([
    "Compare systems with a BASELINE on the same corpus: each score with its confidence interval, the "
    "difference from the baseline with a paired significance test, and Holm correction when several "
    "systems face one baseline.",
    "The first card is the baseline. All cards must cover the same corpus and entries (dataset.sha256 "
    "and entry ids) with the same profile; the cards alone are enough, since their per-entry results "
    "are rescored. A difference is marked * only when its (Holm-adjusted) p-value is below --alpha and "
    "the interval of the difference excludes zero. TER is lower-is-better: a negative Δ reads as better.",
    "Example: mt-eval compare runs/apertium.json runs/llm.json runs/llm-coached.json "
    "--metric chrf++ --metric ter --bootstrap 2000",
    "Example (scripts): mt-eval compare base.json new.json --json | jq '.paired[] | select(.significant)'",
])


def compare_command(
    cards: CardsArg, metric: MetricOpt = None, bootstrap: BootstrapOpt = 1000, alpha: AlphaOpt = 0.05,
    seed: SeedOpt = DEFAULT_SEED, paired_ar: ArOpt = False, trials: TrialsOpt = 10_000,
    correction: CorrectionOpt = "holm", as_json: JsonOpt = False,
) -> None:
    """The registered command (help text: ``HELP``); errors go through ``guarded``."""
    from mt_eval.cli import err, guarded, out

    guarded(lambda: run_compare(
        cards, metrics=metric or None, n_resamples=bootstrap, alpha=alpha, seed=seed, paired_ar=paired_ar,
        n_trials=trials, correction=correction, as_json=as_json, console=out,
        status=err if err.is_terminal else None,
    ))  # fmt: skip


def register(app: typer.Typer) -> None:
    """Add ``compare`` to the ``mt-eval`` app (called from ``mt_eval.cli``)."""
    app.command("compare", help=HELP)(compare_command)

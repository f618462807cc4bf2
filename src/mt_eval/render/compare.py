"""Terminal rendering of a comparison: one compact systems × metrics table (sacrebleu's layout), or
with ``detail`` one table per metric with both p-values and intervals; then how to read the marks."""

from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.comparison import COMPOSITE, Comparison, MetricSpec

LABELS = {
    "chrf_plus_plus": "chrF++", "chrf": "chrF", "bleu": "BLEU", "ter": "TER",
    "exact_match_rate": "exact match", "length_ratio": "length ratio", COMPOSITE: "composite",
    "fst_acceptance_rate": "FST acceptance", "orthographic_accuracy": "orthography",
    "code_switching_rate": "code-switching", "hallucination_rate": "hallucination",
    "compliance_index": "compliance", "compliance_index_repaired": "compliance (repaired)",
    "equivalent_match_rate": "equivalent match", "morphological_accuracy": "morphology",
    "terminology_adherence": "terminology", "consistency_score": "consistency",
    "repair_effectiveness": "repair effectiveness",
}
TEST_NAMES = {"bootstrap": "paired bootstrap", "approx-rand": "approximate randomisation"}


def render(result: Comparison, console: Console, *, detail: bool = False) -> None:
    """The compact table (or one table per metric with ``detail``), then the legend."""
    ds = result.dataset
    console.print(
        f"[bold]{len(result.systems)} systems[/bold] on {escape(str(ds.get('id', '?')))} "
        f"({ds.get('entry_count', '?')} entries, profile {result.profile}); baseline "
        f"[bold]{escape(result.baseline)}[/bold]"
    )
    if detail:
        for spec in result.metrics:
            console.print(_metric_table(result, spec))
    else:
        console.print(_compact_table(result))
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


def _compact_table(result: Comparison) -> Table:
    """Rows: metrics; columns: systems (a leaderboard has a few systems and many metrics). The
    baseline shows score and interval; every other system its score, Δ with * when significant, and
    the (Holm-adjusted) p-value, as sacrebleu's paired output does."""
    conf = f"{100 * (1 - result.alpha):g}%"
    table = Table(show_edge=False)
    table.add_column("metric", no_wrap=True)
    for system in result.systems:
        holm = " Holm" if result.correction == "holm" and len(result.systems) > 2 else ""
        what = f"baseline, {conf} CI" if system.name == result.baseline else f"Δ, p{holm}"
        head = f"{escape(system.name)}\n[dim]{what}[/dim]"
        table.add_column(head, justify="right", no_wrap=True)
    for spec in result.metrics:
        arrow = {True: "↑", False: "↓", None: ""}[spec.higher_is_better]
        cells = [f"{LABELS.get(spec.id, spec.id)} {arrow}".strip()]
        digits = 2 if spec.scale >= 10 else 3
        for system in result.systems:
            ci = system.scores[spec.id]
            if system.name == result.baseline:
                cells.append(f"{_num(ci.point, digits)} [dim]{_interval(ci.ci_lower, ci.ci_upper, digits)}[/dim]")
                continue
            row = result.result(system.name, spec.id)
            delta = f"{_num(row.delta, digits, signed=True)}{'*' if row.significant else ' '}"
            style = {"better": "green", "worse": "red"}.get(row.verdict, "") if row.significant else ""
            delta = f"[{style}]{delta}[/{style}]" if style else delta
            cells.append(f"{_num(ci.point, digits)} {delta} [dim]{_p(row.p_adjusted)}[/dim]")
        table.add_row(*cells)
    return table


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

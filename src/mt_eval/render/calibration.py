"""Terminal rendering of a calibration report: the learned weights, one table per evaluation setting
(each contender's τ, acc23 and SPA with intervals, then learned − X), and the adoption verdict."""

from __future__ import annotations

import math

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.calibration.meta import Estimate
from mt_eval.calibration.report import LEARNED, Report
from mt_eval.render.compare import LABELS


def _ci(e: Estimate | None, signed: bool = False) -> str:
    if e is None or not math.isfinite(e.value):
        return "–"
    fmt = "{:+.4f}" if signed else "{:.4f}"
    inside = "" if not math.isfinite(e.low) else f" [{fmt.format(e.low)}, {fmt.format(e.high)}]"
    return fmt.format(e.value) + inside


def _label(key: str) -> str:
    return LABELS.get(key, key)


def render(report: Report, console: Console) -> None:
    p = report.profile
    console.print(f"[bold]{report.mode}[/bold] on {escape(report.dataset)} ({report.scale}): {report.n_segments} "
                  f"judged segments, {report.n_items} source items, {report.n_systems} systems", highlight=False)
    console.print(f"candidates: {', '.join(_label(c) for c in report.candidates)}"
                  + (f"; left out: {'; '.join(f'{k} ({v})' for k, v in report.dropped.items())}" if report.dropped
                     else ""), highlight=False, soft_wrap=True)
    weights = ", ".join(f"{_label(m)} {w:.3f}" for m, w in p.weights.items())
    console.print(f"profile [bold]{p.id}[/bold] ({escape(p.name)}): {weights}", highlight=False, soft_wrap=True)
    if report.first_stage:
        first = ", ".join(f"{_label(m)} {w:.3f}" for m, w in sorted(report.first_stage.items(), key=lambda kv: -kv[1]))
        console.print(f"stage-one PLS weights (z-scored): {first}", highlight=False, soft_wrap=True)
    for block in report.blocks:
        table = Table(title=f"{block.name}: {block.n_items} items, {block.n_segments} segments", title_justify="left")
        for column in ("", "Kendall τ (item-grouped)", "acc23 (tie-calibrated)", "ε", "SPA (systems)"):
            table.add_column(column, justify="left" if not column else "right")
        for key, row in block.rows.items():
            name = "[bold]learned profile[/bold]" if key == LEARNED else escape(_label(key))
            table.add_row(name, _ci(row.tau), _ci(row.acc23), f"{row.epsilon:.3g}", _ci(row.spa))
        for other, d in block.diffs.items():
            table.add_row(f"learned − {escape(_label(other))}", _ci(d["tau"], True), _ci(d["acc23"], True), "", "")
        console.print(table)
    for line in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    verdict = "[green]adopt[/green]" if report.verdict["adopt"] else "[yellow]do not adopt[/yellow]"
    console.print(f"verdict: {verdict} (adopt only when, held out, the learned profile is ahead of chrF++ and the "
                  "spec composite on τ and not behind on acc23)", highlight=False, soft_wrap=True)
    for line in report.verdict["lines"]:
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)

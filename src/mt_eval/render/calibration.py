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
        floor = f"; acc23 tie floor {block.acc23_floor:.4f}" if math.isfinite(block.acc23_floor) else ""
        table = Table(title=f"{block.name}: {block.n_items} items, {block.n_segments} segments{floor}",
                      title_justify="left")
        for column in ("", "Kendall τ (item-grouped)", "acc23 (tie-calibrated)", "ε", "SPA (systems)"):
            table.add_column(column, justify="left" if not column else "right")
        for key, row in block.rows.items():
            name = "[bold]learned profile[/bold]" if key == LEARNED else escape(_label(key))
            acc = _ci(row.acc23) + (" = floor" if row.at_floor else "")  # ε ties every pair: acc23 says nothing
            table.add_row(name, _ci(row.tau), acc, f"{row.epsilon:.3g}", _ci(row.spa))
        for other, d in block.diffs.items():
            table.add_row(f"learned − {escape(_label(other))}", _ci(d["tau"], True), _ci(d["acc23"], True), "", "")
        console.print(table)
    for line in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)
    verdict = "[green]adopt[/green]" if report.verdict["adopt"] else f"[yellow]{report.verdict['verdict']}[/yellow]"
    reason = f": {escape(report.verdict['reason'])}" if report.verdict.get("reason") else ""
    console.print(f"verdict: {verdict}{reason} (adopt only when, held out, the interval of the learned profile's "
                  "τ gain over chrF++ and the spec composite excludes 0 and it is not behind on acc23)",
                  highlight=False, soft_wrap=True)
    if any(row.at_floor for block in report.blocks for row in block.rows.values()):
        console.print("acc23 '= floor': the calibrated ε ties (nearly) every pair, so the value is the share of pairs "
                      "people tie, the same for any metric", highlight=False, soft_wrap=True)
    for line in report.verdict["lines"]:
        console.print(f"  {escape(line)}", highlight=False, soft_wrap=True)

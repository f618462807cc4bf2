"""``mt-eval robustness``'s table: sensitivity per degradation and stability per edit, per metric."""

from __future__ import annotations

from rich.table import Table

from mt_eval.robustness import Cell, RobustnessReport


def _fmt(cell: Cell | None) -> str:
    return "—" if cell is None or cell.value is None else f"{cell.value:.3f}"


def robustness_table(report: RobustnessReport) -> Table:
    """Rows: metrics and the composite; columns: each degradation's sensitivity, the pooled sensitivity, each
    edit's stability, the pooled stability (higher is better everywhere)."""
    table = Table(title=f"Robustness of every metric on {report.card} ({report.system}, {report.entries} entries)",
                  caption="sensitivity: share of changed entries whose score drops; stability: 1 − mean |Δ| of "
                          "0–1 scores" + ("; not run: " + "; ".join(f"{k} ({v})" for k, v in report.skipped.items())
                                          if report.skipped else ""))
    table.add_column("metric")
    for name in report.degradations:
        table.add_column(f"S {name.replace('_', ' ')}", justify="right")
    table.add_column("sensitivity", justify="right", style="bold")
    for name in report.edits:
        table.add_column(f"St {name}", justify="right")
    table.add_column("stability", justify="right", style="bold")
    for metric in report.metrics:
        sens, stab = report.sensitivity[metric], report.stability[metric]
        table.add_row(metric, *(_fmt(sens.get(d)) for d in report.degradations), _fmt(report.pooled(sens)),
                      *(_fmt(stab.get(x)) for x in report.edits), _fmt(report.pooled(stab)),
                      end_section=metric == report.metrics[-2] if len(report.metrics) > 1 else False)
    return table

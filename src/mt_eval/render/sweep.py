"""Terminal rendering of a sweep: the dry-run matrix with costs (§10.2), the live progress (one
overall bar and a line per cell, on stderr), the cells' outcomes and the sweep report."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from mt_eval.engine.runner import EngineStats
from mt_eval.scoring.composite import tier_label
from mt_eval.sweep.execute import Outcome
from mt_eval.sweep.plan import Cell
from mt_eval.sweep.report import SweepReport


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def _num(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def print_matrix(name: str, plans: Sequence[tuple[Cell, dict[str, Any] | None]], total: float | None,
                 console: Console) -> None:
    """The cells with their method, requests and estimated cost, then the sweep's total."""
    table = Table(title=f"sweep {escape(name)}: {len(plans)} cells", box=box.SIMPLE_HEAD)
    for header in ("cell", "method", "entries", "requests", "est. cost"):
        table.add_column(header, justify="right" if header in ("entries", "requests", "est. cost") else "left")
    for cell, plan in plans:
        if plan is None:
            table.add_row(escape(cell.key), escape(cell.spec), "", "0", "$0.0000 (no paid requests)")
        else:
            table.add_row(escape(cell.key), escape(cell.spec), str(plan["entries"]), str(plan["requests"]),
                          _money(plan.get("est_cost_usd")))
    console.print(table)
    unknown = "" if total is not None else " (a model is not in the pricing table: give [method] pricing = FILE)"
    console.print(f"estimated sweep cost: {_money(total)}{unknown}", highlight=False, soft_wrap=True)


class SweepProgress:
    """One overall bar (entries over all cells) and a line per cell, updated from any thread."""

    def __init__(self, console: Console, cells: Sequence[Cell], entries: dict[str, int]) -> None:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("{task.fields[note]}"), TimeElapsedColumn())
        self.bar = Progress(*columns, console=console, transient=False)
        self._lock = threading.Lock()
        self._done: dict[str, int] = {}
        self.total = self.bar.add_task("[bold]sweep", total=sum(entries.values()), note=f"0/{len(cells)} cells")
        self.lines: dict[str, TaskID] = {c.key: self.bar.add_task(escape(c.key), total=entries[c.key], note="waiting")
                                         for c in cells}
        self._cells = len(cells)
        self._entries = entries
        self._ended = 0

    def __enter__(self) -> SweepProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)

    def cell(self, cell: Cell, stats: EngineStats) -> None:
        with self._lock:
            self._done[cell.key] = stats.done
            self.bar.update(self.lines[cell.key], completed=stats.done,
                            note=f"errors {stats.errors} · retries {stats.retries} · ${stats.cost_usd:.4f}")
            self.bar.update(self.total, completed=sum(self._done.values()))

    def ended(self, outcome: Outcome) -> None:
        with self._lock:
            self._ended += 1
            self._done[outcome.cell.key] = self._entries[outcome.cell.key]
            note = outcome.status
            if outcome.composite is not None:
                note += f" · composite {outcome.composite:.3f}"
            if outcome.message:
                note += f": {escape(outcome.message)}"
            self.bar.update(self.lines[outcome.cell.key], completed=self._entries[outcome.cell.key], note=note)
            self.bar.update(self.total, completed=sum(self._done.values()), note=f"{self._ended}/{self._cells} cells")


def print_outcomes(outcomes: Sequence[Outcome], console: Console) -> None:
    """One row per cell, best composite first; failures last, with their reason."""
    table = Table(box=box.SIMPLE_HEAD)
    for header in ("rank", "cell", "composite", "status", "worker", "card"):
        table.add_column(header)
    scored = sorted((o for o in outcomes if o.composite is not None), key=lambda o: -(o.composite or 0.0))
    for rank, o in enumerate(scored, 1):
        table.add_row(str(rank), escape(o.cell.key), _num(o.composite), o.status, escape(o.worker),
                      escape(str(o.card_path)))
    for o in outcomes:
        if o.composite is None:
            table.add_row("–", escape(o.cell.key), "–", o.status, escape(o.worker), escape(o.message or ""))
    console.print(table)


def print_report(report: SweepReport, console: Console) -> None:
    """Best configuration per model, each axis's effect, and the entries no cell gets right."""
    best = Table(title=f"sweep {escape(report.name)}: best configuration per model", box=box.SIMPLE_HEAD)
    for header in ("model", "cell", "composite [95% CI]", "tier", "cost"):
        best.add_column(header)
    for s in report.best:
        lo, hi = s.ci
        best.add_row(escape(s.model), escape(s.cell.key), f"{s.composite:.3f} [{_num(lo)}, {_num(hi)}]",
                     escape(tier_label(s.tier)), _money(s.cost_usd))
    console.print(best)
    effects = Table(title="effect of each axis: mean Δ composite against the axis's first value",
                    box=box.SIMPLE_HEAD)
    for header in ("axis", "value", "vs", "pairs", "mean Δ [95% CI]"):
        effects.add_column(header)
    for e in report.effects:
        effects.add_row(escape(e.axis), escape(e.value), escape(e.baseline), str(e.pairs),
                        f"{e.mean_delta:+.3f} [{e.ci[0]:+.3f}, {e.ci[1]:+.3f}]")
    console.print(effects if report.effects else "no axis has two values with cells alike otherwise")
    console.print(f"entries no cell gets right (exact match or entry chrF++ ≥ {report.right_chrf:g}): "
                  f"{len(report.hard)} of {report.entries}", highlight=False)
    hard = Table(box=box.SIMPLE_HEAD)
    for header in ("entry", "best chrF++", "best cell", "source"):
        hard.add_column(header)
    for h in report.hard[:20]:
        hard.add_row(str(h.entry_id), f"{h.best_chrf:.1f}", escape(h.best_cell), escape(h.source[:80]))
    if report.hard:
        console.print(hard)
    for cell in report.missing:
        console.print(f"[yellow]missing:[/yellow] {escape(cell.key)} has no verified card yet", highlight=False)

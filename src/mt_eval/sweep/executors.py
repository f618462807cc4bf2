"""The executor choice: ``local`` (threads in this process, one shared pool) or ``ray`` (tasks on a
cluster). Kept apart from both so that neither imports the other."""

from __future__ import annotations

from collections.abc import Callable

from mt_eval.errors import UserError
from mt_eval.sweep.execute import CellProgress, Outcome, Settings, run_local
from mt_eval.sweep.plan import Cell

EXECUTORS = ("local", "ray")


def run_cells(cells: list[Cell], settings: Settings, jobs: int, *, executor: str = "local",
              ray_address: str | None = None, progress: CellProgress | None = None,
              done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run the cells with the chosen executor (``local`` threads, or ``ray`` tasks: no live progress
    there, each cell is reported as it comes back); outcomes in plan order."""
    if executor == "ray":
        from mt_eval.sweep.ray_executor import run_ray  # Ray is optional: imported only when asked for

        return run_ray(cells, settings, jobs, ray_address, done=done)
    if executor != "local":
        raise UserError(f"unknown executor '{executor}'", field="executor", hint="choose local or ray")
    return run_local(cells, settings, jobs, progress=progress, done=done)

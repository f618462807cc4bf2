"""The Ray executor: each cell is a Ray task on an existing cluster; the same cards come back.

A task runs :func:`~mt_eval.sweep.execute.run_cell` in a Ray worker process (so a worker needs
mt-eval and the corpus at the same absolute path: the usual case for a cluster started from one
environment on one file system) and returns the cell's outcome with its card's and statistics
sidecar's bytes; the driver writes them under its own runs folder, publishes and reports, exactly
as the local executor does. The cell's journal is written by the worker where it runs, so
``--resume`` skips finished entries on a cluster whose workers share the driver's disk.

A worker reads the API key from its own environment, like any run; the driver hands its tasks the
key variables its LLM cells name (``api_key_env`` or the provider's, e.g. ``OPENROUTER_API_KEY``)
when they are set where the sweep was started (Ray's ``runtime_env``), and nothing else.

Limits are per task here: each cell has its own connection pool, with ``--concurrency`` requests in
flight, and ``jobs`` tasks run at once, so a provider sees at most ``jobs × concurrency``.

Ray is optional: it is imported only here, and its absence is one line, exit 2.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from mt_eval.errors import UserError
from mt_eval.sweep.execute import Outcome, Settings, run_cell, with_bytes, write_back
from mt_eval.sweep.plan import Cell

QUIET_RAY = {"RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1",
             "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0"}


def import_ray() -> Any:
    """The ``ray`` module, or one line (exit 2) saying it is not installed."""
    for key, value in QUIET_RAY.items():
        os.environ.setdefault(key, value)
    try:
        import ray
    except ImportError:
        raise UserError("--executor ray needs Ray, which is not installed",
                        hint="pip install 'ray>=2.9', or use the default --executor local") from None
    return ray


def key_variables(cells: Iterable[Cell]) -> dict[str, str]:
    """The API key variables the LLM cells read, with their values here (unset ones are left out)."""
    from mt_eval.providers.openai_compat import key_variable

    names = {key_variable(c.options.get("provider"), c.options.get("base_url"), c.options.get("api_key_env"))
             for c in cells if c.options.get("model")}
    return {name: os.environ[name] for name in sorted(n for n in names if n) if os.environ.get(name)}


def _cell_task(cell: Cell, settings: Settings) -> Outcome:
    """What a Ray worker runs: the cell, then its card's bytes for the driver."""
    return with_bytes(run_cell(cell, settings))


def run_ray(cells: Iterable[Cell], settings: Settings, jobs: int, address: str | None, *,
            done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run the cells as Ray tasks on the cluster at ``address``, ``jobs`` at once; ``done`` is called
    on the driver as each comes back, after its card is written there."""
    ray = import_ray()
    if not address:
        raise UserError("--executor ray needs --ray-address ADDR (an existing cluster, e.g. 127.0.0.1:6379)")
    todo = list(cells)
    env = key_variables(todo)
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False,
                 runtime_env={"env_vars": env} if env else None)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UserError(f"cannot connect to the Ray cluster at {address}: {str(exc).splitlines()[0]}") from None
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_cell_task)
        waiting = list(todo)
        running: dict[Any, Cell] = {}
        outcomes: list[Outcome] = []
        while waiting or running:
            while waiting and len(running) < max(1, jobs):
                cell = waiting.pop(0)
                running[task.remote(cell, settings)] = cell
            ready, _ = ray.wait(list(running), num_returns=1)
            for ref in ready:
                cell = running.pop(ref)
                try:
                    outcome = ray.get(ref)
                except ray.exceptions.RayError as exc:
                    outcome = Outcome(cell, "failed", message=f"Ray task failed: {str(exc).splitlines()[0]}")
                write_back(outcome)
                outcomes.append(outcome)
                if done:
                    done(outcome)
    finally:
        ray.shutdown()
    order = {c.key: i for i, c in enumerate(todo)}
    return sorted(outcomes, key=lambda o: order[o.cell.key])

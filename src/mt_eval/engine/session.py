"""What ``mt-eval run`` does around the engine: resume bookkeeping, the plan, budget, progress bar.

Kept out of ``cli.py`` so the command stays a list of options. The run's options (never the API
key: only the *name* of the variable holding it) are stored in the journal header, so
``mt-eval run --resume runs/<run_id>`` rebuilds exactly the same corpus selection and method.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mt_eval.engine.runner import EngineStats, read_journal, request_for
from mt_eval.errors import UserError


def invocation_for_resume(run_dir: Path) -> dict[str, Any]:
    header, _ = read_journal(run_dir / "journal.jsonl")
    inv = header.get("invocation")
    if not header or not isinstance(inv, dict) or not inv.get("method"):
        raise UserError("cannot resume: no run journal with its options here", file=str(run_dir / "journal.jsonl"))
    return inv


def finished_ids(run_dir: Path | None) -> set[int]:
    if run_dir is None:
        return set()
    _, done = read_journal(run_dir / "journal.jsonl")
    return {i for i, t in done.items() if t.error is None}


def plan_for(method: Any, dataset: Any, skip: set[int]) -> dict[str, Any] | None:
    """The request plan of a method that can make one (LLM methods), for the entries still to do."""
    planner = getattr(method, "plan", None)
    if planner is None:
        return None
    src, tgt = dataset.info.source_language, dataset.info.target_language
    return dict(planner([request_for(e, src, tgt) for e in dataset.entries if e.id not in skip]))


def print_plan(plan: dict[str, Any], console: Console) -> None:
    cost = plan.get("est_cost_usd")
    console.print(
        f"plan: {plan['entries']} entries in {plan['requests']} requests (batch size {plan['batch_size']}, "
        f"{plan['concurrency']} in flight); estimated {plan['est_prompt_tokens']:,} prompt + "
        f"{plan['est_completion_tokens']:,} completion tokens; estimated cost "
        + (f"${cost:.4f}" if cost is not None else "unknown (model not in the pricing table)")
        + f" (pricing: {plan['pricing']})" + (f"; {plan['note']}" if plan.get("note") else ""),
        highlight=False, soft_wrap=True)


def check_budget(plan: dict[str, Any] | None, budget: float | None, yes: bool,
                 confirm: Callable[[str], bool]) -> None:
    """Ask before a run estimated above ``--budget-usd``; without a terminal, refuse unless -y."""
    if plan is None or budget is None or yes:
        return
    cost = plan.get("est_cost_usd")
    if cost is None:
        raise UserError("cannot check --budget-usd: this model is not in the pricing table",
                        hint="add it to a --pricing FILE, or pass -y")
    if cost <= budget:
        return
    question = f"estimated cost ${cost:.4f} exceeds --budget-usd {budget:.4f}; run anyway?"
    if not sys.stdin.isatty():
        raise UserError(f"estimated cost ${cost:.4f} exceeds --budget-usd {budget:.4f}", hint="pass -y to run anyway")
    if not confirm(question):
        raise UserError("not run: over budget")


class RunProgress:
    """A rich bar: done/total, errors, retries, tokens and cost so far (to stderr)."""

    def __init__(self, console: Console, name: str, total: int) -> None:
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("errors {task.fields[errors]} · retries {task.fields[retries]} · "
                              "{task.fields[tokens]} tokens · ${task.fields[cost]}"), TimeElapsedColumn())
        self.bar = Progress(*columns, console=console, transient=True)
        self.task = self.bar.add_task(name, total=total, errors=0, retries=0, tokens="0", cost="0.0000")

    def __enter__(self) -> RunProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)

    def __call__(self, s: EngineStats) -> None:
        self.bar.update(self.task, completed=s.done, errors=s.errors, retries=s.retries,
                        tokens=f"{s.tokens:,}", cost=f"{s.cost_usd:.4f}")

"""What ``mt-eval run`` does around the engine: resume bookkeeping, the request plan and the budget.

Kept out of the CLI so the command stays a list of options (the bar and the plan's text are in
``render/progress.py``). The run's options (never the API
key: only the *name* of the variable holding it) are stored in the journal header, so
``mt-eval run --resume runs/<run_id>`` rebuilds exactly the same corpus selection and method.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mt_eval.engine.runner import read_journal, request_for
from mt_eval.errors import UserError
from mt_eval.methods.base import Method


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


def plan_for(method: Method, dataset: Any, skip: set[int]) -> dict[str, Any] | None:
    """The request plan for the entries still to do; None for a method that makes no paid requests."""
    src, tgt = dataset.info.source_language, dataset.info.target_language
    return method.plan([request_for(e, src, tgt) for e in dataset.entries if e.id not in skip])


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

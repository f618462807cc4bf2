"""One run, orchestrated: the plan, the budget, the resume, the progress, the card: ``mt_eval.api.run``.

``mt-eval run``/``score`` (``cli/run.py``, which only parses options and renders), the sweep's cells
(``sweep/execute.py``) and :func:`evaluate_card` all go through :func:`run`, so a budget is asked about,
a resume is checked and its journal read, an existing ``--out`` is refused, in one place. What the caller shows
(the plan, the progress bar, a question) comes in as callbacks; nothing here prints or prompts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.api.runs import finish_run, interrupted, open_journal, prepare_run, translate
from mt_eval.corpus.models import Dataset
from mt_eval.engine.journal import DEFAULT_RUNS_DIR
from mt_eval.engine.runner import Progress
from mt_eval.engine.session import check_budget, plan_for
from mt_eval.errors import UserError
from mt_eval.methods.base import Method
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.scoring.calibrated import CalibratedProfile
from mt_eval.stats.config import BootstrapConfig

__all__ = ["Confirm", "RunOutcome", "check_out", "evaluate_card", "run"]

Confirm = Callable[[str], bool]
"""Asked before a run estimated above the budget: True runs it. None: nobody to ask, so it is refused."""


@dataclass(frozen=True)
class RunOutcome:
    """What a run gave: its plan (None for a method that makes no paid requests), and unless it was a dry run
    the sealed card and where it was written."""

    plan: dict[str, Any] | None
    card: dict[str, Any] | None = None
    path: Path | None = None


def check_out(out: str | Path | None, overwrite: bool) -> None:
    """Refuse an ``out`` that would replace a file, before any work (``report`` has the same rule)."""
    if out is None:
        return
    target = Path(out)
    if target.is_dir():
        raise UserError("is a directory; give a file name for --out", file=str(target))
    if target.exists() and not overwrite:
        raise UserError("already exists; pass --force to overwrite it (or --out another file)", file=str(target),
                        field="out")


def run(
    dataset: Dataset,
    method: Method,
    *,
    condition: str = "default",
    runs_dir: str | Path = DEFAULT_RUNS_DIR,
    out: str | Path | None = None,
    overwrite: bool = False,
    selection: dict[str, Any] | None = None,
    resume: str | Path | None = None,
    invocation: dict[str, Any] | None = None,
    bootstrap: BootstrapConfig | None = None,
    skip_analyser: bool = False,
    terminology: str | Path | None = None,
    opt_in: Sequence[OptInMetric] = (),
    profile: CalibratedProfile | None = None,
    budget_usd: float | None = None,
    confirm: Confirm | None = None,
    on_plan: Callable[[dict[str, Any] | None], None] | None = None,
    progress: Progress | None = None,
    dry_run: bool = False,
) -> RunOutcome:
    """Check, plan, confirm, translate, score and write one run; see :func:`evaluate_card` for the card.

    In order, before any request: ``out`` (an existing file needs ``overwrite``), the analyser and opt-in
    metrics, a ``resume``'s journal against ``invocation`` (read once: its finished entries are neither planned
    nor sent again); then ``on_plan(plan)``; with ``dry_run`` that is all (nothing written). Over ``budget_usd``
    the run goes on only when ``confirm(question)`` says so (no ``confirm``: refused). Only then is a fresh
    run's journal started and the method run; Ctrl-C raises ``api.runs.RunInterrupted``. ``profile``: the
    calibrated profile the composite is computed under (None: the target language's A/B).
    """
    check_out(out, overwrite)
    prepared = prepare_run(dataset, method, condition=condition, runs_dir=runs_dir, selection=selection,
                           resume=resume, invocation=invocation, skip_analyser=skip_analyser,
                           terminology=terminology, opt_in=opt_in, journal=False, profile=profile)
    plan = plan_for(prepared.method, dataset, {i for i, t in prepared.done.items() if t.error is None})
    if on_plan is not None:
        on_plan(plan)
    if dry_run:
        return RunOutcome(plan)
    check_budget(plan, budget_usd, confirm)
    if resume is None:
        open_journal(prepared, invocation)  # only now: a dry run or a refused budget leaves no run directory
    try:
        translations, elapsed = asyncio.run(translate(prepared, progress))
    except KeyboardInterrupt:
        raise interrupted(prepared) from None
    card, path = finish_run(prepared, translations, elapsed, out=out, bootstrap=bootstrap, opt_in=opt_in,
                            profile=profile)
    return RunOutcome(plan, card, path)


def evaluate_card(
    dataset: Dataset,
    method: Method,
    *,
    condition: str = "default",
    runs_dir: str | Path = DEFAULT_RUNS_DIR,
    out: str | Path | None = None,
    selection: dict[str, Any] | None = None,
    progress: Progress | None = None,
    bootstrap: BootstrapConfig | None = None,
    resume: str | Path | None = None,
    invocation: dict[str, Any] | None = None,
    skip_analyser: bool = False,
    terminology: str | Path | None = None,
    opt_in: Sequence[OptInMetric] = (),
    profile: CalibratedProfile | None = None,
) -> tuple[dict[str, Any], Path]:
    """Translate every entry with ``method``, score it and write a sealed run card: the card and its path.

    Finished entries are journalled in ``<runs_dir>/<run_id>/journal.jsonl`` as they complete
    (methods that are ``resumable``: a predictions file keeps none, and with ``out`` leaves no run
    directory); ``resume=<run dir>`` continues that run (same run id), sending only entries not yet
    finished. ``invocation`` (CLI options, never secrets) is stored in the journal header; a resume
    compares its own with it and refuses a difference (``engine/session.check_resume``), never
    takes options from the file. Ctrl-C raises :class:`RunInterrupted`. :func:`run` without a budget, overwriting
    ``out``. This runs its own event loop
    (``asyncio.run``): inside a running one, use ``mt_eval.evaluate``/``evaluate_async``.
    A target card that declares an analyser this machine lacks stops the run *before* translating
    (docs/decisions.md §19) unless ``skip_analyser``, which scores profile B and is recorded on the card.
    ``opt_in``: opt-in metrics scored beside the others, each recorded in its own card block (``metrics.opt_in``:
    ``SemanticScore(SemanticConfig)``, ``CometScore(CometConfig)``, generated judges from
    ``metrics.judges.judge_metrics``); one that would send a secret (held-out) entry off the machine, or whose
    package is missing, is refused before anything runs.
    """
    outcome = run(dataset, method, condition=condition, runs_dir=runs_dir, out=out, overwrite=True,
                  selection=selection, progress=progress, bootstrap=bootstrap, resume=resume, invocation=invocation,
                  skip_analyser=skip_analyser, terminology=terminology, opt_in=opt_in, profile=profile)
    assert outcome.card is not None and outcome.path is not None  # not a dry run: written
    return outcome.card, outcome.path

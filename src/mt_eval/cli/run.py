"""``mt-eval run``: a method over a corpus → sealed run card (``score`` for an output file is in ``cli/score.py``).

Flags follow sacrebleu where it has one (``-l en-es``; ``-m`` is kept for metrics, as in
``compare``, so ``run`` spells ``--method`` out), and a language without a card is announced on
stderr before any work, not only recorded on the card.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from mt_eval.cli.common import (
    BOOTSTRAP,
    DEFAULT_CACHE_PATH,
    DEFAULT_RUNS_DIR,
    LLM,
    AlphaOpt,
    BootOpt,
    CometModelOpt,
    ConditionOpt,
    CorpusOpt,
    DifficultyOpt,
    ForceOpt,
    IdsOpt,
    JudgeCacheOpt,
    JudgeOpt,
    LangPairOpt,
    NoSemanticOpt,
    OutOpt,
    ProfileOpt,
    RefFileOpt,
    RunsDirOpt,
    SeedOpt,
    SegmentOpt,
    SemanticModelOpt,
    SemanticOpt,
    SemanticUrlOpt,
    SkipOpt,
    SpBleuOpt,
    SrcFileOpt,
    SrcLangOpt,
    TermOpt,
    TgtLangOpt,
    bootstrap_config,
    check_at_least_zero,
    err,
    language_pair,
    opt,
    opt_in_inputs,
    out,
    path_str,
    spbleu_invocation,
    spbleu_metrics,
)
from mt_eval.errors import UserError
from mt_eval.methods.base import Method
from mt_eval.methods.pipeline import DEFAULT_FST_RETRIES
from mt_eval.stats.config import BootstrapConfig


def load_selection(
    corpus: Path | None, source_file: Path | None, reference_files: list[Path] | None,
    source_lang: str | None, target_lang: str | None,
    segment: str | None = None, ids: str | None = None, difficulty: str | None = None,
    *, need_source: bool = True,
) -> tuple[Any, Any, dict[str, Any]]:
    """(full dataset, selected dataset, selection); methods are built on the full corpus so that
    a plain-text predictions file stays aligned with corpus order whatever is selected.

    ``need_source`` False (``score``): references alone are a dataset, as sacrebleu scores them; the
    source language is then optional ("und") and the metrics that read the source are null."""
    from mt_eval.corpus import load_corpus, load_text_pair, select_entries
    from mt_eval.languages.card import UNDETERMINED

    if corpus is not None:
        dataset = load_corpus(corpus, source_lang=source_lang, target_lang=target_lang)
    elif reference_files and (source_file or not need_source):
        if not target_lang or (source_file and not source_lang):
            raise UserError("--source-file/--reference-file need --source-lang and --target-lang (-l SRC-TGT)"
                            if source_file else "--reference-file without --source-file needs --target-lang")
        dataset = load_text_pair(source_file, reference_files, source_lang or UNDETERMINED, target_lang)
    else:
        raise UserError("give --corpus FILE, or --source-file and --reference-file"
                        + ("" if need_source else " (or --reference-file alone)"))
    selection = {k: v for k, v in {"segment": segment, "ids": ids, "difficulty": difficulty}.items() if v}
    selected = select_entries(dataset, segment=segment, ids=ids, difficulty=difficulty) if selection else dataset
    return dataset, selected, selection


def reference_paths(paths: list[Path] | None) -> str | list[str] | None:
    """How the journal records --reference-file: one path as a string (as before it was repeatable), so a
    run started before resumes; several as a list."""
    if not paths:
        return None
    return str(paths[0]) if len(paths) == 1 else [str(p) for p in paths]


def warn_language_cards(dataset: Any) -> None:
    """Print the language cards' warnings (a generic card for a language without one, a missing
    tokenizer) on stderr now: the card records them too, but nobody reads a card before trusting it."""
    from rich.markup import escape

    from mt_eval.languages.card import language_card

    codes = dict.fromkeys((dataset.info.source_language, dataset.info.target_language))
    for warning in dict.fromkeys(w for code in codes for w in language_card(code).warnings):
        err.print(f"[yellow]warning:[/yellow] {escape(warning)}", highlight=False, soft_wrap=True)


def scoring_options(scoring: dict[str, Any] | None, embedding: Any = None) -> dict[str, Any]:
    """``evaluate``'s scoring keywords from the invocation's JSON-safe ``scoring`` block: ``semantic``
    ([backend, model, url]), ``judges`` (paths) and ``comet_model`` (a path) there become the one ``opt_in``
    sequence of metric objects here (``metrics.opt_in``); ``embedding``: semantic_score's progress callback (a bar
    while it embeds what its vector cache lacks)."""
    from mt_eval.metrics.comet import CometScore
    from mt_eval.metrics.embeddings import SemanticConfig
    from mt_eval.metrics.semantic import SemanticScore

    options = dict(scoring or {})
    options.pop("profile", None)  # not evaluate's: applied around it (``_evaluate``)
    semantic = options.pop("semantic", None)
    judges, judge_cache = options.pop("judges", None), options.pop("judge_cache", None)
    comet, spbleu = _comet(options.pop("comet_model", None)), spbleu_metrics(options.pop("spbleu", None))
    return {**options, "opt_in": [*([SemanticScore(SemanticConfig.parse(*semantic), embedding)] if semantic else []),
                                  *([CometScore(comet)] if comet else []), *_judges(judges, judge_cache), *spbleu]}


def _comet(path: str | None) -> Any:
    return opt_in_inputs(None, DEFAULT_CACHE_PATH, path)[1]


def comet_invocation(path: str | None) -> dict[str, Any]:
    """``{"comet_model": PATH}`` checked now (a bad path or no unbabel-comet: one line before any work), or
    nothing without --comet-model."""
    if path is None:
        return {}
    _comet(path)
    return {"comet_model": path}


def _judges(paths: list[str] | None, cache: str | None) -> list[Any]:
    return opt_in_inputs(paths, cache or DEFAULT_CACHE_PATH, None)[0]  # a bad judge card: one line, before any work


def judge_invocation(paths: list[Path] | None, cache: Path) -> dict[str, Any]:
    """``{"judges": [PATH…], "judge_cache": PATH}`` with every judge card read and checked now, or nothing
    without --judge (so the invocation of an ordinary run is as before)."""
    if not paths:
        return {}
    _judges([str(p) for p in paths], str(cache))
    return {"judges": [str(p) for p in paths], "judge_cache": str(cache)}


def profile_invocation(path: Path | None, semantic: dict[str, Any],
                       judges: dict[str, Any] | None = None) -> dict[str, Any]:
    """``{"profile": PATH}`` (checked now) and, when the profile weights semantic_score and no --semantic was
    given, the backend it names: a profile says what it needs and ``score --profile P`` computes it. A profile
    that weights a generated judge needs that judge card among --judge (one line naming it, otherwise): the
    judge sends text to its endpoint, so it is never fetched from what a profile says."""
    if path is None:
        return {}
    from mt_eval.runcard.judges import require_judges
    from mt_eval.scoring.calibrated import load_profile

    profile = load_profile(path)
    given = _judges((judges or {}).get("judges"), (judges or {}).get("judge_cache"))
    require_judges(profile.judges, given, f"the profile {path} weights")
    needs = profile.semantic if "semantic_score" in profile.weights and not semantic else None
    return {"profile": str(path), **({"semantic": [needs["backend"], needs.get("model"), None]} if needs else {})}


def semantic_default(off: bool) -> dict[str, Any]:
    """run and score score semantic_score by default with the bundled e5, as the spec's composite expects (an
    explicit --semantic, or the backend a --profile names, replaces it); nothing with --no-semantic."""
    from mt_eval.metrics.semantic import DEFAULT_BACKEND

    return {} if off else {"semantic": [DEFAULT_BACKEND, None, None]}


def semantic_invocation(backend: str | None, model: str | None, url: str | None, off: bool = False) -> dict[str, Any]:
    """``{"semantic": [backend, model, url]}`` checked now (before any work), or nothing without --semantic
    (``semantic_default`` adds the default); --no-semantic with any --semantic option is one line."""
    if off and (backend or model or url):
        raise UserError("--no-semantic leaves semantic_score out: give it without --semantic, --semantic-model or "
                        "--semantic-url", field="semantic")
    if backend is None:
        if model or url:
            raise UserError("--semantic-model and --semantic-url need --semantic BACKEND", field="semantic")
        return {}
    from mt_eval.metrics.embeddings import SemanticConfig

    SemanticConfig.parse(backend, model, url)
    return {"semantic": [backend, model, url]}


def _evaluate(full: Any, dataset: Any, method_spec: str | Method, condition: str, runs_dir: Path,
              out_path: Path | None, selection: dict[str, Any], bootstrap: BootstrapConfig,
              llm: dict[str, Any] | None = None, resume: Path | None = None, invocation: dict[str, Any] | None = None,
              dry_run: bool = False, budget: float | None = None, yes: bool = False,
              scoring: dict[str, Any] | None = None, failed_exit: int = 0, force: bool = True,
              development_data: str | None = None) -> None:
    """Build the method, hand the run to ``api.run`` and render what it reports; ``failed_exit``: the exit code
    when entries failed (run: 3); ``force`` False: an existing ``out_path`` is refused before any work."""
    from contextlib import ExitStack

    from rich.markup import escape

    from mt_eval.api.orchestrate import run as run_orchestrated
    from mt_eval.api.runs import RunInterrupted
    from mt_eval.engine.failures import Failures
    from mt_eval.engine.runner import EngineStats
    from mt_eval.engine.session import resume_command
    from mt_eval.methods.registry import build_method
    from mt_eval.render.card import print_summary
    from mt_eval.render.progress import EmbeddingProgress, RunProgress, print_plan
    from mt_eval.scoring.calibrated import load_profile

    method = (build_method(method_spec, dataset=full, llm_options={**(llm or {}), "require_key": not dry_run})
              if isinstance(method_spec, str) else method_spec)  # a dry run sends nothing: no key needed
    if development_data is not None:  # part of the method's configuration: config_sha256 and the seal cover it
        method.identity = replace(method.identity, config={**method.identity.config,
                                                           "development_data": development_data})
    warn_language_cards(dataset)

    def on_plan(plan: dict[str, Any] | None) -> None:
        if plan is not None and (dry_run or budget is not None):
            print_plan(plan, out)
        elif plan is None and dry_run:
            out.print(f"plan: {len(dataset.entries)} entries; method {method.identity.name} makes no paid requests")

    profile = (scoring or {}).get("profile")
    with ExitStack() as stack:
        bar: list[Any] = []  # the progress bar starts with the first tick: after the plan and any budget question

        def progress(stats: EngineStats) -> None:  # each new kind of entry error is said as it happens
            if not bar:
                bar.append(stack.enter_context(RunProgress(err, method.identity.name, len(dataset.entries))))
            bar[0](stats)
            for line in stats.failures.new_lines():
                err.print(f"[yellow]error:[/yellow] {escape(line)}", highlight=False, soft_wrap=True)

        try:
            outcome = run_orchestrated(
                dataset, method, condition=condition, runs_dir=runs_dir, out=out_path, overwrite=force,
                selection=selection, resume=resume, invocation=invocation, bootstrap=bootstrap,
                profile=load_profile(profile) if profile else None, budget_usd=None if yes else budget,
                confirm=(lambda q: typer.confirm(q, default=False)) if sys.stdin.isatty() else None,
                on_plan=on_plan, progress=progress, dry_run=dry_run,
                **scoring_options(scoring, EmbeddingProgress(err)))
        except RunInterrupted as exc:
            stack.close()
            kept = (f"saved in {exc.run_dir}/journal.jsonl; resume with: {resume_command(sys.argv[1:], exc.run_dir)}"
                    if exc.run_dir else "this method keeps no journal: run it again")
            err.print(f"[yellow]interrupted:[/yellow] {exc.done} of {exc.total} entries finished and {escape(kept)}",
                      highlight=False, soft_wrap=True)
            raise typer.Exit(130) from None
    card, path = outcome.card, outcome.path
    if card is None:  # a dry run: the plan was all
        return
    print_summary(card, out)
    out.print(f"run card: [bold]{path}[/bold]")
    failed = Failures.of((r["entry_id"], r["error"]) for r in card["results"] if r.get("error"))
    if summary := failed.summary(len(card["results"])):
        colour = "red" if failed.total() >= len(card["results"]) else "yellow"
        err.print(f"[{colour}]{escape(summary)}[/{colour}]", highlight=False, soft_wrap=True)
        if failed_exit:
            raise typer.Exit(failed_exit)


def declaration(value: str | None) -> str | None:
    """``--dev-data-declaration``: a FILE's text when the value names one, else the text itself."""
    if value is None:
        return None
    path = Path(value)
    text = path.read_text(encoding="utf-8").strip() if path.is_file() else value.strip()
    if not text:
        raise UserError("--dev-data-declaration is empty: say which data the method saw, or leave it out",
                        field="--dev-data-declaration")
    return text


def run(
    method: Annotated[str | None, opt("llm, coached, pipeline:validate-retry, apertium:PAIR, predictions:PATH, "
                                      "nmt:DIR (a local NLLB/OPUS-MT checkpoint), lexicon:FILE (word by word), "
                                      "deepl (key in DEEPL_AUTH_KEY) or google (key in GOOGLE_TRANSLATE_API_KEY) "
                                      "(no short form: -m means --metrics everywhere).", "--method")] = None,
    corpus: CorpusOpt = None, source_file: SrcFileOpt = None, reference_file: RefFileOpt = None,
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None, lang_pair: LangPairOpt = None,
    segment: SegmentOpt = None, ids: IdsOpt = None, difficulty: DifficultyOpt = None,
    condition: ConditionOpt = "default", runs_dir: RunsDirOpt = DEFAULT_RUNS_DIR, out_path: OutOpt = None,
    n_boot: BootOpt = BOOTSTRAP.n_resamples, alpha: AlphaOpt = BOOTSTRAP.alpha, seed: SeedOpt = BOOTSTRAP.seed,
    model: Annotated[str | None, opt("LLM model slug, e.g. openai/gpt-4o-mini.")] = None,
    provider: Annotated[str | None, opt("openrouter (default) or openai.")] = LLM.provider,
    base_url: Annotated[str | None, opt("Any OpenAI-compatible server (vLLM, Ollama, llama.cpp).")] = LLM.base_url,
    api_key_env: Annotated[str | None, opt("Environment variable holding the API key.")] = LLM.api_key_env,
    temperature: Annotated[float, opt("Sampling temperature.")] = LLM.temperature,
    max_tokens: Annotated[int | None, opt("Completion token limit per request.")] = LLM.max_tokens,
    llm_seed: Annotated[int | None, opt("Sampling seed sent to the provider.", "--llm-seed")] = LLM.seed,
    system_prompt: Annotated[Path | None, opt("System prompt FILE (default: built-in template).")] = None,
    coaching: Annotated[Path | None, opt("Coaching data FILE (method 'coached').")] = None,
    batch_size: Annotated[int, opt("Entries per request (answers verified per entry id).")] = LLM.batch_size,
    concurrency: Annotated[int, opt("Requests in flight at once.")] = LLM.concurrency,
    max_retries: Annotated[int, opt("HTTP retries per request (429, 5xx, timeouts).")] = LLM.max_retries,
    timeout: Annotated[float, opt("Seconds per HTTP request before it counts as a timeout.")] = LLM.timeout_s,
    validator: Annotated[str | None, opt("pipeline validator: wordlist:FILE or plugin:module:Factory.")] = None,
    fst_retries: Annotated[int, opt("pipeline: retries after a validator rejection.")] = DEFAULT_FST_RETRIES,
    cache: Annotated[Path, opt("SQLite response cache.")] = DEFAULT_CACHE_PATH,
    no_cache: Annotated[bool, opt("Neither read nor write the response cache.", "--no-cache")] = False,
    pricing: Annotated[Path | None, opt("Pricing table JSON (USD per million tokens).")] = None,
    dry_run: Annotated[bool, opt("Print the plan (requests, tokens, cost) and exit.", "--dry-run")] = False,
    budget_usd: Annotated[float | None, opt("Ask before runs estimated above this.", "--budget-usd")] = None,
    yes: Annotated[bool, opt("Do not ask (budget confirmation).", "--yes", "-y")] = False,
    resume: Annotated[Path | None, opt(
        "Finish an interrupted run: give its options again plus --resume runs/<run_id>. The journal is "
        "compared with them, never followed: a difference is refused, naming the flag (-o, --bootstrap, "
        "--timeout and --cache may change).")] = None,
    skip_analyser: SkipOpt = False, terminology: TermOpt = None,
    semantic: SemanticOpt = None, semantic_model: SemanticModelOpt = None, semantic_url: SemanticUrlOpt = None,
    no_semantic: NoSemanticOpt = False,
    profile: ProfileOpt = None, judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH,
    comet_model: CometModelOpt = None, force: ForceOpt = False, spbleu: SpBleuOpt = None,
    dev_data: Annotated[str | None, opt(
        "Which data the method saw for prompting, few-shot examples or tuning (Benchmark Spec §9.2.2): TEXT, or "
        "a FILE holding it; on the card as method_config.development_data (default: none declared).",
        "--dev-data-declaration")] = None,
) -> None:
    """Run a translation METHOD over a corpus and write a sealed run card.

    Examples:

      mt-eval run --corpus examples/ntrex128-eng-spa.json --method apertium:eng-spa

      mt-eval run -c corpus.json --method llm --model openai/gpt-4o-mini --batch-size 10 --concurrency 16

      mt-eval run --source-file src.en --reference-file ref.es -l en-es --method apertium:eng-spa

      mt-eval run -c examples/ntrex128-eng-spa.json --method apertium:eng-spa --no-semantic

      mt-eval run -c corpus.json --method nmt:models/nllb-200-distilled-600M

      DEEPL_AUTH_KEY=... mt-eval run -c corpus.json --method deepl
    """
    source_lang, target_lang = language_pair(lang_pair, source_lang, target_lang)
    if method is None:
        raise UserError("give --method" + (" and the interrupted run's other options: --resume takes them from the "
                                           "command line and compares them with the journal" if resume else ""))
    check_at_least_zero(temperature, "--temperature")
    check_at_least_zero(budget_usd, "--budget-usd")
    # the options come from this command line only, resumed or not (engine/session.py)
    llm = {"model": model, "provider": provider, "base_url": base_url, "api_key_env": api_key_env,
           "temperature": temperature, "max_tokens": max_tokens, "seed": llm_seed,
           "system_prompt_file": path_str(system_prompt), "coaching_file": path_str(coaching),
           "batch_size": batch_size, "concurrency": concurrency, "max_retries": max_retries,
           "timeout_s": timeout, "cache_path": None if no_cache else str(cache),
           "pricing_file": path_str(pricing), "validator": validator, "fst_retries": fst_retries}
    inv: dict[str, Any] = {"method": method, "corpus": path_str(corpus), "source_file": path_str(source_file),
           "reference_file": reference_paths(reference_file), "source_lang": source_lang, "target_lang": target_lang,
           "segment": segment, "ids": ids, "difficulty": difficulty, "condition": condition,
           "runs_dir": str(runs_dir), "out": path_str(out_path), "bootstrap": [n_boot, alpha, seed], "llm": llm,
           "scoring": {"skip_analyser": skip_analyser, "terminology": path_str(terminology),
                       **semantic_default(no_semantic),
                       **(sem := semantic_invocation(semantic, semantic_model, semantic_url, no_semantic)),
                       **(jud := judge_invocation(judge, judge_cache)), **comet_invocation(comet_model),
                       **spbleu_invocation(spbleu), **profile_invocation(profile, sem, jud)}}
    # a --resume's journal is compared with these options once, in api.run (engine/session.py); never followed
    full, dataset, selection = load_selection(corpus, source_file, reference_file, source_lang, target_lang, segment,
                                              ids, difficulty)
    _evaluate(full, dataset, method, condition, runs_dir, out_path, selection, bootstrap_config(n_boot, alpha, seed),
              llm=llm, resume=resume, invocation=inv, dry_run=dry_run, budget=budget_usd, yes=yes,
              scoring=inv["scoring"], failed_exit=3, force=force, development_data=declaration(dev_data))


"""``mt-eval score``: a system's output file over a corpus → the same sealed run card as ``run``.

What the file is comes from the command line, never guessed: ``--system`` names the method on the
card (compare, report and the leaderboard label it so) and ``--method-class`` says what produced it
in the spec's vocabulary (§9.6: raw-llm, coached-llm, pipeline, custom-plugin, api, human, plus
rbmt). Without them the card says ``predictions`` / ``custom-plugin`` and stderr says how to name it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mt_eval.cli.common import (
    BOOTSTRAP,
    DEFAULT_CACHE_PATH,
    DEFAULT_RUNS_DIR,
    AlphaOpt,
    BootOpt,
    CometModelOpt,
    ConditionOpt,
    CorpusOpt,
    DifficultyOpt,
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
    err,
    language_pair,
    opt,
    path_str,
    spbleu_invocation,
)
from mt_eval.cli.run import (
    _evaluate,
    comet_invocation,
    judge_invocation,
    load_selection,
    profile_invocation,
    semantic_default,
    semantic_invocation,
)
from mt_eval.errors import UserError
from mt_eval.methods.base import MethodClass

DEFAULT_SYSTEM = "predictions"
CLASSES = ", ".join(c.value for c in MethodClass)


def score(
    predictions: Annotated[Path, opt("System outputs: JSONL {entry_id, predicted} or one line per entry.",
                                     "--predictions", "-p")],
    system: Annotated[str | None, opt(f"Name of the system on the card (default: {DEFAULT_SYSTEM}); compare, "
                                      "report and the leaderboard label it so.", "--system")] = None,
    method_class: Annotated[str, opt(f"What produced the outputs: {CLASSES} (rbmt: a rule-based engine; "
                                     "nmt: a local neural model; "
                                     "custom-plugin: anything else).", "--method-class")]
    = MethodClass.CUSTOM_PLUGIN.value,
    corpus: CorpusOpt = None, source_file: SrcFileOpt = None, reference_file: RefFileOpt = None,
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None, lang_pair: LangPairOpt = None,
    segment: SegmentOpt = None, ids: IdsOpt = None, difficulty: DifficultyOpt = None,
    condition: ConditionOpt = "default", runs_dir: RunsDirOpt = DEFAULT_RUNS_DIR, out_path: OutOpt = None,
    n_boot: BootOpt = BOOTSTRAP.n_resamples, alpha: AlphaOpt = BOOTSTRAP.alpha, seed: SeedOpt = BOOTSTRAP.seed,
    skip_analyser: SkipOpt = False, terminology: TermOpt = None,
    allow_missing: Annotated[bool, opt("Score a JSONL file that lacks some entries: each missing entry is an error "
                                       "on the card, listed in its warnings (otherwise exit 2).",
                                       "--allow-missing")] = False,
    semantic: SemanticOpt = None, semantic_model: SemanticModelOpt = None, semantic_url: SemanticUrlOpt = None,
    no_semantic: NoSemanticOpt = False,
    profile: ProfileOpt = None, judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH,
    comet_model: CometModelOpt = None,
    spbleu: SpBleuOpt = None,
) -> None:
    """Score an existing system output file against a corpus (the same card as `run`).

    Examples:

      mt-eval score -c examples/ntrex128-eng-spa.json -p hyp.jsonl --system my-nmt --method-class api -o my.json

      mt-eval score --source-file src.txt --reference-file ref.txt -l en-es -p hyp.txt --system my-nmt

      mt-eval score --reference-file ref1.txt --reference-file ref2.txt --target-lang es -p hyp.txt --system a

      mt-eval score -c examples/ntrex128-eng-spa.json -p human.txt --system translator-1 --method-class human

      mt-eval score -c examples/ntrex128-eng-spa.json -p hyp.jsonl --system my-nmt --no-semantic -o card.json

      mt-eval score -c examples/ntrex128-eng-spa.json -p hyp.jsonl --system a --profile profile.json -o card.json

      mt-eval score -c examples/ntrex128-eng-spa.json -p hyp.jsonl --system a --judge judges/ -o card.json
    """
    from mt_eval.methods.predictions import PredictionsMethod, method_class_named

    source_lang, target_lang = language_pair(lang_pair, source_lang, target_lang)
    klass = method_class_named(method_class)  # a wrong class: one line naming the classes, before any work
    if system is not None and (not system.strip() or not system.isprintable()):
        raise UserError("--system needs a printable, non-empty name", field="system")
    sem = semantic_invocation(semantic, semantic_model, semantic_url, no_semantic)
    jud = judge_invocation(judge, judge_cache)
    sem = {**semantic_default(no_semantic), **sem, **jud,
            **comet_invocation(comet_model), **spbleu_invocation(spbleu), **profile_invocation(profile, sem, jud)}
    full, dataset, selection = load_selection(corpus, source_file, reference_file, source_lang, target_lang,
                                              segment, ids, difficulty, need_source=False)
    method = PredictionsMethod(predictions, full, name=(system or DEFAULT_SYSTEM).strip(), method_class=klass,
                               entries=[e.id for e in dataset.entries], allow_missing=allow_missing)
    _evaluate(full, dataset, method, condition, runs_dir, out_path, selection,
              bootstrap_config(n_boot, alpha, seed),
              scoring={"skip_analyser": skip_analyser, "terminology": path_str(terminology), **sem})
    if system is None:  # after the card is written, so an error stays one line; compare and the board say "predictions"
        err.print(f"[yellow]note:[/yellow] the card names this system '{DEFAULT_SYSTEM}' ({klass.value}); give "
                  "--system NAME (and --method-class CLASS) to say what produced it", highlight=False, soft_wrap=True)

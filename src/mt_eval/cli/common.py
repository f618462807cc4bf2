"""What every command shares: the consoles, the one error path, and the options used twice or more.

The error path is installed once, on the root command group (``GuardedGroup``), so every command
and sub-command (``qa score``…) runs under it without wrapping its body: a ``UserError`` becomes
one located line on stderr and its exit code (2 for input problems); ``--debug`` anywhere on the
command line shows the traceback instead. Option defaults are read from the objects that own them
(``BootstrapConfig``, ``LLMSettings``, the cache module), so a default changes in one place.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from typer.core import TyperGroup

from mt_eval.engine.cache import DEFAULT_CACHE
from mt_eval.errors import CorpusError, UserError
from mt_eval.methods.llm import LLMSettings
from mt_eval.stats.config import BootstrapConfig

out = Console()
err = Console(stderr=True)
_state = {"debug": False}

BOOTSTRAP = BootstrapConfig()
LLM = LLMSettings(model="")


def debugging() -> bool:
    return _state["debug"]


def fail(lines: Sequence[str], code: int) -> None:
    """Print ``error:`` lines on stderr and exit with ``code``: the only way a command reports failure."""
    for line in lines:
        err.print(f"[red]error:[/red] {escape(line)}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


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


def sub_app(name: str, help_text: str) -> typer.Typer:
    """A command group mounted under the root (it runs inside the root's error path)."""
    return typer.Typer(name=name, help=help_text, no_args_is_help=True, add_completion=False,
                       pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]})


def opt(help_text: str, *names: str, **kw: Any) -> Any:
    return typer.Option(*names, help=help_text, **kw)


def path_str(path: Path | None) -> str | None:
    return str(path) if path is not None else None


def bootstrap_config(n: int, alpha: float, seed: int) -> BootstrapConfig:
    if n < 0 or not 0 < alpha < 1:
        raise UserError("--bootstrap must be ≥ 0 and --alpha between 0 and 1")
    return BootstrapConfig(n, alpha, seed)


# Corpus input, shared by run, score and validate.
CorpusOpt = Annotated[Path | None, opt("Corpus file (.json, .jsonl, .tsv).", "--corpus", "-c")]
SrcFileOpt = Annotated[Path | None, opt("Plain-text sources, one segment per line.")]
RefFileOpt = Annotated[Path | None, opt("Plain-text references aligned with --source-file.")]
SrcLangOpt = Annotated[str | None, opt("Source language (BCP-47), for .jsonl/.tsv/text pairs.")]
TgtLangOpt = Annotated[str | None, opt("Target language (BCP-47), for .jsonl/.tsv/text pairs.")]
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

# Statistics, shared by run, score, compare and qa.
BootOpt = Annotated[int, opt("Bootstrap resamples for CIs and paired tests (0 disables CIs).", "--bootstrap", "-b")]
AlphaOpt = Annotated[float, opt("Significance level; intervals are (1 - alpha).")]
SeedOpt = Annotated[int, opt("Bootstrap seed (recorded); 12345, sacrebleu's default, reproduces its resamples.")]
JsonOpt = Annotated[bool, opt("Print the result as JSON on stdout (for scripts).", "--json")]

CardArg = Annotated[Path, typer.Argument(help="Run card JSON.")]

DEFAULT_RUNS_DIR = Path("runs")
DEFAULT_CACHE_PATH = Path(DEFAULT_CACHE)

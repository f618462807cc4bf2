"""The ``mt-eval`` command line: this module only assembles the commands.

Each command lives in its own module and raises ``UserError`` for anything the user can fix;
``common.GuardedGroup`` (the root group) turns that into one line and an exit code for every
command at once. Rendering is in ``mt_eval.render``; the work itself in the domain packages.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from mt_eval.cli import (
    accounts,
    calibrate,
    cards,
    catalog,
    compare,
    contest,
    datasets,
    governance,
    keys,
    languages,
    metrics,
    power,
    qa,
    rescore,
    review,
    robustness,
    run,
    score,
    sovereign,
    store,
    sweep,
    translate,
    vault,
    web,
)
from mt_eval.cli.common import GuardedGroup, err, out
from mt_eval.version import __version__

app = typer.Typer(
    name="mt-eval",
    cls=GuardedGroup,
    help="Evaluate translation methods reproducibly: corpus → method → metrics → sealed run card.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        out.print(f"mt-eval {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks for errors (anywhere on the line).")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """Global options; ``--debug`` itself is read by ``GuardedGroup`` before parsing."""


app.command("run")(run.run)
app.command("score")(score.score)
app.command("validate")(cards.validate)
app.command("verify")(cards.verify)
app.command("show")(cards.show)
app.command("report")(cards.report)
app.command("compare", help=compare.HELP)(compare.compare_command)
app.command("languages")(languages.languages)
app.add_typer(datasets.dataset_app, name="dataset")
app.add_typer(catalog.catalog_app, name="datasets")
app.command("publish")(store.publish)
app.command("leaderboard")(store.leaderboard)
app.command("export")(store.export)
app.command("rescore")(rescore.rescore)
app.command("reproduce")(rescore.reproduce)
app.add_typer(keys.keys_app, name="keys")
app.command("sign")(keys.sign)
app.add_typer(sweep.sweep_app, name="sweep")
app.command("serve")(web.serve)
app.command("translate")(translate.translate)
app.command("serve-method")(translate.serve_method)
app.add_typer(review.review_app, name="review")
app.add_typer(metrics.metrics_app, name="metrics")
app.add_typer(vault.vault_app, name="vault")
app.add_typer(sovereign.sovereign_app, name="sovereign")
app.add_typer(sovereign.submission_app, name="submission")
app.add_typer(governance.governance_app, name="governance")
app.add_typer(calibrate.calibrate_app, name="calibrate")
app.command("robustness")(robustness.robustness)
app.add_typer(accounts.accounts_app, name="accounts")
app.add_typer(qa.qa_app, name="qa")
app.command("power")(power.power)
app.add_typer(contest.contest_app, name="contest")


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:  # pragma: no cover - interactive
        err.print("[yellow]interrupted[/yellow]")
        sys.exit(130)

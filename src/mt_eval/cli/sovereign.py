"""Sovereign evaluation: submissions run in a sandbox (being built)."""

from __future__ import annotations

import typer

sovereign_app = typer.Typer(help="Sovereign evaluation in a sandbox.", no_args_is_help=True)
submission_app = typer.Typer(help="Submission bundles.", no_args_is_help=True)


@sovereign_app.command("preflight")
def preflight() -> None:
    """Run a bundle on the public segment (not yet available).

    Example: mt-eval sovereign preflight --help
    """
    raise typer.Exit(2)


@submission_app.command("check")
def check() -> None:
    """Check a submission bundle (not yet available).

    Example: mt-eval submission check --help
    """
    raise typer.Exit(2)

"""Benchmark sweeps (being built)."""

from __future__ import annotations

import typer

sweep_app = typer.Typer(help="Benchmark sweeps.", no_args_is_help=True)


@sweep_app.command("report")
def report() -> None:
    """Report on a sweep (not yet available).

    Example: mt-eval sweep report --help
    """
    raise typer.Exit(2)

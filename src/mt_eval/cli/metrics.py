"""Metric cards (being built)."""

from __future__ import annotations

import typer

metrics_app = typer.Typer(help="The metric bank: metric cards.", no_args_is_help=True)


@metrics_app.command("list")
def list_metrics() -> None:
    """List the metrics (not yet available).

    Example: mt-eval metrics list --help
    """
    raise typer.Exit(2)

"""Composite profiles calibrated on human judgments (being built)."""

from __future__ import annotations

import typer

calibrate_app = typer.Typer(help="Composite profiles calibrated on human judgments.", no_args_is_help=True)


@calibrate_app.command("evaluate")
def placeholder() -> None:
    """Not yet available.

    Example: mt-eval calibrate evaluate --help
    """
    raise typer.Exit(2)

"""Governance of sovereign evaluations (being built)."""

from __future__ import annotations

import typer

governance_app = typer.Typer(help="Governance of sovereign evaluations.", no_args_is_help=True)


@governance_app.command("audit")
def placeholder() -> None:
    """Not yet available.

    Example: mt-eval governance audit --help
    """
    raise typer.Exit(2)

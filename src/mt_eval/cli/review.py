"""Human review campaigns (being built)."""

from __future__ import annotations

import typer

review_app = typer.Typer(help="Human review campaigns.", no_args_is_help=True)


@review_app.command("status")
def status() -> None:
    """Show a campaign's progress (not yet available).

    Example: mt-eval review status --help
    """
    raise typer.Exit(2)

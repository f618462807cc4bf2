"""Web accounts and invitations (being built)."""

from __future__ import annotations

import typer

accounts_app = typer.Typer(help="Web accounts and invitations.", no_args_is_help=True)


@accounts_app.command("add")
def placeholder() -> None:
    """Not yet available.

    Example: mt-eval accounts add --help
    """
    raise typer.Exit(2)

"""The vault of secret segments (being built)."""

from __future__ import annotations

import typer

vault_app = typer.Typer(help="Encrypted gold sets.", no_args_is_help=True)


@vault_app.command("keygen")
def keygen() -> None:
    """Make a custodian identity (not yet available).

    Example: mt-eval vault keygen --help
    """
    raise typer.Exit(2)

"""Signing keys and card signatures: ``keys new``, ``sign`` (being built)."""

from __future__ import annotations

import typer

keys_app = typer.Typer(help="Ed25519 signing keys for run cards.", no_args_is_help=True)


@keys_app.command("new")
def new() -> None:
    """Make a new signing key (not yet available).

    Example: mt-eval keys new --help
    """
    raise typer.Exit(2)


def sign() -> None:
    """Sign a run card (not yet available).

    Example: mt-eval sign --help
    """
    raise typer.Exit(2)

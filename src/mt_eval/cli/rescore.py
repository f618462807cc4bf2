"""``rescore`` stored cards and ``reproduce`` a card (being built)."""

from __future__ import annotations

import typer


def rescore() -> None:
    """Re-score stored cards (not yet available).

    Example: mt-eval rescore --help
    """
    raise typer.Exit(2)


def reproduce() -> None:
    """Reproduce a card (not yet available).

    Example: mt-eval reproduce --help
    """
    raise typer.Exit(2)

"""``robustness``: metric sensitivity and stability (being built)."""

from __future__ import annotations

import typer


def robustness() -> None:
    """Not yet available.

    Example: mt-eval robustness --help
    """
    raise typer.Exit(2)

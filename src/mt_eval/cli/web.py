"""``serve``: the web leaderboard (being built)."""

from __future__ import annotations

import typer


def serve() -> None:
    """Serve the web leaderboard (not yet available).

    Example: mt-eval serve --help
    """
    raise typer.Exit(2)

"""``mt-eval languages``: every card, its profile, and whether its analyser is present here."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from mt_eval.languages.card import all_cards


def languages_command(console: Console) -> None:
    from mt_eval.analyzers.base import analyser_status

    table = Table(title="Language cards")
    for col in ("code", "name", "scripts", "profile", "analyser", "status"):
        table.add_column(col)
    for code, card in sorted(all_cards().items()):
        problem = analyser_status(card)
        status = "-" if not card.analyser else ("present" if problem is None else f"MISSING: {card.analyser_install}")
        table.add_row(code, card.name, " ".join(card.scripts), card.profile, card.analyser or "-", status)
    console.print(table)


def register(app: typer.Typer) -> None:
    @app.command("languages")
    def languages() -> None:
        """List language cards and which analysers are installed."""
        languages_command(Console())

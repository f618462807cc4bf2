"""The table of language cards shown by ``mt-eval languages``."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table

from mt_eval.analyzers.registry import analyser_status
from mt_eval.languages.card import LanguageCard


def languages_table(cards: Mapping[str, LanguageCard]) -> Table:
    table = Table(title="Language cards")
    for col in ("code", "name", "scripts", "profile", "analyser", "status"):
        table.add_column(col)
    for code, card in sorted(cards.items()):
        problem = analyser_status(card)
        status = "-" if not card.analyser else ("present" if problem is None else f"MISSING: {card.analyser_install}")
        table.add_row(code, card.name, " ".join(card.scripts), card.profile, card.analyser or "-", status)
    return table

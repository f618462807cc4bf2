"""``mt-eval languages``: every language card, its profile, and whether its analyser is installed here."""

from __future__ import annotations

from mt_eval.cli.common import out


def languages() -> None:
    """List language cards and which analysers are installed.

    Example: mt-eval languages
    """
    from mt_eval.languages.card import all_cards
    from mt_eval.render.languages import languages_table

    out.print(languages_table(all_cards()))

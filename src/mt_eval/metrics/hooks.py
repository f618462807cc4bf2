"""Post-translation hooks: repairs applied to raw output before the post-processed compliance pass.

A hook is ``(output, source, target_card) -> output``. Built-ins restore dropped ``{placeholders}``
and normalise quote characters to the card's; third parties add hooks under the entry-point group
``mt_eval.hooks``. ``repair_effectiveness`` measures how many violations the hooks fixed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from mt_eval import plugins
from mt_eval.languages.card import LanguageCard

Hook = Callable[[str, str, LanguageCard], str]
PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_.]*\}")
ALL_QUOTES = "\"'«»“”„‟‘’‚‛「」『』‹›"
_OPENING = set("«„‟‚‛「『‹“‘")


def restore_placeholders(output: str, source: str, card: LanguageCard) -> str:
    """Append every source placeholder the output dropped (where it goes is unknown, that it must
    be present is not)."""
    missing: list[str] = []
    have = PLACEHOLDER.findall(output)
    for ph in PLACEHOLDER.findall(source):
        if ph in have:
            have.remove(ph)
        else:
            missing.append(ph)
    return " ".join([output.rstrip(), *missing]) if missing else output


def normalise_quotes(output: str, source: str, card: LanguageCard) -> str:
    """Replace quote characters the card does not allow with its first opening/closing pair."""
    return output.translate(_quote_table(tuple(card.quotes)))


@lru_cache(maxsize=64)
def _quote_table(quotes: tuple[str, ...]) -> dict[int, str]:
    """``str.translate`` table of ``normalise_quotes`` for one card's quotes (built once per card)."""
    allowed = set(quotes)
    opening = next((q for q in quotes if q in _OPENING), '"')
    closing = next((q for q in quotes if q not in _OPENING and q != "'"), '"')
    return {ord(ch): opening if ch in _OPENING else closing for ch in ALL_QUOTES if ch not in allowed and ch != "'"}


BUILTIN_HOOKS: dict[str, Hook] = {"restore_placeholders": restore_placeholders, "normalise_quotes": normalise_quotes}


def available_hooks() -> dict[str, Hook]:
    """Built-ins first, then plugins (scanned once per process, ``mt_eval.plugins``)."""
    return {**BUILTIN_HOOKS, **plugins.plugins(plugins.HOOKS)}


def apply_hooks(output: str, source: str, card: LanguageCard, hooks: dict[str, Hook] | None = None) -> str:
    for hook in (hooks if hooks is not None else available_hooks()).values():
        output = hook(output, source, card)
    return output

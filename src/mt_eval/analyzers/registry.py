"""Which analyser a language card gets: built-in kinds (lt-proc, HFST) and plugins, checked and memoised.

Separate from ``base.py`` so that the analyser implementations import only the base class, and this
module imports them: no import cycle between the protocol and its implementations.
"""

from __future__ import annotations

import shutil
from functools import lru_cache
from pathlib import Path

from mt_eval import plugins
from mt_eval.analyzers.base import Analyser, file_version
from mt_eval.analyzers.hfst import HfstAnalyser
from mt_eval.analyzers.lttoolbox import LtProcAnalyser
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard


def _parse_spec(spec: str) -> tuple[str, str]:
    kind, _, path = spec.partition(":")
    return kind, path


_TOOLS = {"apertium": "lt-proc", "hfst": "hfst-optimized-lookup"}  # built-in kinds and their programs


def analyser_status(card: LanguageCard) -> str | None:
    """None when the card's analyser can run here, else what is missing (file or tool)."""
    if not card.analyser:
        return None
    kind, path = _parse_spec(card.analyser)
    tool = _TOOLS.get(kind)
    if tool is None:
        return None if kind in _plugin_kinds() else f"no analyser plugin provides the kind '{kind}'"
    if shutil.which(tool) is None:
        return f"the '{tool}' program is not installed"
    if not Path(path).is_file():
        return f"analyser file {path} does not exist"
    return None


def require_analyser(card: LanguageCard) -> None:
    """Raise the install-or-skip error when the card declares an analyser the machine lacks."""
    problem = analyser_status(card)
    if problem is None:
        return
    install = card.analyser_install or (
        "apt-get install lttoolbox" if (card.analyser or "").startswith("apertium") else "apt-get install hfst"
    )
    raise UserError(
        f"the {card.name} card declares analyser {card.analyser}, but {problem}",
        file=card.path,
        hint=f"install it with `{install}`, or pass --skip-analyser to score with profile B (recorded on the card)",
    )


def open_analyser(spec: str) -> Analyser:
    """A fresh analyser for ``hfst:PATH`` or ``apertium:PATH`` (plugins may register more kinds)."""
    kinds: dict[str, type[Analyser]] = {"apertium": LtProcAnalyser, "hfst": HfstAnalyser, **_plugin_kinds()}
    kind, path = _parse_spec(spec)
    if kind not in kinds:
        raise UserError(f"unknown analyser kind '{kind}' in '{spec}'", hint=f"known: {sorted(kinds)}")
    return kinds[kind](path)


def _plugin_kinds() -> dict[str, type[Analyser]]:
    return plugins.plugins(plugins.ANALYZERS)


@lru_cache(maxsize=32)
def _shared(spec: str) -> Analyser:
    return open_analyser(spec)


def analyser_for(card: LanguageCard) -> Analyser | None:
    """The process-wide memoised analyser of a card (None without one); errors if it is missing."""
    if not card.analyser:
        return None
    require_analyser(card)
    return _shared(card.analyser)


def version_of(card: LanguageCard) -> str | None:
    """What the run card's ``fst_version`` records."""
    if not card.analyser:
        return None
    kind, path = _parse_spec(card.analyser)
    if Path(path).is_file():
        return file_version(_TOOLS.get(kind, kind), path)
    return card.analyser

"""A method's declared training cut-off, and whether a card's test set was public after it.

The cut-off comes from the method's own configuration (``training_cutoff: YYYY-MM``, e.g. a plugin or an
LLM config declaring it), else from the providers' documented knowledge cut-offs shipped in
``cutoffs.json``. Unknown stays unknown: such a card is never counted as clean (a missing declaration is
not evidence of a clean model), and neither is a rule-based system, whose dictionaries may have been
tuned on any public test set (docs/decisions.md §55).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from typing import Any

_MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])")


@lru_cache(maxsize=1)
def _table() -> dict[str, str]:
    text = resources.files("mt_eval.catalog").joinpath("cutoffs.json").read_text(encoding="utf-8")
    return {k.lower(): v["cutoff"] for k, v in json.loads(text).items() if not k.startswith("_")}


def month(value: object) -> str | None:
    """``YYYY-MM`` from a date-like string (``2023-10``, ``2023-10-01``); None for anything else."""
    match = _MONTH.match(value) if isinstance(value, str) else None
    return match.group(0) if match else None


def training_cutoff(card: Mapping[str, Any]) -> str | None:
    """The card's method's declared training cut-off as ``YYYY-MM``, or None when nobody declared one."""
    method = card.get("method") or {}
    declared = month((method.get("config") or {}).get("training_cutoff")) if isinstance(method, Mapping) else None
    if declared:
        return declared
    slug = str(card.get("model_slug") or "").rsplit("/", 1)[-1].lower()
    return _table().get(slug)


def release_month(card: Mapping[str, Any]) -> str | None:
    """The month the card's test set became public (its catalogue exposure), or None when not known."""
    exposure = (card.get("dataset") or {}).get("exposure")
    return month(exposure.get("released")) if isinstance(exposure, Mapping) else None


def predates(cutoff: str | None, released: str | None) -> bool:
    """Clean: a declared cut-off strictly before the release month (the same month is not: either order)."""
    return cutoff is not None and released is not None and cutoff < released

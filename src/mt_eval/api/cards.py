"""``compare`` and ``load_card`` for Python callers: results, cards and paths alike, typed cards back.

``runcard.io.load_card`` stays the dict reader the harness uses internally (verify, store, web); the
public ``load_card`` validates that dict into the typed ``RunCard`` (``identity()``, ``dataset()``,
``translations()``), one line naming the file and the first bad field when it is not a run card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from mt_eval.api.results import EvalResult
from mt_eval.comparison.engine import Correction, Method
from mt_eval.comparison.engine import compare as compare_cards
from mt_eval.comparison.model import Comparison
from mt_eval.runcard.model import RunCard
from mt_eval.stats import DEFAULT_SEED

__all__ = ["compare", "load_card"]

CardLike = EvalResult | RunCard | Mapping[str, Any] | str | PathLike[str]


def _card_of(item: CardLike) -> Mapping[str, Any] | str | PathLike[str]:
    """A result written with its statistics sidecar is compared from the file (the stored statistics are
    read, no metric runs again); one held in memory by its card (rebuilt from ``results[]``)."""
    if isinstance(item, EvalResult):
        return item.path if item.path is not None and item.card.get("statistics") else item.card
    if isinstance(item, RunCard):
        return item.model_dump(mode="json")
    return item


def compare(
    cards: Sequence[CardLike],
    *,
    metrics: list[str] | None = None,
    n_resamples: int = 1000,
    alpha: float = 0.05,
    seed: int = DEFAULT_SEED,
    method: Method = "bootstrap",
    correction: Correction = "holm",
    n_trials: int = 10_000,
    names: Sequence[str] | None = None,
) -> Comparison:
    """Compare results (``score``/``evaluate``), card dicts, ``RunCard`` models or card paths with the first
    one, the baseline, on the same entries: bootstrap intervals and Holm-corrected paired tests
    (``comparison.compare``, whose options these are; ``mt-eval compare`` gives the same numbers)."""
    return compare_cards([_card_of(c) for c in cards], metrics=metrics, n_resamples=n_resamples, alpha=alpha,
                         seed=seed, method=method, correction=correction, n_trials=n_trials, names=names)


def load_card(path: str | Path) -> RunCard:
    """The run card at ``path`` (migrated to the current schema), validated as a typed ``RunCard``."""
    from mt_eval.comparison.loading import require_valid
    from mt_eval.runcard.io import load_card as load_card_dict

    return RunCard.model_validate(require_valid(load_card_dict(path), path))

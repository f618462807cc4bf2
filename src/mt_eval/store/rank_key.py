"""Which number ranks a dataset's board: the registered dataset's ``primary_metric`` (docs/decisions.md §51).

A registered dataset (``registered_datasets``, ``mt-eval dataset register``; the key is changed with ``mt-eval
dataset primary-metric``, ``store.datasets``) names its ranking key, chrF++ unless told otherwise: the number
the field reports and the one the spec's own authors moved to. Read here as a ``RankKey``:

- ``chrf_plus_plus`` or any other metric with a direction (``length_ratio`` has none): cards of the same dataset
  and entries with a value for it are ranked by it, whatever their profile or composite rule (those change
  the composite, not the metric); the significance clusters come from its per-entry statistics;
- ``composite``: the spec's composite, ranked only among cards with the same metrics, profile and rule (Scoring
  Spec §4.1), as before datasets were registered;
- ``profile:ID`` (a calibrated profile, ``mt-eval calibrate``, or a spec profile): the composite of the cards
  scored under that profile; every other card is set apart.

A dataset nobody registered (cards published before registration existed, sovereign cards) has no key on record:
its board is ranked by the composite, as it always was. A stored key that cannot rank (a metric without a
direction, a plugin uninstalled) ranks by the composite too, rather than leaving a board nobody can rank. The
composite and the quality tier stay on every row and page whatever the key: they are the spec's view of a card.
Changing the key is one row's update: boards are ranked when read, so nothing is re-published.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy.orm import Session

from mt_eval.store.datasets import COMPOSITE, PROFILE_PREFIX, primary_metrics

UNDIRECTED = frozenset({"length_ratio"})  # a difference in it is neither better nor worse (comparison.checks)


@dataclass(frozen=True)
class RankKey:
    """A board's ranking key: ``name`` as recorded, and which way is better."""

    name: str
    higher_is_better: bool = True
    registered: bool = True
    """False for a dataset nobody registered: the composite ranks it by default, not by anyone's choice."""

    @property
    def metric(self) -> str:
        """The score compared: ``composite`` (also for a profile's key) or a metric id."""
        return COMPOSITE if self.name == COMPOSITE or self.profile is not None else self.name

    @property
    def profile(self) -> str | None:
        """The profile a ``profile:ID`` key ranks (only its cards are ranked), else None."""
        return self.name.removeprefix(PROFILE_PREFIX) if self.name.startswith(PROFILE_PREFIX) else None

    @property
    def label(self) -> str:
        """How tables and pages name it: "chrF++", "composite", "composite (profile cal-…)"."""
        if self.metric == COMPOSITE:
            return COMPOSITE if self.profile is None else f"composite (profile {self.profile})"
        return metric_name(self.name)


UNREGISTERED = RankKey(COMPOSITE, registered=False)


@functools.cache
def metric_name(metric: str) -> str:
    """The metric's name on its Metric Card ("chrF++"), else its id."""
    from mt_eval.metrics.bank import load_bank

    card = load_bank().get(metric)
    return card.name if card is not None else metric


@functools.cache
def direction(metric: str) -> bool | None:
    """Whether higher is better for ``metric`` (its Metric Card, else the registered class; a generated
    judge's score is higher-better), or None when it has no direction or is unknown here. Remembered: the
    cards are package data, and parsing them all costs 25 ms, more than the board's query."""
    from mt_eval.metrics.bank import load_bank, registered
    from mt_eval.metrics.judges.cards import is_judge_id

    if metric in UNDIRECTED:
        return None
    card = load_bank().get(metric)
    if card is not None:
        return bool(card.sections["details"]["higher_is_better"])
    declared = getattr(registered().get(metric), "higher_is_better", None)
    return declared if isinstance(declared, bool) else True if is_judge_id(metric) else None


def parse_key(name: str) -> RankKey:
    """The ``RankKey`` of a stored ``primary_metric`` (``store.datasets.check_primary_metric`` let it in)."""
    if name == COMPOSITE or name.startswith(PROFILE_PREFIX):
        return RankKey(name)
    higher = direction(name)
    return RankKey(name, higher) if higher is not None else RankKey(COMPOSITE)


def keys_for(session: Session, shas: Iterable[str]) -> dict[str, RankKey]:
    """The ranking key of each dataset (by corpus sha256) among ``shas``: its registered primary metric, or
    ``UNREGISTERED`` (the composite) when nobody registered it."""
    wanted = sorted(set(shas))
    found = primary_metrics(session, wanted) if wanted else {}
    return {sha: parse_key(found[sha]) if sha in found else UNREGISTERED for sha in wanted}

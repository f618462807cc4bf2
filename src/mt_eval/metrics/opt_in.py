"""Opt-in metrics as one sequence: metric objects that carry their own run-card block.

``semantic_score`` (an embedding backend), ``comet_score`` (a local checkpoint) and generated LLM judges are
scored only when a run asks for them, and a card that scored one records what it was scored with (the
backend, the checkpoint's sha256, the judge card's sha256) in a block of its own. Each such metric object
says which block (``card_section``) and what goes in it (``card_block``), so the run's options, the scoring
pipeline and the card builder pass one ``Sequence[OptInMetric]`` instead of one parameter per metric: adding
an opt-in metric adds a class, not a keyword to every signature between the command line and the card.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, TypeVar

from mt_eval.metrics.base import Metric

SEMANTIC, COMET, JUDGES, SPBLEU = "semantic", "comet", "judges", "spbleu"
SECTIONS = (SEMANTIC, COMET, JUDGES, SPBLEU)
"""Card sections in scoring order (the order the metric table, its sidecar and ``verify`` have always used)."""
KEYED = frozenset({JUDGES})
"""Sections holding one block per metric id (``judges.<id>``); the others hold one metric's block."""


class OptInMetric(Metric, Protocol):
    """A metric a run scores only when asked, recorded on the card under ``card_section``."""

    card_section: str  # one of SECTIONS

    def card_block(self) -> dict[str, Any]:
        """What the card records of this metric's configuration (never a path or a key)."""
        ...

    def preflight(self, entries: Sequence[Any]) -> None:
        """Refuse (``UserError``) before anything is translated: a missing package, secret entries that the
        metric would send off this machine."""
        ...


M = TypeVar("M", bound=OptInMetric)


def in_order(metrics: Sequence[M]) -> list[M]:
    """The metrics in ``SECTIONS`` order (stable within a section): the same table whatever order they came in."""
    return sorted(metrics, key=lambda m: SECTIONS.index(m.card_section))


def of_section(metrics: Sequence[M], section: str) -> list[M]:
    return [m for m in metrics if m.card_section == section]


def card_blocks(metrics: Sequence[OptInMetric]) -> dict[str, Any]:
    """The card's blocks for these metrics; a section nobody asked for is absent (ordinary cards unchanged)."""
    blocks: dict[str, Any] = {}
    for metric in in_order(metrics):
        if metric.card_section in KEYED:
            blocks.setdefault(metric.card_section, {})[str(metric.id)] = metric.card_block()
        elif metric.card_section in blocks:
            raise ValueError(f"two opt-in metrics for the card's {metric.card_section!r} block")
        else:
            blocks[metric.card_section] = metric.card_block()
    return blocks

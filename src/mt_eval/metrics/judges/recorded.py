"""A judge as a run card recorded it: enough to aggregate its stored statistics, never to ask anyone.

``compare`` reads a card's per-entry statistics from its sidecar and needs a metric object per stored
metric to aggregate them (and to compute a calibrated composite that weights a judge). Building the real
judge would need its card file and would send text to its endpoint; a stored judge needs neither: its
aggregate is Σscore / Σjudged like ``JudgeMetric``'s. Asked to *compute* statistics (a rebuild from
``results[]``), it refuses with one line: only ``--judge`` with the same judge card may recompute them.
``runcard.statistics.StoredStatistics.table`` adds one per judge stored in a sidecar.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from mt_eval.errors import UserError
from mt_eval.metrics.base import MetricContext, Status
from mt_eval.metrics.rates import RatioMetric


class RecordedJudge(RatioMetric):
    """The judge ``block`` (a card's ``judges.<id>`` plus ``id``) names; statistics come from a sidecar only."""

    higher_is_better = True
    status = Status.IMPLEMENTED
    cost = 10_000.0
    reads_source = True
    egress = "remote"

    def __init__(self, block: Mapping[str, Any]) -> None:
        self.id = str(block["id"])
        self.block = dict(block)

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        raise UserError(f"the card was scored with the generated judge {self.id}: its scores are recomputed only "
                        "with its judge card: give it with --judge FILE")


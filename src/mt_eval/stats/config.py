"""One bootstrap configuration for every caller (run cards, compare, QA), recorded on outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mt_eval.stats.bootstrap import DEFAULT_SEED


@dataclass(frozen=True)
class BootstrapConfig:
    n_resamples: int = 1000
    alpha: float = 0.05
    seed: int = DEFAULT_SEED

    def header(self) -> dict[str, Any]:
        return {"method": "percentile", "n_resamples": self.n_resamples, "alpha": self.alpha, "seed": self.seed}

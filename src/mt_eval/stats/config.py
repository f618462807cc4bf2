"""One bootstrap configuration for every caller (run cards, compare, QA), recorded on outputs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mt_eval.stats.bootstrap import DEFAULT_SEED

# More resamples than this buy no precision a card can show (the percentile's Monte Carlo error at
# 100,000 is far below the 4 decimals printed) and a hostile card asking for 10**9 would need ~745 GiB.
MAX_RESAMPLES = 100_000


@dataclass(frozen=True)
class BootstrapConfig:
    n_resamples: int = 1000
    alpha: float = 0.05
    seed: int = DEFAULT_SEED

    def header(self) -> dict[str, Any]:
        return {"method": "percentile", "n_resamples": self.n_resamples, "alpha": self.alpha, "seed": self.seed}

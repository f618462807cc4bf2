"""Statistics over per-entry sufficient statistics: bootstrap CIs, paired tests, Holm correction.

Generic over the Metric protocol (``metrics/base.py``): everything here needs only a metric's
``(n, k)`` statistics and its vectorised ``aggregate``. See ``docs/statistics.md``.
"""

from mt_eval.stats.bootstrap import (
    COMPOSITE,
    DEFAULT_SEED,
    Aggregate,
    Combine,
    ConfidenceInterval,
    bootstrap_ci,
    bootstrap_many,
    percentile_interval,
    point_value,
    resample_counts,
    resampled_sums,
    resampled_values,
)
from mt_eval.stats.multiple import holm
from mt_eval.stats.paired import (
    PairedResult,
    approximate_randomization,
    approximate_randomization_many,
    is_significant,
    paired_bootstrap,
    paired_bootstrap_many,
    sacrebleu_ar_p_value,
    sacrebleu_bootstrap_p_value,
)

__all__ = [
    "COMPOSITE",
    "DEFAULT_SEED",
    "Aggregate",
    "Combine",
    "ConfidenceInterval",
    "PairedResult",
    "approximate_randomization",
    "approximate_randomization_many",
    "bootstrap_ci",
    "bootstrap_many",
    "holm",
    "is_significant",
    "paired_bootstrap",
    "paired_bootstrap_many",
    "percentile_interval",
    "point_value",
    "resample_counts",
    "resampled_sums",
    "resampled_values",
    "sacrebleu_ar_p_value",
    "sacrebleu_bootstrap_p_value",
]

"""``mt-eval power``'s output: the minimum detectable difference in one sentence, then the figures behind it."""

from __future__ import annotations

from typing import Any

from mt_eval.stats.power import PowerResult


def power_summary(result: PowerResult, metric: str) -> str:
    """The one line a community reads: what its test set can resolve."""
    return (f"With {result.n_entries} entries, a {metric} difference of {result.mdd:.2f} or more is detected "
            f"{result.power:.0%} of the time by a paired bootstrap at α {result.alpha:g}; smaller differences "
            f"are often missed")


def power_details(result: PowerResult) -> list[str]:
    rho = (f"measured ρ {result.correlation:.2f} from the two cards' paired resamples" if result.measured
           else f"assumed ρ {result.correlation:.2f} between two systems' scores (give --versus CARD to measure it)")
    return [
        f"baseline: {result.baseline_score:.2f} over {result.baseline_entries} entries; standard error at "
        f"{result.n_entries} entries {result.standard_error:.3f} ({result.n_resamples} resamples)",
        f"SE of a paired difference {result.delta_standard_error:.3f}: {rho}",
        f"to resolve half that difference: about {result.entries_for(result.mdd / 2)} entries",
    ]


def power_json(result: PowerResult, metric: str) -> dict[str, Any]:
    return {"metric": metric, "n_entries": result.n_entries, "baseline_entries": result.baseline_entries,
            "baseline_score": result.baseline_score, "standard_error": result.standard_error,
            "correlation": result.correlation, "correlation_measured": result.measured,
            "delta_standard_error": result.delta_standard_error, "alpha": result.alpha, "power": result.power,
            "n_resamples": result.n_resamples, "mdd": result.mdd}

"""``mt-eval power``: the minimum detectable difference of a test set, from a baseline card's per-entry variance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mt_eval.cli.common import AlphaOpt, JsonOpt, SeedOpt, err, opt, out
from mt_eval.errors import UserError
from mt_eval.stats.power import DEFAULT_CORRELATION, DEFAULT_POWER, DEFAULT_RESAMPLES


def power(
    card: Annotated[Path | None, opt("Baseline run card whose per-entry statistics give the variance (e.g. an "
                                     "Apertium run on this or a similar test set).", "--card")] = None,
    corpus: Annotated[str | None, opt("The corpus (file or catalogue id) whose size the MDD is for; default: the "
                                      "baseline card's own entries.", "--corpus", "-c")] = None,
    metric: Annotated[str, opt("Metric id, as on a run card.", "--metric", "-m")] = "chrf_plus_plus",
    versus: Annotated[Path | None, opt("A second card on the same entries: measures the correlation of the two "
                                       "systems' scores instead of assuming it.", "--versus")] = None,
    alpha: AlphaOpt = 0.05,
    power_: Annotated[float, opt("The wanted probability of detecting a real difference (1 - β).",
                                 "--power")] = DEFAULT_POWER,
    correlation: Annotated[float, opt("Assumed correlation of two systems' scores over resamples, without "
                                      "--versus.", "--correlation")] = DEFAULT_CORRELATION,
    n_boot: Annotated[int, opt("Bootstrap resamples.", "--bootstrap", "-b")] = DEFAULT_RESAMPLES,
    seed: SeedOpt = 12345,
    as_json: JsonOpt = False,
) -> None:
    """The smallest metric difference a test set of this size can resolve (paired bootstrap, Scoring Spec §8.2).

    Example: mt-eval power --corpus examples/ntrex128-eng-spa.json --metric chrf_plus_plus --card apertium.json
    """
    from mt_eval.comparison.power import power_from_cards
    from mt_eval.render.power import power_details, power_json, power_summary

    if card is None:
        raise UserError("power needs a baseline card for the per-entry variance (--card RUN_CARD)", field="card",
                        hint="run a baseline first, e.g. mt-eval run --corpus FILE --method apertium:eng-spa "
                        "-o base.json")
    n_entries = None
    if corpus is not None:
        from mt_eval.corpus import load_corpus

        n_entries = len(load_corpus(corpus).entries)
    result, note = power_from_cards(card, metric, n_entries=n_entries, versus=versus, alpha=alpha, power=power_,
                                    correlation=correlation, n_resamples=n_boot, seed=seed)
    if note:
        err.print(f"[yellow]note:[/yellow] {note}", highlight=False, soft_wrap=True)
    if as_json:
        import json

        out.print_json(json.dumps(power_json(result, metric)))
        return
    out.print(power_summary(result, metric), highlight=False)
    for line in power_details(result):
        out.print(f"  {line}", highlight=False)

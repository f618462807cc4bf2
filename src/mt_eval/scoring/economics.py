"""Cost (§6), speed (§7) and token (§6.1) blocks, from what the method reported per entry.

Every cost and speed figure on a card says how it is known (docs/decisions.md, cost and speed honesty):

* ``measured``: by this engine. Cost from the provider's own ``usage.cost``, or its token counts times a
  pricing table whose prices are recorded on the card (``cost.pricing``), or $0 for a local rule-based
  engine that makes no paid request (source ``local``). Speed: the engine ran the method and timed it.
* ``declared``: by the submitter (a predictions file's ``cost_usd`` / ``latency_seconds``), shown as such.
* ``unknown``: null, never 0: outputs replayed from a file that says nothing, a paid call the pricing
  table could not price, a plugin that reports no usage.

Only measured figures enter cost-adjusted ranking and the Pareto charts (``store/publish.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.methods.base import Translation, Usage

MEASURED, DECLARED, UNKNOWN = "measured", "declared", "unknown"
STATUSES = (MEASURED, DECLARED, UNKNOWN)
LOCAL = "local"  # cost source of a local engine that spends nothing: a measured $0
DECLARED_SOURCE = "declared"  # cost source of figures the submitter gave (a predictions file)
PAID_SOURCES = frozenset({"provider", "pricing-table", "cache"})  # an LLM call's cost_source values
REPLAY_PROVIDER = "file"  # MethodIdentity.provider of outputs replayed from a predictions file
LOCAL_ENGINES = frozenset({"rbmt", "nmt"})  # method classes whose engine runs here and cannot spend money
ENGINE_TIMED = frozenset({"rbmt", "nmt", "raw-llm", "coached-llm", "pipeline"})  # built-ins that time each entry
COST_KEYS = ("total_cost_usd", "cost_per_entry_usd", "cost_per_1k_tokens", "cost_per_source_char")
LATENCY_KEYS = ("avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds")
SPEED_KEYS = ("elapsed_seconds", *LATENCY_KEYS, "tokens_per_second", "entries_per_minute")


def total_usage(translations: Sequence[Translation]) -> Usage:
    total = Usage()
    for t in translations:
        total.add(t.usage)
    return total


def tokens_block(usage: Usage, entry_count: int) -> dict[str, Any]:
    total = usage.prompt_tokens + usage.completion_tokens
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
        "total_tokens": total,
        "tokens_per_entry": total / entry_count if entry_count else None,
    }


def cost_status(translations: Sequence[Translation], provider: str, method_class: str, *,
                cost_known: bool = True, fallback_source: str | None = None) -> tuple[str, str | None]:
    """``(status, source)`` of a run's cost, from what each successful entry said about its own cost
    (``extra["cost_source"]``: absent when the method reports none, None when a paid call was unpriced).

    ``fallback_source``: the caller's word when the translations carry none (the sovereign runner's broker
    counted the provider's reported cost: ``"provider"``)."""
    sources = {t.extra.get("cost_source", "none") for t in translations if t.error is None}
    reported = sources - {"none"}
    if provider == REPLAY_PROVIDER:  # a file: its own figures only when every output declares one
        every = reported == {DECLARED_SOURCE} and "none" not in sources
        return (DECLARED, DECLARED_SOURCE) if every else (UNKNOWN, None)
    if not cost_known or None in reported or "unknown" in reported or DECLARED_SOURCE in reported:
        return UNKNOWN, None
    if reported:
        return MEASURED, "+".join(sorted(str(s) for s in reported))
    if fallback_source and fallback_source != "none":
        return MEASURED, fallback_source
    return (MEASURED, LOCAL) if method_class in LOCAL_ENGINES else (UNKNOWN, None)


def speed_status(translations: Sequence[Translation], provider: str, method_class: str) -> str:
    """How the per-entry latencies (and their summaries) are known: measured when this harness's own code
    timed each entry (:data:`ENGINE_TIMED`); a plugin's are its own word (declared); a replayed file's are
    the submitter's (declared when every entry carries one), else unknown: the replay's time says nothing
    about the system. The elapsed time is the engine's clock whenever it ran the method (null for a replay)."""
    if provider == REPLAY_PROVIDER:
        declared = [t.extra.get("declared_latency") is True for t in translations]
        return DECLARED if declared and all(declared) else UNKNOWN
    return MEASURED if method_class in ENGINE_TIMED else DECLARED


def price_cost(row: Mapping[str, Any]) -> float:
    """USD of one pricing row: prompt tokens not cached at the prompt price, cached ones at the cached
    price (the prompt price when the table has none), completion at the completion price, per million."""
    prompt, cached = int(row["prompt_tokens"]), min(int(row["cached_tokens"]), int(row["prompt_tokens"]))
    cached_price = row["prompt"] if row.get("cached_prompt") is None else row["cached_prompt"]
    return float(((prompt - cached) * row["prompt"] + cached * cached_price
                  + int(row["completion_tokens"]) * row["completion"]) / 1e6)


def pricing_block(translations: Iterable[Translation], table: str | None) -> dict[str, Any] | None:
    """The prices the run's pricing-table costs used, each with the tokens priced at it and their cost
    (``extra["price"]``, set by the LLM method): ``verify`` recomputes cost = tokens × these prices.
    None when no entry was priced from a table (provider-reported costs, cache hits, local engines)."""
    models: dict[str, dict[str, Any]] = {}
    for t in translations:
        price = t.extra.get("price")
        if t.extra.get("cost_source") != "pricing-table" or not isinstance(price, Mapping):
            continue
        row = models.setdefault(str(price["model"]), {
            "prompt": float(price["prompt"]), "completion": float(price["completion"]),
            "cached_prompt": None if price.get("cached_prompt") is None else float(price["cached_prompt"]),
            "prompt_tokens": 0, "completion_tokens": 0, "cached_tokens": 0})
        row["prompt_tokens"] += t.usage.prompt_tokens
        row["completion_tokens"] += t.usage.completion_tokens
        row["cached_tokens"] += t.usage.cached_tokens
    for row in models.values():
        row["cost_usd"] = price_cost(row)
    return {"table": table or "default", "models": dict(sorted(models.items()))} if models else None


def cost_block(usage: Usage, entries: Sequence[Entry], status: str, source: str | None = None,
               pricing: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The card's ``cost``: figures null when ``status`` is unknown (never a guessed 0), with how they are
    known (``status``, ``source``) and, for table-priced calls, the prices used (``pricing``)."""
    if status == UNKNOWN:
        block: dict[str, Any] = dict.fromkeys(COST_KEYS)
    else:
        total_tokens = usage.prompt_tokens + usage.completion_tokens
        chars = sum(len(e.source) for e in entries)
        cost = usage.cost_usd
        block = {
            "total_cost_usd": cost,
            "cost_per_entry_usd": cost / len(entries) if entries else None,
            "cost_per_1k_tokens": cost / total_tokens * 1000 if total_tokens else None,
            "cost_per_source_char": cost / chars if chars else None,
        }
    block["status"] = status
    if source is not None:
        block["source"] = source
    if pricing is not None:
        block["pricing"] = dict(pricing)
    return block


def totals_block(usage: Usage, cost: dict[str, Any]) -> dict[str, Any]:
    """Run Card Spec ``totals``; reasoning_ratio = reasoning / completion tokens."""
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "cached_tokens": usage.cached_tokens,
        "total_cost_usd": cost["total_cost_usd"],
        "cost_per_entry_usd": cost["cost_per_entry_usd"],
        "reasoning_ratio": (
            usage.reasoning_tokens / usage.completion_tokens if usage.completion_tokens else 0.0
        ),
    }


def latency_summary(latencies: Sequence[float | None]) -> dict[str, float | None]:
    """Mean, median and 95th percentile of per-entry latencies (None when there are none, or any is
    unknown): the builder's and ``verify``'s one computation."""
    if not latencies or any(v is None for v in latencies):
        return dict.fromkeys(LATENCY_KEYS)
    values = np.asarray(latencies, dtype=np.float64)
    return {"avg_latency_seconds": float(values.mean()), "median_latency_seconds": float(np.median(values)),
            "p95_latency_seconds": float(np.percentile(values, 95))}


def speed_block(latencies: Sequence[float | None], elapsed: float | None, total_tokens: int,
                status: str = MEASURED) -> dict[str, Any]:
    """The card's ``speed``. ``elapsed`` is None when the run's duration says nothing about the system
    (a replayed file): throughput is then unknown, never entries / the replay's milliseconds."""
    timed = elapsed if elapsed is not None and elapsed > 0 else None
    return {
        "elapsed_seconds": elapsed,
        **latency_summary(latencies),
        "tokens_per_second": total_tokens / timed if total_tokens and timed else None,
        "entries_per_minute": len(latencies) / (timed / 60) if timed else None,
        "status": status,
    }


def _block(card: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = card.get(key)
    return value if isinstance(value, Mapping) else {}


def _replayed(card: Mapping[str, Any]) -> bool:
    return _block(card, "config").get("api_provider") == REPLAY_PROVIDER


def card_cost_status(card: Mapping[str, Any]) -> str:
    """How a card's cost is known. Cards written before ``cost.status`` are read by these rules: null is
    unknown; a replayed file's $0 was never measured (unknown); a local engine's $0 is measured; a
    provider-reported cost is measured; table prices not recorded on the card cannot be recomputed, so
    such a cost is the card's word (declared), as is any other figure."""
    cost = _block(card, "cost")
    status = cost.get("status")
    if status in STATUSES:
        return str(status)
    total = cost.get("total_cost_usd")
    if total is None or _replayed(card):
        return UNKNOWN
    parts = set(str(cost.get("source") or "").split("+")) - {""}
    if not parts:
        return MEASURED if card.get("method_class") in LOCAL_ENGINES and total == 0 else DECLARED
    return MEASURED if parts <= {"provider", "cache"} else DECLARED


def card_speed_status(card: Mapping[str, Any]) -> str:
    """How a card's latencies are known; before ``speed.status``: a replayed file's timings are unknown (they
    timed the replay), a built-in method's were measured, a plugin's are its own word (declared)."""
    speed = _block(card, "speed")
    status = speed.get("status")
    if status in STATUSES:
        return str(status)
    if _replayed(card) or speed.get("avg_latency_seconds") is None:
        return UNKNOWN
    return MEASURED if card.get("method_class") in ENGINE_TIMED else DECLARED


def replayed(card: Mapping[str, Any]) -> bool:
    """Outputs replayed from a file: the run's own elapsed time is not the system's."""
    return _replayed(card)


def card_cost_facts(card: Mapping[str, Any]) -> tuple[str, str | None]:
    """``(status, source)`` a card rebuilt from its results keeps (``store/rescore.py``): its own, or for a card
    written before statuses, what :func:`card_cost_status` reads it as, with the source that status takes."""
    cost = _block(card, "cost")
    status = card_cost_status(card)
    if "status" in cost:
        return status, cost.get("source")
    source = cost.get("source")
    return status, {UNKNOWN: None, DECLARED: DECLARED_SOURCE}.get(status, str(source) if source else LOCAL)


def shipped_prices(cost: Mapping[str, Any]) -> bool:
    """Whether every price a table-priced cost used is the shipped table's (``methods/pricing.json``). Cost
    from a submitter's own ``--pricing`` file is recomputable on the card but its prices are theirs to pick:
    a $1e-9 row would rank first by cost_adjusted, so the store ranks it only at the prices everyone has."""
    from mt_eval.methods.pricing import PricingTable

    rows = cost.get("pricing", {}).get("models") if isinstance(cost.get("pricing"), Mapping) else None
    if not rows:
        return True  # no table prices: provider-reported, cached or a local engine's $0
    table = PricingTable.load()
    for model, row in rows.items():
        price = table.get(str(model))
        if price is None or not isinstance(row, Mapping) or (row.get("prompt"), row.get("completion")) != (
                price.prompt, price.completion) or row.get("cached_prompt") not in (None, price.cached_prompt):
            return False
    return True


def ranked_figures(card: Mapping[str, Any]) -> dict[str, float | None]:
    """The figures the store sorts and charts by (``run_cards.cost_adjusted``, ``cost_per_entry``,
    ``avg_latency``): measured ones only, so cost-adjusted ranking, the cost and latency sorts and the Pareto
    charts never place a declared or unknown figure among measured ones; those stay on the card, labelled."""
    cost, scores = _block(card, "cost"), _block(card, "scores")

    def figure(value: Any, known: bool) -> float | None:
        ok = known and isinstance(value, int | float) and not isinstance(value, bool) and np.isfinite(value)
        return float(value) if ok else None

    measured_cost = card_cost_status(card) == MEASURED and shipped_prices(cost)
    return {"cost_adjusted": figure(scores.get("cost_adjusted"), measured_cost),
            "cost_per_entry": figure(cost.get("cost_per_entry_usd"), measured_cost),
            "avg_latency": figure(scores.get("avg_latency_seconds"), card_speed_status(card) == MEASURED)}

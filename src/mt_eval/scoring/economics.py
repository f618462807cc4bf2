"""Cost (§6), speed (§7) and token (§6.1) blocks, from what the method reported per entry."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from mt_eval.corpus.models import Entry
from mt_eval.methods.base import Translation, Usage


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


def cost_block(usage: Usage, entries: Sequence[Entry], cost_known: bool) -> dict[str, Any]:
    """``cost_known`` is False when a paid method could not price its calls (cost is then null)."""
    if not cost_known:
        return {k: None for k in ("total_cost_usd", "cost_per_entry_usd", "cost_per_1k_tokens",
                                  "cost_per_source_char")}
    total_tokens = usage.prompt_tokens + usage.completion_tokens
    chars = sum(len(e.source) for e in entries)
    cost = usage.cost_usd
    return {
        "total_cost_usd": cost,
        "cost_per_entry_usd": cost / len(entries) if entries else None,
        "cost_per_1k_tokens": cost / total_tokens * 1000 if total_tokens else None,
        "cost_per_source_char": cost / chars if chars else None,
    }


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


def speed_block(translations: Sequence[Translation], elapsed: float, total_tokens: int) -> dict[str, Any]:
    latencies = np.asarray([t.latency_seconds for t in translations], dtype=np.float64)
    have = latencies.size > 0
    return {
        "elapsed_seconds": elapsed,
        "avg_latency_seconds": float(latencies.mean()) if have else None,
        "median_latency_seconds": float(np.median(latencies)) if have else None,
        "p95_latency_seconds": float(np.percentile(latencies, 95)) if have else None,
        "tokens_per_second": total_tokens / elapsed if total_tokens and elapsed > 0 else None,
        "entries_per_minute": len(translations) / (elapsed / 60) if elapsed > 0 else None,
    }

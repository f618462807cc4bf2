"""``verify``'s checks of a card's cost and speed: what can be recomputed is, and impossible figures are
refused (docs/decisions.md, cost and speed honesty).

Every card, old or new (the builder always computed these the same way):

* every cost, speed, token and per-entry figure is a finite, non-negative number (or null);
* token totals are the sums of ``results[].usage``; cost per entry / per 1k tokens / per source character
  and ``totals`` follow from the total; ``scores.cost_adjusted`` is §6.3's formula of the card's own composite
  and cost per entry (a forged 5.0 above the composite is refused); latency summaries follow from
  ``results[].latency_seconds``; throughput from the elapsed time.

Cards that say how their figures are known (``cost.status``, ``speed.status``) are held to it:

* unknown: null figures (a replayed file's latencies included), never 0;
* measured cost: ``local`` is a rule-based engine's $0 with no tokens; table-priced cost equals the tokens ×
  the prices the card records (``cost.pricing``), provider-reported cost is at least that part;
* measured speed: every entry timed, none (but cache hits and failures) faster than
  :data:`MIN_LATENCY_SECONDS`, none longer than the whole run;
* declared: the submitter's (or a plugin's) figures, labelled; a replayed file has no elapsed time of the
  system, so no throughput either.

What this cannot prove is where the tokens and prices came from: a forger who rewrites them consistently
and reseals passes, as with any score; reproduction and signatures establish that (``runcard/verify.py``).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from mt_eval.errors import UserError
from mt_eval.scoring.composite import COST_ADJUSTED_FORMULAS, FLOORED_FORMULA, cost_adjusted
from mt_eval.scoring.economics import (
    COST_KEYS,
    DECLARED,
    DECLARED_SOURCE,
    LATENCY_KEYS,
    LOCAL,
    LOCAL_ENGINES,
    MEASURED,
    PAID_SOURCES,
    STATUSES,
    UNKNOWN,
    latency_summary,
    price_cost,
    replayed,
)

MIN_LATENCY_SECONDS = 1e-4
"""No entry the engine times (a process pipe, an HTTP round trip) answers faster: 1 µs is a typed figure."""
ELAPSED_SLACK_SECONDS = 1e-3  # a resumed run's session stamps are rounded to the microsecond
TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "reasoning_tokens")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _close(a: Any, b: Any, rel: float = 1e-9) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return _number(a) and _number(b) and math.isclose(a, b, rel_tol=rel, abs_tol=1e-12)


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _figures(card: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every cost, speed and token figure on the card, with its path."""
    yield "elapsed_seconds", card.get("elapsed_seconds")
    cost = _mapping(card.get("cost"))
    for key in COST_KEYS:
        yield f"cost.{key}", cost.get(key)
    for model, row in _mapping(_mapping(cost.get("pricing")).get("models")).items():
        for key, value in _mapping(row).items():
            yield f"cost.pricing.models.{model}.{key}", value
    for block in ("speed", "tokens", "totals"):
        for key, value in _mapping(card.get(block)).items():
            if key not in ("status",):
                yield f"{block}.{key}", value
    scores = _mapping(card.get("scores"))
    for key in ("cost_adjusted", *LATENCY_KEYS):
        yield f"scores.{key}", scores.get(key)
    for i, r in enumerate(card.get("results") or []):
        yield f"results[{i}].latency_seconds", r.get("latency_seconds")
        for key, value in _mapping(r.get("usage")).items():
            yield f"results[{i}].usage.{key}", value


def _impossible(card: Mapping[str, Any]) -> list[str]:
    return [f"{path}: {value!r} is not a finite, non-negative number" for path, value in _figures(card)
            if value is not None and (not _number(value) or not math.isfinite(value) or value < 0)]


def _expect(path: str, stored: Any, fresh: Any, rel: float = 1e-9) -> list[str]:
    return [] if _close(stored, fresh, rel) else [f"{path}: card says {stored!r}, recomputed {fresh!r}"]


def _tokens(card: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> list[str]:
    tokens, totals = _mapping(card.get("tokens")), _mapping(card.get("totals"))
    problems: list[str] = []
    for key in TOKEN_KEYS:
        summed = sum(int(_mapping(r.get("usage")).get(key) or 0) for r in results)
        problems += _expect(f"tokens.{key}", tokens.get(key, 0), summed)
    total = int(tokens.get("prompt_tokens", 0)) + int(tokens.get("completion_tokens", 0))
    problems += _expect("tokens.total_tokens", tokens.get("total_tokens", 0), total)
    problems += _expect("tokens.tokens_per_entry", tokens.get("tokens_per_entry"),
                        total / len(results) if results else None)
    if int(tokens.get("cached_tokens", 0)) > int(tokens.get("prompt_tokens", 0)):
        problems.append("tokens.cached_tokens: more cached prompt tokens than prompt tokens")
    for key in (*TOKEN_KEYS, "cached_tokens"):
        problems += _expect(f"totals.{key}", totals.get(key, 0), tokens.get(key, 0))
    completion, reasoning = int(tokens.get("completion_tokens", 0)), int(tokens.get("reasoning_tokens", 0))
    problems += _expect("totals.reasoning_ratio", totals.get("reasoning_ratio", 0.0),
                        reasoning / completion if completion else 0.0)
    return problems


def _cost_figures(card: Mapping[str, Any], results: Sequence[Mapping[str, Any]], per_char: bool = True) -> list[str]:
    cost, totals = _mapping(card.get("cost")), _mapping(card.get("totals"))
    total = cost.get("total_cost_usd")
    tokens = _mapping(card.get("tokens")).get("total_tokens") or 0
    chars = sum(len(str(r.get("source", ""))) for r in results)
    problems: list[str] = []
    if total is None:
        problems += [f"cost.{k}: {cost[k]!r} without a total cost" for k in COST_KEYS if cost.get(k) is not None]
    else:
        problems += _expect("cost.cost_per_entry_usd", cost.get("cost_per_entry_usd"),
                            total / len(results) if results else None)
        problems += _expect("cost.cost_per_1k_tokens", cost.get("cost_per_1k_tokens"),
                            total / tokens * 1000 if tokens else None)
        if per_char:
            problems += _expect("cost.cost_per_source_char", cost.get("cost_per_source_char"),
                                total / chars if chars else None)
    for key in ("total_cost_usd", "cost_per_entry_usd"):
        problems += _expect(f"totals.{key}", totals.get(key), cost.get(key))
    scores = _mapping(card.get("scores"))
    # a card names the formula it was scored with; one without was written with the floored one (decisions §3)
    formula = cost.get("cost_adjusted_formula", FLOORED_FORMULA)
    if formula not in COST_ADJUSTED_FORMULAS:
        return [*problems, f"cost.cost_adjusted_formula: {formula!r} is none this harness knows "
                           f"({'; '.join(COST_ADJUSTED_FORMULAS)})"]
    fresh = cost_adjusted(scores.get("composite"), cost.get("cost_per_entry_usd"), formula)
    return problems + _expect("scores.cost_adjusted", scores.get("cost_adjusted"), fresh, 1e-12)


def _priced(card: Mapping[str, Any], parts: set[str], total: float) -> list[str]:
    """A table-priced cost: each row's cost is its tokens × its prices; with only table prices, the total
    is their sum and every token was priced; with provider-reported costs too, the total is at least it."""
    cost, tokens = _mapping(card.get("cost")), _mapping(card.get("tokens"))
    rows = _mapping(_mapping(cost.get("pricing")).get("models"))
    if "pricing-table" not in parts:
        return ["cost.pricing: prices recorded for a cost that was not priced from a table"] if rows else []
    if not rows:
        return ["cost.pricing: a table-priced cost records no prices (tokens × prices cannot be recomputed)"]
    problems: list[str] = []
    for model, row in rows.items():
        try:
            fresh = price_cost(row)
        except (KeyError, TypeError, ValueError):
            problems.append(f"cost.pricing.models.{model}: needs prompt, completion and its token counts")
            continue
        problems += _expect(f"cost.pricing.models.{model}.cost_usd", row.get("cost_usd"), fresh)
    if problems:
        return problems
    priced = sum(float(row["cost_usd"]) for row in rows.values())
    exact = parts == {"pricing-table"}
    for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
        summed, counted = sum(int(row[key]) for row in rows.values()), int(tokens.get(key, 0))
        if summed > counted or (exact and summed != counted):
            problems.append(f"cost.pricing: {summed} {key.replace('_', ' ')} priced, the card counts {counted}")
    if exact:
        problems += _expect("cost.total_cost_usd", total, priced)
    elif total < priced * (1 - 1e-9):
        problems.append(f"cost.total_cost_usd: {total!r} is less than the table-priced part {priced!r}")
    return problems


def _cost_status(card: Mapping[str, Any]) -> list[str]:
    cost = _mapping(card.get("cost"))
    if "status" not in cost:
        return []  # written before statuses: read by scoring.economics.card_cost_status, checked as above
    status, source, total = cost.get("status"), cost.get("source"), cost.get("total_cost_usd")
    if status not in STATUSES:
        return [f"cost.status: {status!r} is none of {', '.join(STATUSES)}"]
    if status == UNKNOWN:
        return ["cost.total_cost_usd: an unknown cost is null, not a figure"] if total is not None else []
    if total is None:
        return [f"cost.total_cost_usd: a {status} cost needs a figure"]
    if status == DECLARED:
        return [] if source == DECLARED_SOURCE else [f"cost.source: a declared cost's source is 'declared', "
                                                     f"not {source!r}"]
    if source == LOCAL:
        tokens = _mapping(card.get("tokens")).get("total_tokens") or 0
        if card.get("method_class") not in LOCAL_ENGINES:
            return [f"cost.source: a measured $0 ('local') is a local rule-based engine's, not method class "
                    f"{card.get('method_class')!r}'s"]
        if total != 0 or tokens:
            return [f"cost.total_cost_usd: a local engine spends nothing, the card says ${total!r} "
                    f"and {tokens} tokens"]
        return []
    parts = set(str(source or "").split("+"))
    if not parts <= PAID_SOURCES:
        return [f"cost.source: {source!r} is not how this engine measures a cost "
                f"({', '.join(sorted(PAID_SOURCES))} or {LOCAL!r})"]
    if parts == {"cache"} and total != 0:
        return [f"cost.total_cost_usd: every answer came from the cache, which costs nothing, not ${total!r}"]
    return _priced(card, parts, float(total))


def _speed(card: Mapping[str, Any], results: Sequence[Mapping[str, Any]]) -> list[str]:
    speed, scores = _mapping(card.get("speed")), _mapping(card.get("scores"))
    latencies = [r.get("latency_seconds") for r in results]
    summary = latency_summary(latencies)
    problems: list[str] = []
    for key in LATENCY_KEYS:
        problems += _expect(f"speed.{key}", speed.get(key), summary[key], 1e-12)
        problems += _expect(f"scores.{key}", scores.get(key), summary[key], 1e-12)
    status = speed.get("status")
    elapsed = speed.get("elapsed_seconds")
    if status is None or not replayed(card):  # before statuses every card recorded the run's elapsed time
        problems += _expect("speed.elapsed_seconds", elapsed, card.get("elapsed_seconds"), 1e-12)
    elif elapsed is not None:
        problems.append(f"speed.elapsed_seconds: {elapsed!r} for outputs replayed from a file (the system's time "
                        "is not known)")
    timed = float(elapsed) if isinstance(elapsed, int | float) and not isinstance(elapsed, bool) and elapsed > 0 \
        else None
    total_tokens = _mapping(card.get("tokens")).get("total_tokens") or 0
    problems += _expect("speed.entries_per_minute", speed.get("entries_per_minute"),
                        len(results) / (timed / 60) if timed else None)
    problems += _expect("speed.tokens_per_second", speed.get("tokens_per_second"),
                        total_tokens / timed if total_tokens and timed else None)
    if "status" not in speed:
        return problems
    if status not in STATUSES:
        return [*problems, f"speed.status: {status!r} is none of {', '.join(STATUSES)}"]
    if status == UNKNOWN:
        where = next((i for i, v in enumerate(latencies) if v is not None), None)
        return problems + ([] if where is None else
                           [f"results[{where}].latency_seconds: {latencies[where]!r} for an unknown speed (null)"])
    missing = next((i for i, v in enumerate(latencies) if v is None), None)
    if missing is not None:
        return [*problems, f"results[{missing}].latency_seconds: null for a {status} speed"]
    if status == MEASURED:
        problems += _measured_latencies(results, elapsed)
    return problems


def _measured_latencies(results: Sequence[Mapping[str, Any]], elapsed: Any) -> list[str]:
    if results and not (_number(elapsed) and float(elapsed) > 0):
        return [f"speed.elapsed_seconds: {elapsed!r}: a measured run of {len(results)} entries takes time"]
    for i, r in enumerate(results):
        latency = float(r["latency_seconds"])
        if latency > float(elapsed) + ELAPSED_SLACK_SECONDS:
            return [f"results[{i}].latency_seconds: {latency!r} is longer than the whole run ({elapsed!r} s)"]
        if latency < MIN_LATENCY_SECONDS and not r.get("cached") and not r.get("error"):
            return [f"results[{i}].latency_seconds: {latency!r} s is below the {MIN_LATENCY_SECONDS} s floor of "
                    "any entry this engine times"]
    return []


def economics_problems(card: Mapping[str, Any], *, per_char: bool = True) -> list[str]:
    """What is wrong with the card's cost and speed figures (empty: nothing). ``per_char``: False when the
    card's sources were replaced (the store's registered texts): cost per source character is then the
    rebuild's to compute, not the card's to match."""
    problems = _impossible(card)
    if problems:
        return problems
    results = [r for r in card.get("results") or [] if isinstance(r, Mapping)]
    return [*_tokens(card, results), *_cost_figures(card, results, per_char), *_cost_status(card),
            *_speed(card, results)]


class FiguresRefused(UserError):
    """Cost or speed figures that do not hold, met where a card's figures would be carried into a new card
    (the store's rebuild): refused like a card that does not verify (exit 1)."""

    exit_code = 1


def require_sound_figures(card: Mapping[str, Any], *, per_char: bool = True) -> None:
    """``FiguresRefused`` naming the first cost or speed figure of ``card`` that does not hold."""
    if problems := economics_problems(card, per_char=per_char):
        raise FiguresRefused(f"refused: its cost or speed figures do not hold: {problems[0]}")

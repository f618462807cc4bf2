"""A user-editable pricing table: cost when the provider reports none, and dry-run estimates.

Providers such as OpenRouter report ``usage.cost`` per call; that figure is what was actually
charged and always wins. Others (OpenAI, local servers) report only tokens, so cost is computed
from a table of USD per million tokens. The shipped table (``pricing.json`` next to this module)
is a starting point; ``--pricing FILE`` replaces it. A model in neither place has *unknown* cost,
which the card records as null rather than a guessed zero.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

DEFAULT_TABLE = Path(__file__).with_name("pricing.json")


@dataclass(frozen=True)
class Price:
    """USD per million tokens; cached prompt tokens fall back to the prompt price."""

    prompt: float
    completion: float
    cached_prompt: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        cached = min(cached_tokens, prompt_tokens)
        cached_price = self.prompt if self.cached_prompt is None else self.cached_prompt
        return ((prompt_tokens - cached) * self.prompt + cached * cached_price
                + completion_tokens * self.completion) / 1e6


class PricingTable:
    def __init__(self, prices: dict[str, Price], source: str) -> None:
        self.prices = prices
        self.source = source  # file the prices came from (recorded on the card)

    @classmethod
    def load(cls, path: str | Path | None = None) -> PricingTable:
        p = Path(path) if path else DEFAULT_TABLE
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise UserError("pricing table not found", file=str(p)) from None
        except json.JSONDecodeError as exc:
            raise UserError(f"pricing table is not valid JSON (line {exc.lineno})", file=str(p)) from None
        models = data.get("models") if isinstance(data, dict) else None
        if not isinstance(models, dict):
            raise UserError("pricing table needs a 'models' object", file=str(p))
        prices = {}
        for name, row in models.items():
            prices[name] = _price(row, str(p), name)
        return cls(prices, "default" if path is None else str(p))

    def get(self, model: str) -> Price | None:
        """Exact slug first, then without a ``provider/`` prefix (``openai/gpt-4o`` → ``gpt-4o``)."""
        found = self.lookup(model)
        return found[1] if found else None

    def lookup(self, model: str) -> tuple[str, Price] | None:
        """As :meth:`get`, with the table's key that matched: the card records which row priced a call."""
        for key in (model, model.split("/", 1)[-1]):
            if key in self.prices:
                return key, self.prices[key]
        return None


def _price(row: Any, file: str, name: str) -> Price:
    try:
        cached = row.get("cached_prompt")
        return Price(float(row["prompt"]), float(row["completion"]), None if cached is None else float(cached))
    except (AttributeError, KeyError, TypeError, ValueError):
        raise UserError("each model needs numeric 'prompt' and 'completion' (USD per million tokens)",
                        file=file, field=f"models.{name}") from None

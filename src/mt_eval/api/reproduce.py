"""Reproduce a card: its method rebuilt from the card (``runcard.reproduce``), re-run on the corpus through
:func:`api.orchestrate.evaluate_card`, the new card compared with the published one (±2 % per weighted metric).

Here, above ``runcard``, because it runs the method: ``runcard`` only rebuilds and compares, so the card package
never imports the run orchestration that imports it (the api↔runcard cycle, issue 23 item 4).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mt_eval.api.orchestrate import evaluate_card
from mt_eval.runcard.reproduce import (
    Reproduction,
    bootstrap_of,
    card_dataset,
    compare_cards,
    method_from_card,
    semantic_of,
)


def reproduce(card: Mapping[str, Any], corpus: Path, *, runs_dir: Path, out: Path | None = None,
              base_url: str | None = None, api_key_env: str | None = None, concurrency: int | None = None,
              progress: Any = None) -> Reproduction:
    """Re-run ``card``'s method on ``corpus`` (the card's entries), write the new card, compare."""
    full, chosen, selection = card_dataset(card, corpus)
    method = method_from_card(card, full, base_url=base_url, api_key_env=api_key_env, concurrency=concurrency)
    semantic = semantic_of(card)  # the card's semantic_score, re-scored with the bundled e5 it names
    opt_in: list[Any] = []
    if semantic is not None:
        from mt_eval.metrics.semantic import SemanticScore

        opt_in.append(SemanticScore(semantic))
    terminology = None
    if card.get("terminology"):  # the card carries the terms it was scored with: score the re-run with them
        terminology = runs_dir / f"terminology-{str(card['run_card_hash'])[:12]}.json"
        terminology.parent.mkdir(parents=True, exist_ok=True)
        terminology.write_text(json.dumps(card["terminology"], ensure_ascii=False), encoding="utf-8")
    new, path = evaluate_card(chosen, method, condition=str(card["condition"]), runs_dir=runs_dir, out=out,
                              selection=selection, progress=progress, bootstrap=bootstrap_of(card),
                              skip_analyser=bool(card.get("analyser_skipped")), terminology=terminology, opt_in=opt_in)
    return Reproduction(str(card["run_card_hash"]), new, path, compare_cards(card, new))

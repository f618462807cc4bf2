"""Fingerprint (Benchmark Spec §3.8, docs/decisions.md §4) and run_card_hash (Run Card Spec).

Fingerprint: SHA-256 over the components sorted by name, each written ``name=<JSON value>`` on
its own line. The components are stored on the card so anyone can recompute it.

Hash: exactly the Run Card Spec snippet — ``json.dumps(card, sort_keys=True,
ensure_ascii=False)`` of the card with ``run_card_hash`` set to ``""``, UTF-8, SHA-256 hex.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.hashing import canonical_json, sha256_text  # here since before mt_eval.hashing: importers keep them


def entry_ids_sha256(ids: Sequence[int]) -> str:
    """The card's ``dataset.entry_ids_sha256``: which entries, in which order, the run scored."""
    return sha256_text(",".join(str(i) for i in ids))


def fingerprint_hash(components: Mapping[str, Any]) -> str:
    lines = [f"{name}={canonical_json(components[name])}" for name in sorted(components)]
    return sha256_text("\n".join(lines))


def card_hash(card: Mapping[str, Any]) -> str:
    body = dict(card)
    body["run_card_hash"] = ""
    return sha256_text(json.dumps(body, sort_keys=True, ensure_ascii=False))


def seal(card: dict[str, Any]) -> dict[str, Any]:
    """Set run_card_hash in place; nothing may change the card afterwards."""
    card["run_card_hash"] = card_hash(card)
    return card

"""What must hold before two runs may be compared, and what to call each run.

A paired test is only meaningful when both systems translated the *same* entries of the *same*
corpus, and a composite difference only when both composites use the same weight profile. Each
refusal is a :class:`UserError` naming both cards, because the user's fix is to pick the right
files, and the message has to say which ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.languages.langid import card_detector
from mt_eval.scoring.calibrated import card_profile

# Accepted spellings for --metric, beside the run-card keys themselves.
ALIASES = {
    "chrf++": "chrf_plus_plus", "chrfpp": "chrf_plus_plus", "chrf2++": "chrf_plus_plus",
    "chrf2": "chrf", "exact_match": "exact_match_rate", "em": "exact_match_rate",
}

# Metrics left out unless asked for: a difference in them is not "better" or "worse".
NOT_BY_DEFAULT = frozenset({"length_ratio"})
UNDIRECTED = frozenset({"length_ratio"})


def check_cards(
    cards: Sequence[Mapping[str, Any]], sources: Sequence[str], entry_ids: Sequence[list[int] | None] | None = None
) -> list[int]:
    """Refuse cards that cannot be paired with the first; return the baseline's entry ids.

    Cards over the same entries listed in a different order are fine (rows are aligned later);
    a different corpus, a different set of entries, a different profile or language detector is an error.
    ``entry_ids`` gives a card's ids where they come from its stored statistics (its ``results[]``
    rows were not read); ``None`` reads them from ``results[]``.
    """
    if len(cards) < 2:
        raise UserError(f"compare needs at least two run cards (a baseline and a system), got {len(cards)}")
    known = list(entry_ids) if entry_ids is not None else [None] * len(cards)
    ids_of = [_entry_ids(card, src, ids) for card, src, ids in zip(cards, sources, known, strict=True)]
    base, base_src, base_ids = cards[0], sources[0], ids_of[0]
    for card, src, ids in zip(cards[1:], sources[1:], ids_of[1:], strict=True):
        sha_a, sha_b = base["dataset"].get("sha256"), card["dataset"].get("sha256")
        if sha_a != sha_b:
            raise UserError(
                f"{src} was scored on a different dataset than the baseline {base_src} "
                f"(dataset.sha256 {_short(sha_b)} vs {_short(sha_a)}); paired tests need the same corpus"
            )
        if ids != base_ids and sorted(ids) != sorted(base_ids):
            only_a, only_b = sorted(set(base_ids) - set(ids)), sorted(set(ids) - set(base_ids))
            raise UserError(
                f"{src} and the baseline {base_src} cover different entries "
                f"({len(ids)} vs {len(base_ids)}; only in baseline: {_few(only_a)}; only in {src}: {_few(only_b)}); "
                "score both on the same selection"
            )
        if (mine_detector := card_detector(card)) != (base_detector := card_detector(base)):
            # code_switching_rate (and with it the composite) is another number under another detector
            raise UserError(
                f"{src} was scored with language detector {mine_detector or 'none'} but the baseline {base_src} "
                f"with {base_detector or 'none'}; their code_switching_rate and composites are not comparable "
                "(score both where the same detector is installed)"
            )
        if (mine := card_profile(card)) != (theirs := card_profile(base)):  # a calibrated one counts by its key
            raise UserError(
                f"{src} uses profile {mine} but the baseline {base_src} uses "
                f"{theirs}; their composites are not comparable"
            )
    return base_ids


def _require(card: Mapping[str, Any], src: str) -> None:
    missing = [k for k in ("dataset", "results", "profile") if k not in card]
    if missing:
        raise UserError(f"{src} is not a run card: missing {', '.join(missing)}")


def _entry_ids(card: Mapping[str, Any], src: str, stored: list[int] | None) -> list[int]:
    """The card's entry ids: ``stored`` (from its statistics) or read from ``results[]``."""
    _require(card, src)
    try:
        ids = stored if stored is not None else [r["entry_id"] for r in card["results"]]
    except (KeyError, TypeError):
        raise UserError(f"{src}: every results[] item needs an entry_id") from None
    if not ids:
        raise UserError(f"{src} has no per-entry results to compare")
    if len(set(ids)) != len(ids):
        raise UserError(f"{src}: results[] lists an entry_id more than once")
    return ids


def _short(sha: object) -> str:
    return str(sha)[:12] if sha else "missing"


def _few(ids: list[int], n: int = 5) -> str:
    if not ids:
        return "none"
    head = ", ".join(str(i) for i in ids[:n])
    return head + (f", … ({len(ids)} in all)" if len(ids) > n else "")


def system_names(cards: Sequence[Mapping[str, Any]], sources: Sequence[str]) -> list[str]:
    """``method name`` (plus ``[condition]`` unless it is the default) when that tells the runs
    apart; otherwise the file stems; a number is appended as the last resort."""
    labels = [_label(card) for card in cards]
    if len(set(labels)) < len(labels):
        labels = [Path(src).stem if src else label for src, label in zip(sources, labels, strict=True)]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def _label(card: Mapping[str, Any]) -> str:
    method = card.get("method") or {}
    name = str(method.get("name") or card.get("model_slug") or "system")
    condition = card.get("condition")
    return f"{name} [{condition}]" if condition and condition != "default" else name


def resolve_metrics(requested: Sequence[str] | None, available: Sequence[str], composite_ok: bool) -> list[str]:
    """The metric ids to report, in the order given (default: every directional metric + composite)."""
    if not requested:
        chosen = [m for m in available if m not in NOT_BY_DEFAULT]
        return [*chosen, "composite"] if composite_ok else chosen
    out: list[str] = []
    for name in requested:
        key = ALIASES.get(name.lower(), name.lower())
        if key == "composite" and not composite_ok:
            raise UserError("no composite: none of the profile's weighted metrics is available")
        if key != "composite" and key not in available:
            raise UserError(f"unknown metric '{name}' (available: {', '.join([*available, 'composite'])})")
        if key not in out:
            out.append(key)
    return out

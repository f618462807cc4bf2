"""Read a card for ``compare``: its stored statistics when the card vouches for them, else a rebuild.

A comparison needs each run's per-entry sufficient statistics. A card written by this harness
references a sidecar holding them under its seal (``runcard/statistics.py``, docs/decisions.md §23);
when the seal verifies and the sidecar's bytes hash to the sealed reference, those are the
statistics the run was scored with, and no metric runs. For that path the card's ``results[]`` are
not even parsed (``runcard/layout.py``): the entry ids come from the sidecar and are checked against
the sealed ``dataset.entry_ids_sha256``.

Anything else (an older card, a missing or changed sidecar, a card edited after sealing) falls back
to rebuilding the statistics from ``results[]``, and says why in one line, never silently: the
numbers are the same, only slower, and a user who moved a card without its sidecar should know.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.runcard import layout
from mt_eval.runcard.io import MAX_CARD_BYTES, load_card, migrate
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.statistics import SidecarError, StoredStatistics, read


@dataclass(frozen=True)
class LoadedCard:
    """One card ready for comparison.

    With ``statistics`` set, ``card`` is the card without its ``results[]`` rows (the statistics
    carry the entry ids); otherwise it is the whole card and ``fallback`` says why the statistics
    must be rebuilt.
    """

    source: str
    card: dict[str, Any]
    statistics: StoredStatistics | None
    fallback: str | None = None

    @property
    def entry_ids(self) -> list[int] | None:
        return self.statistics.entry_ids if self.statistics is not None else None


def load_for_compare(path: str | Path) -> LoadedCard:
    """The card at ``path`` and, where it can be trusted, its stored statistics.

    Raises ``UserError`` (one line, naming the file) only for a file that is not a card at all.
    """
    p = Path(path)
    raw = _read(p)
    head = layout.sealed_header(raw) if raw is not None else None
    if head is not None:
        card = migrate(head, file=str(p))
        try:
            return LoadedCard(str(p), card, _stored(card, p))
        except SidecarError as exc:
            return _rebuild(p, load_card(p), str(exc))
    card = load_card(p)
    if card.get("statistics") is None:
        return _rebuild(p, card, "no statistics are stored with this card (written before they were)")
    if card_hash(card) != card.get("run_card_hash"):
        return _rebuild(p, card, "run_card_hash does not match the card (edited after sealing?)")
    try:
        return LoadedCard(str(p), card, _stored(card, p))
    except SidecarError as exc:
        return _rebuild(p, card, str(exc))


def _read(p: Path) -> bytes | None:
    """The file's bytes, or ``None`` for anything unusual (``load_card`` then reports it properly)."""
    try:
        if not p.is_file() or p.stat().st_size > MAX_CARD_BYTES:
            return None
        return p.read_bytes()
    except OSError:
        return None


def _stored(card: dict[str, Any], path: Path) -> StoredStatistics:
    """The sidecar's statistics, provided it holds every metric that applies to the card's language
    (so any ``--metric`` subset, and the composite, come from it exactly as from a rebuild)."""
    from mt_eval.metrics.registry import metrics_for
    from mt_eval.runcard.rescore import target_card

    stored = read(card, path)
    if len(stored.entry_ids) != len(card.get("results") or stored.entry_ids):
        raise SidecarError("the sidecar and results[] differ in length")
    missing = [m.id for m in metrics_for(target_card(card)) if m.id not in stored.stats]
    if missing:
        raise SidecarError(f"the sidecar has no statistics for {', '.join(missing)} (scored by another harness?)")
    return stored


def _rebuild(p: Path, card: dict[str, Any], reason: str) -> LoadedCard:
    note = f"{p}: stored statistics not used ({reason}); rebuilding every metric's statistics from results[] (slow)"
    return LoadedCard(str(p), card, None, note)

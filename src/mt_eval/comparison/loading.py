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

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mt_eval.errors import UserError
from mt_eval.runcard import layout
from mt_eval.runcard.io import MAX_CARD_BYTES, load_card, migrate
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.seal import card_hash
from mt_eval.runcard.statistics import SidecarError, StoredStatistics, read

if TYPE_CHECKING:
    from mt_eval.languages.card import LanguageCard
    from mt_eval.metrics.base import Metric


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

    Raises ``UserError`` (one line, naming the file) for a file that is not a card at all, or whose
    fields do not have a run card's shape (the first bad field is named).
    """
    p = Path(path)
    raw = _read(p)
    head = layout.sealed_header(raw) if raw is not None else None
    if head is not None:
        card = require_valid(migrate(head, file=str(p)), p)
        try:
            return LoadedCard(str(p), card, _stored(card, p))
        except SidecarError as exc:
            return _rebuild(p, require_valid(load_card(p), p), str(exc))
    card = require_valid(load_card(p), p)
    if card.get("statistics") is None:
        return _rebuild(p, card, "no statistics are stored with this card (written before they were)")
    if card_hash(card) != card.get("run_card_hash"):
        return _rebuild(p, card, "run_card_hash does not match the card (edited after sealing?)")
    try:
        return LoadedCard(str(p), card, _stored(card, p))
    except SidecarError as exc:
        return _rebuild(p, card, str(exc))


def require_valid(card: dict[str, Any], p: Path | str) -> dict[str, Any]:
    """``card``, provided it has a run card's shape (``runcard.model.RunCard``): the comparison reads
    its fields without re-checking them. Else one line naming the file and the first bad field."""
    try:
        RunCard.model_validate(card)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the card"
        raise UserError(f"{p} is not a valid run card: {where}: {first['msg']}") from None
    return card


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
    from mt_eval.runcard.rescore import configured_metrics, target_card

    stored = read(card, path)
    if len(stored.entry_ids) != len(card.get("results") or stored.entry_ids):
        raise SidecarError("the sidecar and results[] differ in length")
    target = target_card(card)
    metrics = metrics_for(target, None, configured_metrics(card))
    missing = [m.id for m in metrics if m.id not in stored.stats]
    if missing:
        raise SidecarError(f"the sidecar has no statistics for {', '.join(missing)} (scored by another harness?)")
    _agrees_with_scores(card, stored, metrics, target)
    return stored


def _agrees_with_scores(card: dict[str, Any], stored: StoredStatistics, metrics: list[Metric],
                        target: LanguageCard) -> None:
    """The sidecar gives the card's own ``scores`` (one sum per metric), or it is not used.

    The seal is a plain SHA-256 anyone can recompute: a sidecar forged and resealed with its card
    would pass the hash checks. The card's ``scores`` are what ``verify`` checks against ``results[]``,
    so statistics that do not reproduce them (entry and error counts, every metric's aggregate) are
    not the run's statistics."""
    scores = card.get("scores")
    if not isinstance(scores, dict):
        raise SidecarError("the card has no scores to check the sidecar against")
    n, n_errors = len(stored.entry_ids), int(stored.errors.sum())
    if scores.get("total") != n or scores.get("errors") != n_errors:
        raise SidecarError(f"the sidecar's {n} entries ({n_errors} errors) are not the card's scores.total "
                           f"{scores.get('total')!r} (scores.errors {scores.get('errors')!r})")  # fmt: skip
    for metric in metrics:
        metric.bind(target)
        value = float(metric.aggregate(stored.stats[metric.id].sum(axis=0)))
        if not _same(value, scores.get(metric.id, _ABSENT)):
            raise SidecarError(f"the sidecar's {metric.id} gives {value:.6g}, "
                               f"the card's scores.{metric.id} is {scores.get(metric.id)!r}")  # fmt: skip


_ABSENT = object()


def _same(value: float, recorded: object) -> bool:
    """``value`` (a fresh aggregate) is the recorded score, within float round-off (NaN is ``None``)."""
    if math.isnan(value):
        return recorded is None
    if isinstance(recorded, bool) or not isinstance(recorded, int | float):
        return False
    return math.isclose(value, recorded, rel_tol=1e-9, abs_tol=1e-12)


def _rebuild(p: Path, card: dict[str, Any], reason: str) -> LoadedCard:
    note = f"{p}: stored statistics not used ({reason}); rebuilding every metric's statistics from results[] (slow)"
    return LoadedCard(str(p), card, None, note)

"""``--publish``: each finished cell's card goes into the store (verified there) with its sweep row.

The sweep is one ``sweeps`` row, found again by its benchmark file's SHA-256 (a resumed sweep adds to
the same row); each cell is one ``sweep_cells`` row keyed by its cell key, holding its axis values,
its status and, once published, the card's id. Publishing itself is ``store.publish.publish``, so a
sweep's card is verified exactly as ``mt-eval publish`` verifies one. A sweep scores no opt-in metric
(``run_cell`` passes ``evaluate`` no embeddings, judges or COMET checkpoint), so its cards never need
``publish``'s ``judges``/``comet``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from mt_eval.store.db import Store
from mt_eval.store.models import Card, Sweep, SweepCell
from mt_eval.store.publish import publish
from mt_eval.sweep.execute import Outcome
from mt_eval.sweep.plan import Cell
from mt_eval.sweep.spec import SweepSpec


def record_sweep(store: Store, spec: SweepSpec, cells: list[Cell]) -> int:
    """The sweep's row (created on first use) and a ``planned`` row per cell not recorded yet."""
    with store.session() as session:
        sweep_id = session.scalar(select(Sweep.id).where(Sweep.file_sha256 == spec.sha256))
        if sweep_id is None:
            row = Sweep(name=spec.name, file_sha256=spec.sha256, spec=_plain(spec.raw), created_at=datetime.now(UTC))
            session.add(row)
            session.flush()
            sweep_id = row.id
        for cell in cells:
            if session.get(SweepCell, (sweep_id, cell.key)) is None:
                session.add(SweepCell(sweep_id=sweep_id, cell_key=cell.key, params=_params(cell), status="planned"))
    return int(sweep_id)


def publish_cell(store: Store, sweep_id: int, outcome: Outcome) -> str:
    """Publish a finished cell's card and mark its row; returns what ``publish`` did with it."""
    status, card_id, what = "failed", None, outcome.message or "failed"
    if outcome.card_path is not None:
        (result,) = publish(store, [outcome.card_path])
        what = result.status
        with store.session() as session:
            card_id = session.scalar(select(Card.id).where(Card.run_card_hash == result.run_card_hash))
        status = "published"
    with store.session() as session:
        row = session.get(SweepCell, (sweep_id, outcome.cell.key))
        if row is None:
            row = SweepCell(sweep_id=sweep_id, cell_key=outcome.cell.key, params=_params(outcome.cell), status=status)
            session.add(row)
        row.status, row.card_id = status, card_id
    return what


def _params(cell: Cell) -> dict[str, Any]:
    return {"spec": cell.spec, "corpus": cell.corpus.name, **{k: _plain(v) for k, v in cell.params.items()}}


def _plain(value: Any) -> Any:
    """TOML values as JSON can hold them (a TOML date or time becomes its ISO text)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)

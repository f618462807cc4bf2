"""Per-entry sufficient statistics stored with a run card (docs/decisions.md §23).

Rebuilding a run's statistics from ``results[]`` re-runs every metric, which made ``compare`` slower
than the test it runs. So a card is written with a *sidecar*, ``<card stem>.stats.npz``: the run's
``MetricTable`` exactly as it was scored (one array per metric id, the errors vector and the entry
ids), and the card records, before it is sealed, a reference to it::

    "statistics": {"file": "run_card.stats.npz", "sha256": "…", "format": "npz-1", "metrics": [...]}

The seal covers the reference and the reference covers the sidecar's bytes, so a sidecar whose
hash matches a sealed card holds the statistics that card was scored with. ``compare`` then loads
arrays instead of running metrics; ``verify`` checks the hash and that the arrays equal the ones it
recomputes from ``results[]``.

The file is an ordinary ``.npz`` (``numpy.load`` reads it), written by hand so that the same
statistics always give the same bytes: members in a fixed order, a fixed timestamp and attributes,
deflate at a fixed level. (``numpy.savez`` stamps each member with the current time.)
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mt_eval.runcard.seal import entry_ids_sha256

if TYPE_CHECKING:
    from mt_eval.languages.card import LanguageCard
    from mt_eval.metrics.base import Metric
    from mt_eval.scoring.scores import MetricTable

FORMAT = "npz-1"
SUFFIX = ".stats.npz"
MAX_SIDECAR_BYTES = 4 * 1024**3
_DATE = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip entry can carry: no clock in the bytes
_LEVEL = 6
_IDS, _ERRORS, _METRIC = "entry_ids", "errors", "metric."


class SidecarError(ValueError):
    """The sidecar cannot be used: missing, not matching the card, or not a statistics file."""


def sidecar_name(card_path: str | Path) -> str:
    """``run_card.json`` → ``run_card.stats.npz``: the sidecar sits beside its card."""
    return Path(card_path).stem + SUFFIX


def encode(table: MetricTable, entry_ids: Sequence[int]) -> bytes:
    """The sidecar's bytes: deterministic, so equal statistics always hash alike."""
    if len(entry_ids) != len(table.errors):
        raise ValueError(f"{len(entry_ids)} entry ids for {len(table.errors)} rows")
    members: list[tuple[str, np.ndarray]] = [
        (_IDS, np.asarray(entry_ids, dtype=np.int64)),
        (_ERRORS, np.asarray(table.errors, dtype=bool)),
        *((_METRIC + m, np.ascontiguousarray(table.stats[m])) for m in table.stats),
    ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, array in members:
            body = io.BytesIO()
            np.lib.format.write_array(body, array, allow_pickle=False)  # dtype kept: sums stay bit-identical
            info = zipfile.ZipInfo(name + ".npy", date_time=_DATE)
            info.create_system, info.external_attr = 3, 0o644 << 16
            zf.writestr(info, body.getvalue(), compress_type=zipfile.ZIP_DEFLATED, compresslevel=_LEVEL)
    return out.getvalue()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reference(table: MetricTable, data: bytes, file: str) -> dict[str, Any]:
    """The card's ``statistics`` block for sidecar bytes ``data`` written as ``file``."""
    return {"file": file, "sha256": sha256_bytes(data), "format": FORMAT, "metrics": list(table.stats)}


@dataclass(frozen=True)
class StoredStatistics:
    """A sidecar's contents: rows are the card's ``results[]`` in order."""

    entry_ids: list[int]
    errors: np.ndarray
    stats: dict[str, np.ndarray]

    def table(self, metrics: Sequence[Metric], target: LanguageCard) -> MetricTable:
        """The ``MetricTable`` over ``metrics`` (each must be stored), in their order, without entries:
        exactly what rebuilding from ``results[]`` gives for the same metrics. Each metric is bound
        to ``target`` (its scorer built), as extraction would have done, so ``aggregate`` works.

        The generated judges stored (``judge_…``, present only when the card recorded them) are added as
        ``RecordedJudge``: the registry cannot build a judge, and a calibrated composite that weights one needs
        its statistics (``compare``). A ``RecordedJudge`` aggregates; it never asks its endpoint."""
        from mt_eval.metrics.judges.cards import is_judge_id
        from mt_eval.metrics.judges.recorded import RecordedJudge
        from mt_eval.scoring.scores import MetricTable

        missing = [m.id for m in metrics if m.id not in self.stats]
        if missing:
            raise SidecarError(f"the sidecar has no statistics for {', '.join(missing)}")
        have = {m.id for m in metrics}
        metrics = [*metrics, *(RecordedJudge({"id": k}) for k in self.stats if is_judge_id(k) and k not in have)]
        for metric in metrics:
            metric.bind(target)
        return MetricTable({m.id: m for m in metrics}, {m.id: self.stats[m.id] for m in metrics}, self.errors)


def decode(data: bytes, ref: Mapping[str, Any]) -> StoredStatistics:
    """Parse sidecar bytes already checked against ``ref`` (the card's block); shape errors raise."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SidecarError(f"the sidecar is not a statistics file ({why})") from None
    ids, errors = arrays.pop(_IDS, None), arrays.pop(_ERRORS, None)
    if ids is None or errors is None or ids.ndim != 1 or errors.shape != ids.shape or errors.dtype != bool:
        raise SidecarError("the sidecar lacks the entry ids or the errors vector")
    stats = {name[len(_METRIC):]: a for name, a in arrays.items() if name.startswith(_METRIC)}
    if list(stats) != list(ref.get("metrics") or []):
        raise SidecarError(f"the sidecar holds metrics {list(stats)}, the card lists {ref.get('metrics')}")
    for metric_id, array in stats.items():
        if array.ndim != 2 or array.shape[0] != len(ids):
            raise SidecarError(f"the sidecar's {metric_id} has shape {array.shape} for {len(ids)} entries")
    return StoredStatistics([int(i) for i in ids], errors, stats)


def read(card: Mapping[str, Any], card_path: str | Path) -> StoredStatistics:
    """The statistics the card references, read from beside ``card_path`` and checked against the
    card: the reference's format and hash, and the entry ids (``dataset.entry_ids_sha256``)."""
    ref = card.get("statistics")
    if not isinstance(ref, Mapping):
        raise SidecarError("no statistics are recorded on the card (written before they were stored)")
    if ref.get("format") != FORMAT:
        raise SidecarError(f"statistics.format {ref.get('format')!r} is not {FORMAT!r}")
    path = sidecar_path(ref, card_path)
    try:
        if path.stat().st_size > MAX_SIDECAR_BYTES:
            raise SidecarError(f"{path.name} is too large to be a statistics file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise SidecarError(f"{path.name} is missing") from None
    except OSError as exc:
        raise SidecarError(f"{path.name} cannot be read ({exc.strerror or exc})") from None
    if sha256_bytes(data) != ref.get("sha256"):
        raise SidecarError(f"{path.name} does not match the card's statistics.sha256 (changed or replaced)")
    stored = decode(data, ref)
    if entry_ids_sha256(stored.entry_ids) != (card.get("dataset") or {}).get("entry_ids_sha256"):
        raise SidecarError(f"{path.name} lists other entries than the card (dataset.entry_ids_sha256)")
    return stored


def sidecar_path(ref: Mapping[str, Any], card_path: str | Path) -> Path:
    """Where the reference points: a plain ``*.stats.npz`` name beside the card, nothing else."""
    name = ref.get("file")
    if not isinstance(name, str) or Path(name).name != name or not name.endswith(SUFFIX) or name == SUFFIX:
        raise SidecarError(f"statistics.file {name!r} is not a *{SUFFIX} name beside the card")
    return Path(card_path).parent / name


def differences(stored: StoredStatistics, fresh: MetricTable, entry_ids: Sequence[int]) -> list[str]:
    """How ``stored`` differs from statistics recomputed from ``results[]``, first difference first
    (``verify``); exact comparison, since both come from the same code on the same text."""
    if stored.entry_ids != list(entry_ids):
        return ["statistics: the sidecar's entry ids differ from results[]"]
    if not np.array_equal(stored.errors, fresh.errors):
        return ["statistics: the sidecar's errors vector differs from results[].error"]
    problems = []
    if list(stored.stats) != list(fresh.stats):
        problems.append(f"statistics.metrics: sidecar has {list(stored.stats)}, recomputed {list(fresh.stats)}")
    for metric_id, array in fresh.stats.items():
        kept = stored.stats.get(metric_id)
        if kept is not None and (kept.dtype != array.dtype or not np.array_equal(kept, array, equal_nan=True)):
            rows = _differing_rows(kept, array)
            where = f" (first at entry {entry_ids[rows[0]]})" if len(rows) else ""
            problems.append(f"statistics: {metric_id} in the sidecar differs from the recomputed statistics{where}")
    return problems


def _differing_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.shape != b.shape:
        return np.zeros(0, dtype=np.intp)
    differ = a != b
    if np.issubdtype(a.dtype, np.floating) and np.issubdtype(b.dtype, np.floating):
        differ &= ~(np.isnan(a) & np.isnan(b))
    return np.flatnonzero(differ.any(axis=1))

"""The leaderboard as one call: query, rank into significance clusters, sort for display; and export.

Each dataset's board holds its top ``limit`` cards by its ranking key (``store.rank_key``: a registered
dataset's primary metric, chrF++ unless it says otherwise; the composite for a dataset nobody registered),
clustered by that key; ``sort`` only reorders the rows shown (default ``rank``: the ranking's own order).

``leaderboard`` is what ``mt-eval leaderboard`` shows and ``--json`` prints; ``export_rows`` is the
same rows flattened for CSV/JSON lines (``mt-eval export``), ranked rows first, then the cards set
apart, so a spreadsheet and the table agree. ``write_export`` writes them, signed by the store's key
when given one (``<file>.sig``, ``runcard/signing.py``), so a reader can check that the rows are the
store's and unchanged.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mt_eval.errors import UserError
from mt_eval.runcard.signing import (
    FILE_SIGNATURE_KIND,
    Signature,
    file_message,
    make_signature,
    parse_signature,
    read_signature_json,
    regular_file,
    signature_path,
    write_atomic,
)
from mt_eval.store.db import Store
from mt_eval.store.query import FIXED_SORTS, BoardRow, Filters, ReviewGate, entry_rows, sort_key, top_rows
from mt_eval.store.ranking import N_RESAMPLES, RankedBoard, rank

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

DEFAULT_LIMIT = 50
FORMATS = ("csv", "jsonl")
RANK = "rank"
"""The default ``sort``: each board in its ranking's order (best cluster first)."""


def leaderboard(store: Store, filters: Filters | None = None, *, sort: str = RANK,
                limit: int | None = DEFAULT_LIMIT, n_resamples: int = N_RESAMPLES,
                gate: ReviewGate | None = None) -> list[RankedBoard]:
    """The boards for ``filters``: each dataset's top ``limit`` cards by its ranking key, ranked; then
    shown by ``sort``. ``gate``: which gated cards review accepted (``review.gate.accepted_in``; None: none)."""
    if limit is not None and limit < 1:
        raise UserError("--limit must be at least 1")
    with store.session() as session:
        higher = True if sort == RANK else sort_key(session, sort)[2]  # an unknown key: refused before ranking
        rows, keys = top_rows(session, filters or Filters(), limit=limit, gate=gate)
        boards = rank(session, rows, n_resamples=n_resamples, keys=keys)
    resort(boards, sort, higher)
    return boards


def resort(boards: Sequence[RankedBoard], sort: str, higher: bool) -> None:
    """Show each board's ranked rows by ``sort`` instead of rank order (their rank ranges stay)."""
    if sort != RANK:
        for board in boards:
            board.rows.sort(key=lambda r: sort_value(r, sort, higher))


def sort_value(row: BoardRow, sort: str, higher: bool) -> tuple[bool, float, str]:
    if sort in FIXED_SORTS:
        value = {"cost_adjusted": row.cost_adjusted, "cost_per_entry": row.cost_per_entry,
                 "latency": row.avg_latency}.get(sort, row.composite)  # fmt: skip
    else:
        value = row.scores.get(sort, {}).get("value")
    if value is None:
        return (True, 0.0, row.run_card_hash)
    return (False, -value if higher else value, row.run_card_hash)


def board_rows(boards: Sequence[RankedBoard]) -> list[BoardRow]:
    """Every row, ranked ones first (best first within each board), then those set apart."""
    return [*(r for b in boards for r in b.rows), *(r for b in boards for r in b.unranked)]


def as_json(boards: Sequence[RankedBoard]) -> str:
    """``leaderboard --json``: the rows best first, each with every score and its interval."""
    return json.dumps([r.as_dict() for r in board_rows(boards)], ensure_ascii=False, indent=2)


def flat(row: BoardRow) -> dict[str, Any]:
    """One row as flat columns (CSV): each score's value and interval bounds side by side."""
    data = row.as_dict()
    out = {k: v for k, v in data.items() if k not in ("composite", "scores")}
    out |= {"composite": row.composite, "composite_ci_lower": row.composite_ci[0],
            "composite_ci_upper": row.composite_ci[1]}  # fmt: skip
    for metric, score in row.scores.items():
        out |= {metric: score["value"], f"{metric}_ci_lower": score["ci_lower"],
                f"{metric}_ci_upper": score["ci_upper"]}
    return out


def export_text(store: Store, filters: Filters | None = None, *, fmt: str = "csv", entries: bool = False,
                n_resamples: int = N_RESAMPLES, gate: ReviewGate | None = None) -> str:
    """The leaderboard rows (every card matching ``filters``), or their per-entry rows, as CSV or JSON lines."""
    if fmt not in FORMATS:
        raise UserError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    boards = leaderboard(store, filters, limit=None, n_resamples=n_resamples, gate=gate)
    rows = board_rows(boards)
    if entries:
        with store.session() as session:
            records = entry_rows(session, [r.run_card_hash for r in rows])
        if fmt == "csv":
            records = [{**{k: v for k, v in r.items() if k != "values"}, **r["values"]} for r in records]
    else:
        records = [flat(r) for r in rows] if fmt == "csv" else [r.as_dict() for r in rows]
    return _csv(records) if fmt == "csv" else "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def _csv(records: Iterable[dict[str, Any]]) -> str:
    records = list(records)
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    for record in records:
        writer.writerow({k: _cell(v) for k, v in record.items()})
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    """CSV cells: text as is, except a leading formula character, quoted so spreadsheets do not run it."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return "" if value is None else value


def write_export(text: str, output: Path, key: Ed25519PrivateKey | None = None,
                 signer: str | None = None) -> list[Path]:
    """Write the export to ``output`` and, with ``key``, its detached signature beside it; the files
    written. An older ``<output>.sig`` is removed when the new export is not signed: it would sign
    bytes that are no longer there."""
    data = text.encode("utf-8")
    sig = signature_path(output)
    write_atomic(output, data)
    if key is None:
        sig.unlink(missing_ok=True)
        return [output]
    write_atomic(sig, sign_export(data, output.name, key, signer).encode("utf-8"))
    return [output, sig]


def sign_export(data: bytes, name: str, private: Ed25519PrivateKey, signer: str | None) -> str:
    """The detached signature file's text for ``data`` (a file called ``name``): the signer's key
    over ``FILE_CONTEXT`` + SHA-256 of the bytes (``runcard/signing.py`` says why the context)."""
    digest = hashlib.sha256(data).hexdigest()
    sig = make_signature(private, file_message(digest), signer)
    return json.dumps({"kind": FILE_SIGNATURE_KIND, "version": 1, "file": name, "sha256": digest, **asdict(sig)},
                      ensure_ascii=False, indent=2) + "\n"


def _file_sha256(path: Path) -> str:
    """SHA-256 of a file, read in blocks (an export may be large)."""
    regular_file(path, "signed")
    try:
        with path.open("rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest()
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None


@dataclass(frozen=True)
class FileCheck:
    """A detached file signature checked: ``problem`` is ``None`` when it is valid for the bytes."""

    path: Path
    sha256: str
    signature: Signature
    problem: str | None


def check_export(path: str | Path) -> FileCheck:
    """``keys check``: ``path`` against ``path.sig``: the bytes' SHA-256 is the signed one, and the
    signature holds. Who the key belongs to is the caller's question (``--key``, ``--db``)."""
    p = Path(path)
    sig_path = signature_path(p)
    if not sig_path.exists():
        raise UserError("no detached signature beside it", file=str(p), hint=f"expected {sig_path.name}")
    data = read_signature_json(sig_path, FILE_SIGNATURE_KIND)
    sig = parse_signature(data, str(sig_path), "signature")
    digest = _file_sha256(p)
    if data.get("sha256") != digest:
        return FileCheck(p, digest, sig, "the file's bytes are not the ones signed (sha256 differs)")
    return FileCheck(p, digest, sig, sig.check(file_message(digest)))

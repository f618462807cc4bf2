"""Tab-separated corpora: a spreadsheet export that linguists can edit without tooling.

The first row names the columns with entry field names (``id``, ``source``, ``reference``,
optional ``segment``, ``difficulty``, ``provenance``, ``register``, ``context``, ``notes``,
``variants``, ..., or the legacy ``index``/``source_text``/``target_expected``). Unknown columns
are kept as extra string fields.

There is no quoting and no escaping: a cell is everything between two tabs. Sentences are full
of quotation marks, and CSV-style quoting would silently eat them; the price is that a cell
cannot contain a tab or a newline, and a stray tab shows up as a wrong column count on that line.

Cells are strings except ``id`` and ``difficulty`` (integers; difficulty may also be
easy/medium/hard) and ``variants`` (alternatives separated by `` ||| ``, the Moses convention).
An empty cell means "not given", so the model default applies.
"""

from __future__ import annotations

import re
from typing import Any

from mt_eval.corpus.building import RawEntry
from mt_eval.corpus.legacy import LEGACY_FIELDS
from mt_eval.corpus.problems import Problems

VARIANT_SEPARATOR = " ||| "
_INT_COLUMNS = {"id", "index", "difficulty"}
# Longer digit strings stay text (and fail as "expected an integer"): int() refuses >4300 digits.
_INTEGER = re.compile(r"-?\d{1,30}")


def _cell_value(column: str, cell: str) -> Any:
    if column in _INT_COLUMNS and _INTEGER.fullmatch(cell.strip()):
        return int(cell.strip())
    if column == "variants":
        return [v.strip() for v in cell.split(VARIANT_SEPARATOR.strip()) if v.strip()]
    return cell


def _check_header(header: list[str], problems: Problems) -> bool:
    ok = True
    seen: set[str] = set()
    for column in header:
        if not column:
            problems.add("empty column name in header row", line=1)
            ok = False
        elif column in seen:
            problems.add(f"duplicate column '{column}' in header row", line=1, field=column)
            ok = False
        seen.add(column)
    canonical = {LEGACY_FIELDS.get(c, c) for c in header}
    for required, legacy in (("id", "index"), ("source", "source_text"), ("reference", "target_expected")):
        if required not in canonical:
            problems.add(
                f"missing required column '{required}' (or legacy '{legacy}') in header row",
                line=1,
                field=required,
            )
            ok = False
    return ok


def parse_tsv(text: str, problems: Problems) -> list[RawEntry]:
    """Split TSV text into raw entries; column-count mismatches are reported per line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    header = [h.strip() for h in lines[0].split("\t")]
    if not _check_header(header, problems):
        return []
    raw: list[RawEntry] = []
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(header):
            problems.add(
                f"expected {len(header)} tab-separated columns, got {len(cells)}",
                line=lineno,
                hint="cells cannot contain tabs",
            )
            continue
        data = {col: _cell_value(col, cell) for col, cell in zip(header, cells, strict=True) if cell != ""}
        raw.append(RawEntry(data, len(raw) + 1, lineno))
    return raw

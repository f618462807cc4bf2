"""Readers of human judgment files into a ``JudgmentTable``; every problem is one located line.

Formats (``FORMATS``), all UTF-8 with a header row, tab- or comma-separated by extension (.tsv/.csv):

* ``mqm``: the WMT MQM layout (Freitag et al. 2021), as in ``tests/data/mqm-ted``: columns ``lp, [doc,]
  seg_id, system, source, reference_refA, hypothesis, mqm_avg_score``. ``lp`` is ``ende`` or ``en-de``
  (stored as ``en-de``, the dataset key); scores are error penalties ≤ 0, closer to 0 better, so they are
  kept as they are (higher is better). Rows of ``ref-*`` systems are human translations.
* ``da`` / ``esa``: direct assessment / error span annotation scores on 0–100: columns ``dataset, entry,
  system, score`` and optionally ``rater, source, reference, hypothesis``.
* ``simpeval``: SimpEval-style sheets (Maddela et al. 2023), one row per output with one column per
  rater: ``original_id, original, system, generation, rating_1 … rating_k`` and optionally ``dataset``
  (default: the file's stem) and ``reference``; empty ratings are skipped; each rating is one judgment
  with rater ``rating_i``.
* the community review's 0–3 ratings come from the store (``review_judgments``), not a file.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from mt_eval.errors import UserError
from mt_eval.judgments.table import Judgment, JudgmentTable

MQM_COLUMNS = ("lp", "seg_id", "system", "source", "reference_refA", "hypothesis", "mqm_avg_score")
SCORE_COLUMNS = ("dataset", "entry", "system", "score")
SIMPEVAL_COLUMNS = ("original_id", "original", "system", "generation")
RANGES = {"mqm": (-math.inf, 0.0), "da": (0.0, 100.0), "esa": (0.0, 100.0), "simpeval": (0.0, 100.0)}
MAX_BYTES = 200 * 2**20
_LP = re.compile(r"^([a-z]{2,3})-?([a-z]{2,3})$")


def _rows(path: Path, required: tuple[str, ...]) -> Iterator[tuple[str, dict[str, str]]]:
    """(``file:line``, row) for each data row; the header must name every required column."""
    if not path.is_file():
        raise UserError("judgments file not found", file=str(path))
    if path.stat().st_size > MAX_BYTES:
        raise UserError(f"judgments file larger than {MAX_BYTES // 2**20} MiB", file=str(path))
    delimiter = "," if path.suffix.lower() == ".csv" else "\t"
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 text (byte {exc.start})", file=str(path)) from None
    # MQM files are unquoted (a source may contain a double quote); CSV sheets use ordinary quoting
    lines = io.StringIO(text, newline="")
    reader = (csv.reader(lines, delimiter=delimiter, quoting=csv.QUOTE_NONE) if delimiter == "\t"
              else csv.reader(lines, delimiter=delimiter))
    header = next(reader, None)
    if not header:
        raise UserError("empty judgments file", file=str(path))
    header = [h.strip() for h in header]
    if missing := [c for c in required if c not in header]:
        raise UserError(f"missing column(s) {', '.join(missing)} (header: {', '.join(header)})", file=f"{path}:1")
    for number, values in enumerate(reader, start=2):
        if not values or all(not v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise UserError(f"{len(values)} fields, the header has {len(header)}", file=f"{path}:{number}")
        yield f"{path}:{number}", dict(zip(header, values, strict=True))


def _number(raw: str, where: str, column: str, scale: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise UserError(f"not a number: {raw[:40]!r}", file=where, field=column) from None
    low, high = RANGES[scale]
    if not math.isfinite(value) or not low <= value <= high:
        bound = "≤ 0 (an MQM penalty)" if scale == "mqm" else f"in [{low:g}, {high:g}]"
        raise UserError(f"score {raw} must be {bound}", file=where, field=column)
    return value + 0.0  # -0.0 → 0.0


def _text(row: dict[str, str], column: str, where: str) -> str:
    value = row[column]
    if not value.strip():
        raise UserError("empty", file=where, field=column)
    return value


def language_pair(raw: str, where: str) -> str:
    """``ende`` or ``en-de`` → ``en-de``."""
    m = _LP.match(raw.strip().lower())
    if not m:
        raise UserError(f"not a language pair: {raw[:20]!r} (expected e.g. ende or en-de)", file=where, field="lp")
    return f"{m.group(1)}-{m.group(2)}"


def read_mqm(path: Path) -> JudgmentTable:
    def rows() -> Iterator[Judgment]:
        for where, row in _rows(path, MQM_COLUMNS):
            seg = row["seg_id"].strip()
            if not seg:
                raise UserError("empty", file=where, field="seg_id")
            doc = row.get("doc", "").strip()
            system = _text(row, "system", where).strip()
            yield Judgment(
                dataset=language_pair(row["lp"], where), entry=f"{doc}:{seg}" if doc and not seg.isdigit() else seg,
                system=system, score=_number(row["mqm_avg_score"], where, "mqm_avg_score", "mqm"),
                source=_text(row, "source", where), reference=_text(row, "reference_refA", where),
                hypothesis=row["hypothesis"], human=system.lower().startswith("ref"), where=where)
    return JudgmentTable.build("mqm", rows(), file=str(path))


def read_scores(path: Path, scale: str) -> JudgmentTable:
    def rows() -> Iterator[Judgment]:
        for where, row in _rows(path, SCORE_COLUMNS):
            yield Judgment(
                dataset=_text(row, "dataset", where).strip(), entry=_text(row, "entry", where).strip(),
                system=_text(row, "system", where).strip(), score=_number(row["score"], where, "score", scale),
                rater=row.get("rater", "").strip() or None, source=row.get("source"),
                reference=row.get("reference"), hypothesis=row.get("hypothesis"), where=where)
    return JudgmentTable.build(scale, rows(), file=str(path))


def read_simpeval(path: Path) -> JudgmentTable:
    def rows() -> Iterator[Judgment]:
        for where, row in _rows(path, SIMPEVAL_COLUMNS):
            raters = [c for c in row if re.fullmatch(r"rating_\d+", c)]
            if not raters:
                raise UserError("no rating_1 … rating_k columns", file=where)
            for rater in raters:
                if row[rater].strip():
                    yield Judgment(
                        dataset=(row.get("dataset") or "").strip() or path.stem,
                        entry=_text(row, "original_id", where).strip(), system=_text(row, "system", where).strip(),
                        score=_number(row[rater], where, rater, "simpeval"), rater=rater,
                        source=row["original"], reference=row.get("reference"), hypothesis=row["generation"],
                        where=where)
    return JudgmentTable.build("simpeval", rows(), file=str(path))


FORMATS: dict[str, Callable[[Path], JudgmentTable]] = {
    "mqm": read_mqm,
    "da": lambda p: read_scores(p, "da"),
    "esa": lambda p: read_scores(p, "esa"),
    "simpeval": read_simpeval,
}


def sniff(path: Path) -> str:
    """The format a file's header says it is (``auto``)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            head = fh.readline()
    except OSError:
        raise UserError("judgments file not found", file=str(path)) from None
    columns = {c.strip() for c in re.split(r"[\t,]", head)}
    if "mqm_avg_score" in columns:
        return "mqm"
    if "generation" in columns and "original_id" in columns:
        return "simpeval"
    if "score" in columns:
        return "da"
    raise UserError("cannot tell the judgments format from the header; give --format "
                    f"({', '.join(FORMATS)})", file=f"{path}:1")


def load_judgments(path: str | Path, fmt: str = "auto") -> JudgmentTable:
    p = Path(path)
    fmt = sniff(p) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise UserError(f"unknown judgments format {fmt!r} (known: auto, {', '.join(FORMATS)})", field="format")
    return FORMATS[fmt](p)


def review_judgments(db: str | None, campaign: str) -> JudgmentTable:
    """A review campaign's 0–3 ratings (reviewers who pass quality control, control items left out): dataset
    = the campaign, entry = the entry id, system = the card's run_card_hash, rater = the reviewer."""
    from mt_eval.review.campaign import find_campaign
    from mt_eval.review.ratings import BAD, included, load_ratings
    from mt_eval.store.db import open_store

    with open_store(db) as store, store.session() as session:
        found = find_campaign(session, campaign)
        rows = included(load_ratings(session, found.id))
    judged = [Judgment(dataset=campaign, entry=str(r.entry_id), system=r.card_hash, score=float(r.value),
                       rater=r.reviewer, hypothesis=None, where=f"campaign {campaign}")
              for r in rows if r.card_hash is not None and r.kind != BAD]  # controls: no card, and not a system
    return JudgmentTable.build("review", judged, file=f"campaign {campaign}")

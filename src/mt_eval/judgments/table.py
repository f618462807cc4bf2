"""The one table of human judgments: rows keyed by (dataset, entry, system[, rater]).

Every importer produces ``Judgment`` rows; the table refuses a key given twice (two scores for the
same rater, system and entry are a broken file, not a tie to average). Calibration reads
``segments()``: one human score per (dataset, entry, system), the mean over raters, with the texts
the metrics need when the source file carried them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from mt_eval.errors import UserError


@dataclass(frozen=True)
class Judgment:
    """One human score. ``score`` is oriented so that higher is better (MQM penalties are ≤ 0)."""

    dataset: str
    entry: str
    system: str
    score: float
    rater: str | None = None
    source: str | None = None
    reference: str | None = None
    hypothesis: str | None = None
    human: bool = False  # the "system" is a human translation (MQM ref-* rows)
    where: str = ""  # file:line it came from, for messages

    @property
    def key(self) -> tuple[str, str, str, str | None]:
        return (self.dataset, self.entry, self.system, self.rater)


@dataclass(frozen=True)
class Segment:
    """One judged translation: the raters' mean score for (dataset, entry, system)."""

    dataset: str
    entry: str
    system: str
    score: float
    raters: int
    source: str | None
    reference: str | None
    hypothesis: str | None
    human: bool


@dataclass
class JudgmentTable:
    """Judgments of one kind (``scale``: mqm, da, esa, review, simpeval) with unique keys."""

    scale: str
    rows: list[Judgment] = field(default_factory=list)

    @classmethod
    def build(cls, scale: str, rows: Iterable[Judgment], *, file: str | None = None) -> JudgmentTable:
        seen: dict[tuple[str, str, str, str | None], str] = {}
        out: list[Judgment] = []
        for row in rows:
            if row.key in seen:
                rater = f", rater {row.rater}" if row.rater else ""
                raise UserError(f"entry {row.entry} of system {row.system}{rater} is judged twice (also at "
                                f"{seen[row.key]})", file=row.where or file)
            seen[row.key] = row.where
            out.append(row)
        if not out:
            raise UserError("no judgments in the file", file=file)
        return cls(scale, out)

    def segments(self, *, include_human: bool = False) -> list[Segment]:
        """One row per (dataset, entry, system), raters averaged, in first-seen order; human translations
        (``ref-*``) only with ``include_human`` (one of them *is* the reference the metrics compare with)."""
        groups: dict[tuple[str, str, str], list[Judgment]] = {}
        for row in self.rows:
            if row.human and not include_human:
                continue
            groups.setdefault((row.dataset, row.entry, row.system), []).append(row)
        out = []
        for (dataset, entry, system), rows in groups.items():
            first = rows[0]
            out.append(Segment(dataset, entry, system, sum(r.score for r in rows) / len(rows), len(rows),
                               first.source, first.reference, first.hypothesis, first.human))
        return out

    def datasets(self) -> list[str]:
        return list(dict.fromkeys(r.dataset for r in self.rows))

    def systems(self) -> list[str]:
        return list(dict.fromkeys(r.system for r in self.rows if not r.human))

    def subset(self, dataset: str) -> JudgmentTable:
        rows = [r for r in self.rows if r.dataset == dataset]
        if not rows:
            raise UserError(f"no judgments for dataset {dataset!r} (there are: {', '.join(self.datasets())})")
        return JudgmentTable(self.scale, rows)


def check_texts(segments: Sequence[Segment], file: str | None) -> None:
    """Scoring from judgments needs each segment's source, reference and output."""
    for s in segments:
        if s.reference is None or s.hypothesis is None:
            raise UserError(f"entry {s.entry} of system {s.system} has no reference or hypothesis text; "
                            "--from-judgments needs them (or give cards with --cards)", file=file)

"""``calibrate --judge DIR``: generated LLM judges scored on the judged segments, candidates like every metric.

Each judge (a card from ``metrics generate-judges``) is computed on exactly the segments the matrix holds,
through the scoring pipeline (``score_outputs(opt_in=…)``: cached, temperature 0, refused on secret
entries), one call per system over that system's judged outputs. A judge with a value on every segment and
not constant joins the candidates (0–1, higher better, as it is): the PLS may weight it, and the report
shows it as a single-metric contender. A profile that weights one names its judge card (id and sha256,
``scoring.calibrated``): ``score --profile P --judge CARD`` computes it on a run card and ``verify --judge
CARD`` recomputes it (``runcard/judges.py``). A judge is a candidate only when ``--judge`` names it: it sends
the judged texts to its endpoint.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mt_eval.calibration.matrix import Matrix
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.judgments.table import JudgmentTable, check_texts
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.judges.metric import JudgeMetric
from mt_eval.scoring.pipeline import score_outputs


def add_judges(m: Matrix, table: JudgmentTable, judges: Sequence[JudgeMetric], file: str | None = None) -> list[str]:
    """Add each judge's per-segment value (0–1, higher is better) to the candidates and to each segment's raw
    values (so a profile weighting it is scored exactly as a card would carry it); returns the judges added."""
    if not judges:
        return []
    try:
        src, tgt = m.dataset.split("-")
        target, source = language_card(tgt), language_card(src)
    except (ValueError, UserError):
        raise UserError(f"--judge needs a language-pair dataset such as en-de, not {m.dataset!r}") from None
    segments = {(s.entry, s.system): s for s in table.subset(m.dataset).segments()}
    used = [segments[(item, system)] for item, system in zip(m.items, m.systems, strict=True)]
    check_texts(used, file)
    ids = [j.id for j in judges]
    clash = [i for i in ids if i in m.candidates]
    if clash:
        raise UserError(f"judge id {clash[0]!r} is also a metric's id: rename the judge card")
    columns = {i: np.full(len(m), np.nan) for i in ids}
    for system in dict.fromkeys(m.systems):
        rows = [k for k, s in enumerate(m.systems) if s == system]
        entries = [Entry(id=n + 1, source=used[k].source or "", reference=used[k].reference or "")
                   for n, k in enumerate(rows)]
        data = Dataset(info=DatasetInfo(id=f"judgments-{m.dataset}", source_language=src, target_language=tgt),
                       entries=entries, sha256="0" * 64)
        outputs = [Translation(n + 1, used[k].hypothesis or "") for n, k in enumerate(rows)]
        scored, _ = score_outputs(data, outputs, target, source, only=ids, opt_in=judges)
        for i in ids:
            values = scored.entry_values(i) if i in scored.metrics else None
            if values is None:
                raise UserError(f"judge {i} does not apply to {tgt} outputs")
            columns[i][rows] = values
    added = []
    for judge in judges:
        column = columns[judge.id]
        if np.isnan(column).any():
            m.dropped[judge.id] = f"no score on {int(np.isnan(column).sum())} of {len(m)} segments"
        elif float(column.max() - column.min()) == 0.0:
            m.dropped[judge.id] = "constant"
        else:
            m.candidates[judge.id] = column
            m.judge_cards[judge.id] = judge.spec.card_sha256
            for row, value in zip(m.raw, column, strict=True):
                row[judge.id] = float(value)
            added.append(judge.id)
    return added

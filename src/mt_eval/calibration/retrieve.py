"""``calibrate --retrieve K``: keep the K candidate metrics most relevant to the task before the PLS (AutoMetrics §3.1).

A regression on ~80–500 labels cannot weigh dozens of correlated candidates well: the paper retrieves a short
list from the MetricBank first. Here the pool is the candidates the matrix has (metrics with a value on every
judged segment), ranked by ``metrics.bank.suggest`` over their metric cards against a task description; the
rest leave the matrix with the reason recorded in ``dropped`` (the report lists it), so they are in neither
stage of the fit. K ≥ the number of candidates changes nothing (nothing is ranked, nothing loaded).
"""

from __future__ import annotations

from mt_eval.calibration.matrix import Matrix
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.metrics.bank import card_for, suggest


def default_task(dataset: str) -> str:
    """A task description from the judgments' language pair (``en-de``/``ende``), else from the dataset's name."""
    pair = dataset.replace("_", "-")
    codes = pair.split("-") if "-" in pair else ([pair[:2], pair[2:]] if len(pair) == 4 and pair.isalpha() else [])
    try:
        source, target = (language_card(c).name for c in codes) if len(codes) == 2 else ("", "")
    except UserError:
        source = target = ""
    if source and target:
        return f"segment-level quality of machine translation from {source} into {target}, judged by people"
    return f"segment-level quality of machine translation ({dataset}), judged by people"


def retrieve_candidates(m: Matrix, k: int, task: str, method: str | None = None) -> list[str]:
    """Keep the ``k`` candidates whose cards rank highest for ``task``; returns them, best first."""
    if k < 1:
        raise UserError(f"--retrieve must be at least 1, not {k}", field="retrieve")
    if k >= len(m.candidates):
        return list(m.candidates)
    _, ranked = suggest(task, k, method=method, cards=[card_for(name) for name in m.candidates])
    kept = [card.id for card, _ in ranked]
    for name in [n for n in m.candidates if n not in kept]:
        del m.candidates[name]
        m.dropped[name] = f"not among the {k} metrics retrieved for the task"
    return kept

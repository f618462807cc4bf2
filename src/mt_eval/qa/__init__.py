"""Multilingual QA evaluation (the QA metrics spec): EM, F1, RLC, RLC_OK, Cost, CNBE, Semantic Score.

``mt_eval.cli.qa.qa_app`` is the ``mt-eval qa`` sub-command; :func:`run_qa` is the same run as a
function, :func:`build_card` / :func:`verify_qa_card` its sealed card. The metrics are protocol
metrics (``qa/measures.py``), the scripts live in ``mt_eval.languages.scripts``, the console text
in ``mt_eval.render.qa``. See ``docs/qa.md`` for the metric definitions and the spec discrepancies.
"""

from mt_eval.qa.card import build_card, verify_qa_card
from mt_eval.qa.data import GoldItem, GoldSet, Prediction, load_gold, load_predictions
from mt_eval.qa.metrics import (
    DDOF,
    DEFAULT_RLC_THRESHOLD,
    best_exact_match,
    best_f1,
    cnbe_values,
    compute_rlc,
    exact_match,
    f1_score_lang,
    mean_std,
    normalize_text,
    rlc_binary,
)
from mt_eval.qa.run import JudgeConfig, RunOptions, run_qa

__all__ = [
    "DDOF",
    "DEFAULT_RLC_THRESHOLD",
    "GoldItem",
    "GoldSet",
    "JudgeConfig",
    "Prediction",
    "RunOptions",
    "best_exact_match",
    "best_f1",
    "build_card",
    "cnbe_values",
    "compute_rlc",
    "exact_match",
    "f1_score_lang",
    "load_gold",
    "load_predictions",
    "mean_std",
    "normalize_text",
    "rlc_binary",
    "run_qa",
    "verify_qa_card",
]

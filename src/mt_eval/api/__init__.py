"""The public Python API: score lists of strings, evaluate a method on a dataset, compare, read cards.

    >>> import mt_eval
    >>> result = mt_eval.score(["Hola mundo."], ["Hola mundo."], lang="en-es")  # doctest: +SKIP
    >>> result["chrf_plus_plus"]  # doctest: +SKIP
    100.0

Every function returns an :class:`EvalResult` (values, intervals, per-entry values, ``.card``) and writes
nothing unless asked (``write=True`` or ``out=PATH``). ``evaluate`` is safe inside a running event loop
(a notebook); ``evaluate_async`` is its coroutine. ``run`` (``api.orchestrate``) is the CLI's path: plan,
budget confirmation and progress through callbacks, resume checked once, an existing ``out`` refused unless
``overwrite``; ``evaluate_card`` is ``run`` that always writes and returns the card dict and its path.
docs/python.md has the worked examples.
"""

from mt_eval.api.cards import compare, load_card
from mt_eval.api.evaluation import evaluate, evaluate_async, score, score_predictions
from mt_eval.api.orchestrate import RunOutcome, evaluate_card, run
from mt_eval.api.results import EntryScore, EvalResult, MetricScore
from mt_eval.api.runs import DEFAULT_RUNS_DIR, RunInterrupted

__all__ = [
    "DEFAULT_RUNS_DIR",
    "EntryScore",
    "EvalResult",
    "MetricScore",
    "RunInterrupted",
    "RunOutcome",
    "compare",
    "evaluate",
    "evaluate_async",
    "evaluate_card",
    "load_card",
    "run",
    "score",
    "score_predictions",
]

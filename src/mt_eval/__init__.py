"""mt-eval: a reproducible evaluation harness for translation methods.

The public names are imported on first use (PEP 562), so a command that needs little (``mt-eval
compare`` reading stored statistics) does not pay for importing the whole harness first.
"""

import warnings
from typing import TYPE_CHECKING

from mt_eval.lazy import lazy_exports
from mt_eval.version import __version__

# The spec names a field 'register' (entries, results, method_config); it shadows a pydantic
# BaseModel attribute, which is harmless for data models, so pydantic's warning is silenced.
warnings.filterwarnings("ignore", message='Field name "register"', category=UserWarning)

if TYPE_CHECKING:
    from mt_eval.api import (
        EntryScore,
        EvalResult,
        MetricScore,
        compare,
        evaluate,
        evaluate_async,
        load_card,
        score,
        score_predictions,
    )
    from mt_eval.corpus import load_corpus, select_entries
    from mt_eval.runcard.model import RunCard

_PUBLIC = {
    "score": "mt_eval.api",
    "evaluate": "mt_eval.api",
    "evaluate_async": "mt_eval.api",
    "compare": "mt_eval.api",
    "load_card": "mt_eval.api",
    "score_predictions": "mt_eval.api",
    "EvalResult": "mt_eval.api",
    "MetricScore": "mt_eval.api",
    "EntryScore": "mt_eval.api",
    "load_corpus": "mt_eval.corpus",
    "select_entries": "mt_eval.corpus",
    "RunCard": "mt_eval.runcard.model",
}

__all__ = ["EntryScore", "EvalResult", "MetricScore", "RunCard", "__version__", "compare", "evaluate",
           "evaluate_async", "load_card", "load_corpus", "score", "score_predictions", "select_entries"]


__getattr__ = lazy_exports(__name__, _PUBLIC, globals())

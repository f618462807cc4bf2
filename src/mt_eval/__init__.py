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
    from mt_eval.api import evaluate, load_card, score_predictions
    from mt_eval.comparison import compare
    from mt_eval.corpus import load_corpus
    from mt_eval.runcard.model import RunCard

_PUBLIC = {
    "evaluate": "mt_eval.api",
    "load_card": "mt_eval.api",
    "score_predictions": "mt_eval.api",
    "compare": "mt_eval.comparison",
    "load_corpus": "mt_eval.corpus",
    "RunCard": "mt_eval.runcard.model",
}

__all__ = ["RunCard", "__version__", "compare", "evaluate", "load_card", "load_corpus", "score_predictions"]


__getattr__ = lazy_exports(__name__, _PUBLIC, globals())

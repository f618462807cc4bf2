"""mt-eval: a reproducible evaluation harness for translation methods."""

import warnings

from mt_eval.version import __version__

# The spec names a field 'register' (entries, results, method_config); it shadows a pydantic
# BaseModel attribute, which is harmless for data models, so pydantic's warning is silenced.
warnings.filterwarnings("ignore", message='Field name "register"', category=UserWarning)

from mt_eval.api import evaluate, load_card, score_predictions  # noqa: E402
from mt_eval.comparison import compare  # noqa: E402
from mt_eval.corpus import load_corpus  # noqa: E402
from mt_eval.runcard.model import RunCard  # noqa: E402

__all__ = ["RunCard", "__version__", "compare", "evaluate", "load_card", "load_corpus", "score_predictions"]

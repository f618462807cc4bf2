"""Run cards: schema 2.0 model, builder, fingerprint and seal, verification, rescoring, stored statistics.

Names are imported on first use (PEP 562): reading a card and its statistics (``compare``) must not
import the builder and every metric behind ``verify_card``.
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mt_eval.runcard.model import RunCard
    from mt_eval.runcard.seal import card_hash, fingerprint_hash
    from mt_eval.runcard.verify import verify_card

_PUBLIC = {
    "RunCard": "mt_eval.runcard.model",
    "card_hash": "mt_eval.runcard.seal",
    "fingerprint_hash": "mt_eval.runcard.seal",
    "verify_card": "mt_eval.runcard.verify",
}

__all__ = ["RunCard", "card_hash", "fingerprint_hash", "verify_card"]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        value = getattr(import_module(_PUBLIC[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mt_eval.runcard' has no attribute {name!r}")

"""Run cards: schema 2.0 model, builder, fingerprint and seal, verification, rescoring, stored statistics.

Names are imported on first use (PEP 562): reading a card and its statistics (``compare``) must not
import the builder and every metric behind ``verify_card``.
"""

from typing import TYPE_CHECKING

from mt_eval.lazy import lazy_exports

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


__getattr__ = lazy_exports(__name__, _PUBLIC, globals())

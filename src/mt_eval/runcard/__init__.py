"""Run cards: schema 2.0 model, builder, fingerprint and seal, verification, rescoring."""

from mt_eval.runcard.model import RunCard
from mt_eval.runcard.seal import card_hash, fingerprint_hash
from mt_eval.runcard.verify import verify_card

__all__ = ["RunCard", "card_hash", "fingerprint_hash", "verify_card"]

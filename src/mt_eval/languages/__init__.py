"""Language cards."""

from mt_eval.languages.card import LanguageCard, language_card, normalize_code

__all__ = ["LanguageCard", "language_card", "normalize_code"]

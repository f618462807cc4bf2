"""The names ``variant_class`` may take (Scoring Spec App. B): the corpus schema's vocabulary, checked by
``validate``; what each rule accepts is ``metrics.variant_class``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError

ORTHOGRAPHIC = "orthographic"
WORD_ORDER = "word_order"
OPTIONAL_PARTICLE = "optional_particle"
LEMMA_SYNONYM = "lemma_synonym"
PROGRESSIVE_AMBIGUITY = "progressive_ambiguity"
INCLUSIVE_EXCLUSIVE = "inclusive_exclusive"
RULES = (ORTHOGRAPHIC, WORD_ORDER, OPTIONAL_PARTICLE, LEMMA_SYNONYM, PROGRESSIVE_AMBIGUITY, INCLUSIVE_EXCLUSIVE)


def parse_variant_class(value: str | None, entry_id: int | None = None, file: str | None = None) -> frozenset[str]:
    """The rule names of a ``variant_class`` (empty for none); one line naming the entry for an unknown name.
    Spellings with hyphens, spaces or a slash ("word-order", "inclusive/exclusive") name the same rule."""
    if not value or not value.strip():
        return frozenset()
    names = [re.sub(r"[\s\-/]+", "_", part.strip().casefold()) for part in re.split(r"[+,]", value)]
    unknown = [n for n in names if n not in RULES]
    if unknown:
        where = f"entry {entry_id}: " if entry_id is not None else ""
        raise UserError(f"{where}unknown variant_class {value!r}", file=file, field="variant_class",
                        hint=f"use one or more of {', '.join(RULES)} joined by '+' (Scoring Spec App. B)")
    return frozenset(names)


def check_variant_classes(entries: Sequence[Entry], file: str | None = None) -> None:
    """Refuse a corpus with an unknown variant class (the first one, in one line)."""
    for e in entries:
        parse_variant_class(e.variant_class, e.id, file)

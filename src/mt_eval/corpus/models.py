"""Corpus schema (Benchmark Spec §2): the dataset envelope and its entries.

Models are strict about the spec's enums and ranges so that a malformed corpus fails at load
time with a located error, never half-way through a paid run.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator


class Segment(StrEnum):
    GOLD_STANDARD = "gold_standard"
    HELD_OUT = "held_out"
    DEVELOPMENT = "development"
    DIAGNOSTIC = "diagnostic"


SECRET_SEGMENTS = frozenset({Segment.GOLD_STANDARD.value, Segment.HELD_OUT.value})
"""The segments whose texts never leave the governance organisation (Benchmark Spec §2.3, §8): no public
page, export, remote metric or review batch outside a governance store may carry them."""


def is_secret(result: Any) -> bool:
    """Whether a card's per-entry result (a mapping with ``segment``) belongs to a secret segment."""
    return str(result.get("segment")) in SECRET_SEGMENTS


class Provenance(StrEnum):
    GOLD_STANDARD = "gold_standard"
    TEXTBOOK = "textbook"
    ELICITED = "elicited"
    CORPUS = "corpus"


class Register(StrEnum):
    CONVERSATIONAL = "conversational"
    FORMAL = "formal"
    TECHNICAL = "technical"
    CEREMONIAL = "ceremonial"
    EDUCATIONAL = "educational"


class Context(StrEnum):
    GREETING = "greeting"
    DECLARATION = "declaration"
    QUESTION = "question"
    INSTRUCTION = "instruction"
    NARRATIVE = "narrative"
    LABEL = "label"
    ERROR = "error"


class Entry(BaseModel):
    """One translation challenge. ``variants`` are accepted alternative forms (equivalent match only).

    ``references`` holds every reference when an entry has several (sacrebleu's multiple reference
    streams: chrF/chrF++/BLEU/TER score against all of them, docs/decisions.md §26), ``reference`` being
    the first; a corpus entry may give ``references`` alone. Empty for the ordinary single reference.
    """

    model_config = ConfigDict(extra="allow", frozen=True)

    id: int
    source: str
    reference: str
    segment: Segment = Segment.DEVELOPMENT
    difficulty: int = Field(default=3, ge=1, le=5)
    provenance: Provenance = Provenance.CORPUS
    register: Register | None = None
    context: Context | None = None
    morphological_analysis: str | None = None
    notes: str | None = None
    variant_class: str | None = None
    variants: list[str] = Field(default_factory=list)
    # Legacy harness difficulty label (easy/medium/hard) kept verbatim when it was mapped.
    difficulty_label: str | None = None
    references: list[str] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _reference_from_references(cls, data: Any) -> Any:
        """``references`` alone names the first reference too."""
        if isinstance(data, dict) and "reference" not in data and isinstance(data.get("references"), list) \
                and data["references"] and isinstance(data["references"][0], str):
            return {**data, "reference": data["references"][0]}
        return data

    @model_validator(mode="after")
    def _first_reference(self) -> Entry:
        if self.references and self.references[0] != self.reference:
            raise ValueError("references[0] must be the reference (or give references alone)")
        if any(not r.strip() for r in self.references):
            raise ValueError("references must not contain an empty reference")
        return self

    @property
    def all_references(self) -> list[str]:
        """Every reference of the entry, the first being ``reference``."""
        return self.references or [self.reference]


class DatasetInfo(BaseModel):
    """The dataset envelope (Benchmark Spec §2.1)."""

    model_config = ConfigDict(extra="allow")

    id: str
    version: str = "1.0"
    language_pair: str = ""
    source_language: str
    target_language: str
    created: str | None = None
    license: str | None = None
    provenance: list[str] = Field(default_factory=list)
    exposure: dict[str, Any] | None = None
    """What is known about the test set's public exposure (``catalog.Exposure``: release month, known
    training-set inclusion, sources); a card records it and the store filters on it (decisions §55)."""


class Dataset(BaseModel):
    """A loaded corpus: envelope, entries and the SHA-256 that pins a run to these exact bytes."""

    info: DatasetInfo
    entries: list[Entry]
    sha256: str
    path: str = ""

"""Corpus schema (Benchmark Spec §2): the dataset envelope and its entries.

Models are strict about the spec's enums and ranges so that a malformed corpus fails at load
time with a located error, never half-way through a paid run.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Segment(StrEnum):
    GOLD_STANDARD = "gold_standard"
    HELD_OUT = "held_out"
    DEVELOPMENT = "development"
    DIAGNOSTIC = "diagnostic"


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
    """One translation challenge. ``variants`` are accepted alternative references."""

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


class Dataset(BaseModel):
    """A loaded corpus: envelope, entries and the SHA-256 that pins a run to these exact bytes."""

    info: DatasetInfo
    entries: list[Entry]
    sha256: str
    path: str = ""

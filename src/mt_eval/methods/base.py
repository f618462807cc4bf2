"""The Method protocol: what a translation method receives and returns.

A method receives ``TranslationRequest``s built from sources and metadata only; the request type
has no reference field, so a method cannot see a reference even by accident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable


class MethodClass(StrEnum):
    """Benchmark Spec §9.6."""

    RAW_LLM = "raw-llm"
    COACHED_LLM = "coached-llm"
    PIPELINE = "pipeline"
    CUSTOM_PLUGIN = "custom-plugin"
    API = "api"
    HUMAN = "human"
    RBMT = "rbmt"  # rule-based MT such as Apertium; recorded as-is (not in §9.6's enum, see docs)


@dataclass(frozen=True)
class TranslationRequest:
    entry_id: int
    source: str
    source_language: str
    target_language: str
    register: str | None = None
    context: str | None = None
    difficulty: int | None = None


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.cached_tokens += other.cached_tokens
        self.cost_usd += other.cost_usd


@dataclass
class Translation:
    """One method output. ``error`` set means the entry failed and is scored as empty output."""

    entry_id: int
    text: str = ""
    error: str | None = None
    latency_seconds: float = 0.0
    usage: Usage = field(default_factory=Usage)
    model_id: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class MethodIdentity:
    """What the card and fingerprint record about a method (DESIGN decision 4)."""

    name: str
    method_class: MethodClass
    version: str
    model_slug: str
    config: dict[str, Any] = field(default_factory=dict)
    provider: str = "local"
    system_prompt: str = ""


@runtime_checkable
class Method(Protocol):
    identity: MethodIdentity

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        """Translate every request; one Translation per request, failures as ``error``."""
        ...

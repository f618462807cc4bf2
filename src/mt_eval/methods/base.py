"""The Method protocol: what a translation method receives and returns, and what it declares.

A method receives ``TranslationRequest``s built from sources and metadata only; the request type
has no reference field, so a method cannot see a reference even by accident.

Everything the engine, ``mt-eval run`` and the API ask of a method is a declared member of
:class:`Method` (group size, requests in flight, retries so far, ``open``/``close`` around a run,
the request ``plan``), so callers use the members instead of probing with ``getattr``.
:class:`MethodBase` supplies the defaults of a method that makes no paid requests; every built-in
method inherits it. A plugin written against the older two-member protocol (``identity`` and
``translate`` only) is wrapped once by :func:`as_method` where methods enter (the registry, the
engine, the API), which is the only place optional members are looked up.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from mt_eval.errors import MethodError


class MethodClass(StrEnum):
    """Benchmark Spec §9.6."""

    RAW_LLM = "raw-llm"
    COACHED_LLM = "coached-llm"
    PIPELINE = "pipeline"
    CUSTOM_PLUGIN = "custom-plugin"
    API = "api"
    HUMAN = "human"
    RBMT = "rbmt"  # rule-based MT such as Apertium; recorded as-is (not in §9.6's enum, see docs)
    NMT = "nmt"  # a local neural MT checkpoint (NLLB, OPUS-MT): neither §9.6's api nor a plugin (see docs)


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
    """What the card and fingerprint record about a method (docs/decisions.md §4)."""

    name: str
    method_class: MethodClass
    version: str
    model_slug: str
    config: dict[str, Any] = field(default_factory=dict)
    provider: str = "local"
    system_prompt: str = ""
    coaching: str | None = None  # the coaching text appended to the system prompt (method_config.coachingPrompt)


@runtime_checkable
class Method(Protocol):
    """A translation method as the engine drives it; inherit :class:`MethodBase` for the defaults."""

    identity: MethodIdentity

    @property
    def batch_size(self) -> int | None:
        """Entries per ``translate`` call; None: the engine's default chunk (the method splits it)."""
        ...

    @property
    def concurrency(self) -> int | None:
        """Requests the method keeps in flight; None: the engine runs one group at a time."""
        ...

    @property
    def retries(self) -> int:
        """Transient-failure retries so far (the progress bar shows them)."""
        ...

    @property
    def resumable(self) -> bool:
        """Whether a run keeps a journal (``runs/<id>/journal.jsonl``) that ``--resume`` continues.

        False for a method whose every output is at hand (a predictions file): rerunning it costs
        nothing, so it leaves no run directory behind."""
        ...

    @property
    def warnings(self) -> list[str]:
        """What the card must say about these outputs (e.g. entries missing from a predictions file)."""
        ...

    async def open(self) -> None:
        """Acquire what a run needs (HTTP client, cache) inside the engine's event loop."""
        ...

    async def close(self) -> None:
        """Release what :meth:`open` acquired; called even when the run fails."""
        ...

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any] | None:
        """Requests, tokens and cost the run would spend (no network); None: it spends nothing."""
        ...

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        """Translate every request; one Translation per request, failures as ``error``."""
        ...


class MethodBase(ABC):
    """Defaults for :class:`Method`: a local method that makes no paid requests and needs no setup.
    ``translate`` is the one member every method must write itself."""

    identity: MethodIdentity
    batch_size: int | None = None
    concurrency: int | None = None
    resumable: bool = True  # a plugin may be slow or remote: journal it unless it says otherwise

    @property
    def retries(self) -> int:
        return 0

    @property
    def warnings(self) -> list[str]:
        return []

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any] | None:
        return None

    @abstractmethod
    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        """One Translation per request, failures as ``error``."""


class _LegacyMethod(MethodBase):
    """A plugin object with ``identity`` and ``translate`` (and maybe some optional members)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.identity = inner.identity
        self.batch_size = getattr(inner, "batch_size", None)
        self.concurrency = getattr(inner, "concurrency", None)
        self.resumable = bool(getattr(inner, "resumable", True))

    @property
    def warnings(self) -> list[str]:
        return [str(w) for w in getattr(self.inner, "warnings", None) or []]

    @property
    def retries(self) -> int:
        return int(getattr(getattr(self.inner, "stats", None), "retries", 0) or 0)

    async def open(self) -> None:
        if (opener := getattr(self.inner, "open", None)) is not None:
            await opener()

    async def close(self) -> None:
        if (closer := getattr(self.inner, "close", None)) is not None:
            await closer()

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any] | None:
        planner = getattr(self.inner, "plan", None)
        return dict(planner(requests)) if planner is not None else None

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        return list(await self.inner.translate(requests))


def as_method(obj: Any) -> Method:
    """``obj`` itself when it declares the whole protocol, else wrapped with the defaults.

    Plugins written before the protocol declared ``open``/``plan``/… keep working; anything
    without ``identity`` and an async ``translate`` is not a method and is rejected here, with
    a message, rather than failing half-way through a run.
    """
    if not isinstance(getattr(obj, "identity", None), MethodIdentity) or not callable(getattr(obj, "translate", None)):
        raise MethodError(f"{type(obj).__name__} is not a translation method",
                          hint="it needs an 'identity' (MethodIdentity) and an async 'translate(requests)'")
    method = obj if isinstance(obj, Method) else _LegacyMethod(obj)
    identity = _checked_identity(method.identity, type(obj).__name__)
    if identity is not method.identity:
        try:
            method.identity = identity
        except AttributeError:  # a read-only property: wrap, so the run sees the checked identity
            method = _LegacyMethod(obj)
            method.identity = identity
    return method


def _checked_identity(identity: MethodIdentity, owner: str) -> MethodIdentity:
    """``identity`` with ``method_class`` a :class:`MethodClass` (a string naming one is converted);
    anything the card could not record is refused now, before a single entry is translated."""
    for name in ("name", "version", "model_slug", "provider", "system_prompt"):
        if not isinstance(getattr(identity, name), str):
            raise MethodError(f"{owner}.identity.{name} must be a string, not {type(getattr(identity, name)).__name__}")
    if not isinstance(identity.config, dict):
        raise MethodError(f"{owner}.identity.config must be a dict, not {type(identity.config).__name__}")
    if isinstance(identity.method_class, MethodClass):
        return identity
    try:
        method_class = MethodClass(identity.method_class)
    except (ValueError, TypeError):
        raise MethodError(f"{owner}.identity.method_class {identity.method_class!r} is not a method class",
                          hint=f"use MethodClass: {', '.join(c.value for c in MethodClass)}") from None
    return replace(identity, method_class=method_class)

"""Run card schema 2.0 (Benchmark Spec §3, Run Card Spec): every field of both specs.

Groups keep ``extra="allow"`` so a card written by a newer harness still loads; the seal is
computed over the JSON document itself, never over this model, so nothing is lost either way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = "2.0"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Config(_Open):
    api_provider: str = "local"
    temperature: float | None = None
    max_tokens: int | None = None
    batch_size: int | None = None
    concurrency: int | None = None
    coaching_file: str | None = None
    method_path: str | None = None
    fst_retries: int | None = None


class MethodConfig(_Open):
    """The canonical 8-field MethodConfig (camelCase, as the Run Card Spec prints it)."""

    model: str
    temperature: float | None = None
    batchSize: int | None = None
    register: str | None = None
    coachingFile: str | None = None
    coachingPrompt: str | None = None
    promptContext: str | None = None
    qualityTier: str | None = None


class MethodInfo(_Open):
    """Method identity (DESIGN decision 4): what was run, in enough detail to run it again."""

    name: str
    method_class: str
    version: str
    config: dict[str, Any] = Field(default_factory=dict)
    config_sha256: str


class DatasetRef(_Open):
    id: str
    version: str
    language_pair: str
    source_language: str
    target_language: str
    sha256: str
    entry_count: int
    selection: dict[str, Any] = Field(default_factory=dict)
    entry_ids_sha256: str


class Fingerprint(_Open):
    hash: str
    components: dict[str, Any]


class Environment(_Open):
    harness_version: str
    harness_git_commit: str | None
    python_version: str
    sacrebleu_version: str
    os: str


class Usage(_Open):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0


class Result(_Open):
    """One entry (Benchmark Spec §3.7), plus the per-entry values of every entry-level metric."""

    entry_id: int
    source: str
    reference: str
    predicted: str
    exact_match: bool
    entry_chrf: float | None
    fst_accepted: bool | None = None
    fst_analysis: list[str] = Field(default_factory=list)
    difficulty: int
    provenance: str
    segment: str
    register: str | None = None
    latency_seconds: float
    usage: Usage
    error: str | None = None
    variants: list[str] = Field(default_factory=list)
    morphological_analysis: str | None = None
    metrics: dict[str, float | None] = Field(default_factory=dict)


class MetricInfo(_Open):
    status: str
    level: str
    scale: float
    higher_is_better: bool
    weight: float | None = None
    signature: str | None = None


class RunCard(_Open):
    schema_version: str = SCHEMA_VERSION
    run_id: str
    harness_version: str
    timestamp: str
    elapsed_seconds: float
    model_slug: str
    model_id: str | None
    condition: str
    method_class: str
    method: MethodInfo
    temperature: float | None = None
    system_prompt_sha256: str
    system_prompt_used: str
    coaching_data_sha256: str | None = None
    fst_version: str | None = None
    tools_enabled: list[str] = Field(default_factory=list)
    batch_size: int | None = None
    max_retries: int | None = None
    config: Config
    method_config: MethodConfig
    dataset: DatasetRef
    profile: Literal["A", "B"]
    analyser_skipped: str | None = None  # the analyser spec a --skip-analyser run left out
    terminology: dict[str, list[str]] | None = None
    fingerprint: Fingerprint
    scores: dict[str, Any]
    cost: dict[str, Any]
    speed: dict[str, Any]
    tokens: dict[str, Any]
    totals: dict[str, Any]
    metrics: dict[str, MetricInfo]
    environment: Environment
    warnings: list[str] = Field(default_factory=list)
    results: list[Result]
    run_card_hash: str = ""

"""Run card schema 2.0 (Benchmark Spec §3, Run Card Spec): every field of both specs.

Groups keep ``extra="allow"`` so a card written by a newer harness still loads; the seal is
computed over the JSON document itself, never over this model, so nothing is lost either way.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry, Provenance, Register, Segment
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation
from mt_eval.methods.base import Usage as MethodUsage

# the cost, speed, token and totals blocks, and the open base of every block (split out: decisions §49)
from mt_eval.runcard.model_economics import Cost, Speed, Tokens, Totals, _Open
from mt_eval.stats.config import MAX_RESAMPLES

SCHEMA_VERSION = "2.0"


class Config(_Open):
    api_provider: str = "local"
    temperature: float | None = None
    max_tokens: int | None = None
    batch_size: int | None = None
    concurrency: int | None = None
    coaching_file: str | None = None
    method_path: str | None = None
    fst_retries: int | None = None


NONE_DECLARED = "none declared"  # method_config.development_data when a run declared no development data


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
    # which data the method saw for prompting, few-shot examples or tuning (Benchmark Spec §9.2.2: allowed
    # but declared); builder writes "none declared" when nothing was; cards before it lack the field
    development_data: str | None = None


class MethodInfo(_Open):
    """Method identity (docs/decisions.md §4): what was run, in enough detail to run it again."""

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
    exposure: dict[str, Any] | None = None
    """A catalogue test set's public exposure as the corpus recorded it (release month, known training-set
    inclusion, sources: ``catalog.entries.Exposure``); absent for other corpora."""


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
    match_verdict: str | None = None
    """EXACT / EQUIVALENT / MISS / NO_OUTPUT (Scoring Spec App. B, ``metrics.variant_class``); absent on cards
    written before verdicts."""
    entry_chrf: float | None
    fst_accepted: bool | None = None
    fst_analysis: list[str] = Field(default_factory=list)
    difficulty: int
    provenance: str
    segment: str
    register: str | None = None
    latency_seconds: float | None
    """Seconds this entry took (a batched entry carries its request's); null when unknown (outputs replayed
    from a file that gives none)."""
    usage: Usage
    error: str | None = None
    variants: list[str] = Field(default_factory=list)
    variant_class: str | None = None
    """The entry's variant-class rules (absent when it has none): what equivalent match applied."""
    morphological_analysis: str | None = None
    metrics: dict[str, float | None] = Field(default_factory=dict)
    references: list[str] | None = None
    """Every reference (``reference`` first) of an entry that has several; absent otherwise, and on cards
    written before multi-reference scoring."""


class MetricInfo(_Open):
    status: str
    level: str
    scale: float
    higher_is_better: bool
    weight: float | None = None
    signature: str | None = None


class Interval(_Open):
    """A percentile bootstrap interval of one metric (Scoring Spec §8.1)."""

    ci_lower: float | None
    """Lower bound of the (1 − alpha) interval, in the metric's own units."""
    ci_upper: float | None
    """Upper bound of the (1 − alpha) interval."""


class ConfidenceIntervals(_Open):
    """How the intervals were drawn, then one :class:`Interval` per metric id and ``composite``.

    Metrics without a value on the run have no interval; with ``n_resamples`` 0 only the header
    is present. All metrics and the composite share one set of resamples."""

    method: str = "percentile"
    """Interval construction: the percentile bootstrap."""
    n_resamples: int = Field(ge=0, le=MAX_RESAMPLES)
    """Bootstrap resamples (0: intervals disabled; at most 100,000, so a hostile card cannot make
    ``verify`` allocate without bound before the seal is even checked)."""
    alpha: float = Field(gt=0, lt=1)
    """The intervals cover 1 − alpha."""
    seed: int
    """NumPy seed of the resampling; the same seed reproduces every interval exactly."""


class GroupScores(_Open):
    """Corpus-level values of one group of entries: the whole run, or one breakdown group.

    Every spec metric key is present, ``null`` when the metric does not apply or had no value;
    plugin metrics add their own keys beside these."""

    total: int
    """Entries in the group."""
    evaluated: int
    """Entries whose method produced an output (total − errors)."""
    errors: int
    """Entries whose method failed; they are scored as empty output (docs/decisions.md §1)."""
    exact_match_rate: float | None = None
    """Share of outputs equal to the reference after NFC and whitespace normalisation."""
    equivalent_match_rate: float | None = None
    """Share equal to the reference or one of the entry's accepted variants."""
    chrf_plus_plus: float | None = None
    """sacrebleu chrF++ (0–100), from summed statistics: equal to sacrebleu's corpus score."""
    chrf: float | None = None
    """sacrebleu chrF (0–100)."""
    bleu: float | None = None
    """sacrebleu BLEU (0–100) with the language card's tokenizer."""
    ter: float | None = None
    """sacrebleu TER (0–100+, lower is better)."""
    length_ratio: float | None = None
    """Σ output characters / Σ reference characters (omissions < 1, padding > 1)."""
    fst_acceptance_rate: float | None = None
    """Share of output words the target analyser accepts (profile A languages)."""
    morphological_accuracy: float | None = None
    """Agreement with the entries' gold morphological analyses, where the corpus has them."""
    orthographic_accuracy: float | None = None
    """Share of words written in the card's orthography (required marks, scripts)."""
    semantic_score: float | None = None
    """Rescaled cosine of output and reference embeddings (``--semantic BACKEND``; null without it); 0 for
    an output in another language of the target's script (decisions §40)."""
    comet_score: float | None = None
    """COMET from a local checkpoint (``--comet-model``; null without it): reported with the low-resource
    warning, never in the composite."""
    comet_model: str | None = None
    """The checkpoint comet_score used, ``NAME@sha256:HASH`` of its content (null without ``--comet-model``)."""
    code_switching_rate: float | None = None
    """Share of output words in the source language (lower is better)."""
    hallucination_rate: float | None = None
    """Share of output content words with no dictionary support in the source (lower is better)."""
    terminology_adherence: float | None = None
    """Share of required terms rendered with an accepted translation (needs --terminology)."""
    consistency_score: float | None = None
    """Share of repeated source terms translated the same way each time (needs --terminology)."""
    compliance_index: float | None = None
    """Share of entries passing the card's format checks on the raw output."""
    compliance_index_repaired: float | None = None
    """The same after the post-translation repair hooks."""
    repair_effectiveness: float | None = None
    """Share of raw violations the hooks repaired (null when there were none)."""
    exact_matches: int | None = None
    """Count behind exact_match_rate."""
    equivalent_matches: int | None = None
    """Count behind equivalent_match_rate."""
    fst_accepted: int | None = None
    """Accepted words behind fst_acceptance_rate."""
    composite: float | None = None
    """Scoring Spec §4: weighted mean of the profile's available metrics, normalised to 0–1."""
    quality_tier: str
    """Tier of the composite by §5.1's thresholds. Deployable and above are displayed as awaiting
    review until a community review passes (Benchmark Spec §7.2; the card keeps the metric tier)."""
    confidence_intervals: ConfidenceIntervals | None = None
    """Intervals of this group (the whole run, and each difficulty and provenance group)."""


class Scores(GroupScores):
    """The card's ``scores`` block: the whole run, its breakdowns, and cost/latency summaries."""

    by_difficulty: dict[str, GroupScores] = Field(default_factory=dict)
    """One group per difficulty tier 1–5 present in the run."""
    by_provenance: dict[str, GroupScores] = Field(default_factory=dict)
    """One group per entry provenance (corpus, gold_standard, synthetic, …)."""
    by_register: dict[str, GroupScores] = Field(default_factory=dict)
    """One group per register; entries without one are "unspecified"."""
    by_segment: dict[str, GroupScores] = Field(default_factory=dict)
    """One group per corpus segment (development, diagnostic, gold_standard, held_out)."""
    cost_adjusted: float | None = None
    """§6.3 composite / max(1, log2(1 + 1000·cost per entry)); null when cost is zero or unknown."""
    avg_latency_seconds: float | None = None
    """Mean per-entry latency (a batched entry carries its request's latency)."""
    median_latency_seconds: float | None = None
    """Median per-entry latency."""
    p95_latency_seconds: float | None = None
    """95th percentile of per-entry latency."""


class Statistics(_Open):
    """Where the run's per-entry sufficient statistics are stored (docs/decisions.md §23).

    ``compare`` reads them instead of re-running every metric on ``results[]``, and ``verify`` checks
    them against its own recomputation. Cards written before this block existed have none."""

    file: str
    """The sidecar's file name, beside the card (``<card stem>.stats.npz``)."""
    sha256: str
    """SHA-256 of the sidecar's bytes: the seal covers this, this covers the statistics."""
    format: str
    """``npz-1``: a NumPy ``.npz`` with ``entry_ids``, ``errors`` and one ``metric.<id>`` array each."""
    metrics: list[str]
    """The metric ids stored, in the run's order."""


class JudgeInfo(_Open):
    """A generated LLM judge the run was scored with (``--judge``; ``runcard/judges.py``)."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """SHA-256 of the judge card's canonical JSON (``metrics.judges.cards.card_sha256``): ``verify`` recomputes
    the judge only with a judge card that hashes to this."""
    kind: str
    """``single`` (one criterion) or ``rubric`` (five described levels)."""
    model: str
    """The judge model asked."""
    base_url: str
    """The OpenAI-compatible endpoint asked (never a key)."""


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
    composite_rule: Literal["spec-4.1", "anchored-1", "anchored-2"] | None = None
    """How the composite was computed (``scoring/composite.py``); absent on cards written before the
    adequacy-anchored rule, which are scored with the spec's plain formula (``spec-4.1``)."""
    analyser_skipped: str | None = None  # the analyser spec a --skip-analyser run left out
    terminology: dict[str, list[str]] | None = None
    judges: dict[str, JudgeInfo] | None = None
    """Generated LLM judges scored on the run (absent without ``--judge``): their values are in ``scores`` and
    ``results[].metrics`` under their ids, never in the composite unless a calibrated profile weights them."""
    fingerprint: Fingerprint
    scores: Scores
    cost: Cost
    speed: Speed
    tokens: Tokens
    totals: Totals
    metrics: dict[str, MetricInfo]
    environment: Environment
    language_detector: str | None = None
    """The language detector that scored this card, name and version (null: none did; absent on older cards,
    whose metrics' signatures name it): cards scored with different detectors are not compared or verified."""
    warnings: list[str] = Field(default_factory=list)
    results: list[Result]
    statistics: Statistics | None = None
    """The stored per-entry statistics (absent on older cards: ``compare`` then rebuilds them)."""
    run_card_hash: str = ""

    # What a card says, as the objects the harness runs with (``mt_eval.load_card`` returns this model):
    # rerun the method, rescore the outputs, or score other outputs on the very same entries.

    def identity(self) -> MethodIdentity:
        """The method as the card records it: name, class, version, model, configuration, provider, prompt."""
        return MethodIdentity(name=self.method.name, method_class=MethodClass(self.method.method_class),
                              version=self.method.version, model_slug=self.model_slug, config=dict(self.method.config),
                              provider=self.config.api_provider, system_prompt=self.system_prompt_used)

    def corpus(self) -> Dataset:
        """The entries the run scored, rebuilt from ``results[]`` (texts, references, metadata), with the
        corpus's id, languages and sha256 (the ``dataset`` field is the card's block that names them)."""
        ref = self.dataset
        info = DatasetInfo(id=ref.id, version=ref.version, language_pair=ref.language_pair,
                           source_language=ref.source_language, target_language=ref.target_language)
        entries = [Entry(id=r.entry_id, source=r.source, reference=r.reference, difficulty=r.difficulty,
                         provenance=Provenance(r.provenance), segment=Segment(r.segment),
                         register=Register(r.register) if r.register else None, variants=list(r.variants),
                         morphological_analysis=r.morphological_analysis, references=list(r.references or []),
                         variant_class=r.variant_class)
                   for r in self.results]
        return Dataset(info=info, entries=entries, sha256=ref.sha256)

    def translations(self) -> list[Translation]:
        """Each entry's output as the method returned it (a failed entry keeps its error), in card order."""
        return [Translation(r.entry_id, text=r.predicted, error=r.error, latency_seconds=r.latency_seconds or 0.0,
                            usage=MethodUsage(prompt_tokens=r.usage.prompt_tokens,
                                              completion_tokens=r.usage.completion_tokens,
                                              reasoning_tokens=r.usage.reasoning_tokens),
                            model_id=getattr(r, "model_id", None))
                for r in self.results]

"""Assemble a sealed run card from a dataset, a method's translations and the metric table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mt_eval.analyzers.registry import version_of
from mt_eval.corpus.models import Dataset
from mt_eval.languages import langid
from mt_eval.languages.card import LanguageCard
from mt_eval.methods.base import MethodIdentity, Translation
from mt_eval.metrics.behavioral import CodeSwitching
from mt_eval.metrics.opt_in import OptInMetric, card_blocks
from mt_eval.metrics.structural import fst_details_many
from mt_eval.metrics.variant_class import entry_verdicts
from mt_eval.runcard import environment, statistics
from mt_eval.runcard.judges import fingerprint_judges, require_judges
from mt_eval.runcard.model import NONE_DECLARED, RunCard
from mt_eval.runcard.seal import canonical_json, entry_ids_sha256, fingerprint_hash, seal, sha256_text
from mt_eval.scoring.calibrated import RULE as CALIBRATED_RULE
from mt_eval.scoring.calibrated import CalibratedProfile
from mt_eval.scoring.composite import (
    COST_ADJUSTED_FORMULA,
    DEFAULT_RULE,
    composite,
    cost_adjusted,
    effective_weights,
    length_warnings,
)
from mt_eval.scoring.economics import (
    MEASURED,
    REPLAY_PROVIDER,
    UNKNOWN,
    cost_block,
    cost_status,
    pricing_block,
    speed_block,
    speed_status,
    tokens_block,
    total_usage,
    totals_block,
)
from mt_eval.scoring.pipeline import quality_scores, score_outputs
from mt_eval.scoring.profiles import Weights, weights_of
from mt_eval.scoring.scores import MetricTable
from mt_eval.stats.config import BootstrapConfig
from mt_eval.version import __version__


@dataclass
class RunInfo:
    run_id: str
    timestamp: str
    elapsed_seconds: float
    condition: str
    selection: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    cost_known: bool = True
    cost_source: str | None = None  # LLM runs: "provider", "pricing-table", "cache" or a "+" mix
    bootstrap: BootstrapConfig = field(default_factory=BootstrapConfig)
    # how cost and speed are known (scoring/economics.py); None: from the translations and the method, as a
    # run is built. A card rebuilt from its results (store/rescore.py) passes its own, and its prices.
    cost_status: str | None = None
    speed_status: str | None = None
    pricing: dict[str, Any] | None = None


def fingerprint_components(card: dict[str, Any]) -> dict[str, Any]:
    """The spec's six components plus method identity, provider, entry subset and profile."""
    return {
        "dataset_sha256": card["dataset"]["sha256"],
        "model_slug": card["model_slug"],
        "condition": card["condition"],
        "system_prompt_sha256": card["system_prompt_sha256"],
        "temperature": card["temperature"],
        "harness_version": card["harness_version"],
        "method_name": card["method"]["name"],
        "method_class": card["method"]["method_class"],
        "method_version": card["method"]["version"],
        "method_config_sha256": card["method"]["config_sha256"],
        "api_provider": card["config"]["api_provider"],
        "entry_ids_sha256": card["dataset"]["entry_ids_sha256"],
        "profile": card["profile"],
        # cards scored before the anchored composite have no rule and keep their fingerprint
        **({"composite_rule": card["composite_rule"]} if card.get("composite_rule") else {}),
        # only when used, so fingerprints of ordinary runs are unchanged
        **({"analyser_skipped": card["analyser_skipped"]} if card.get("analyser_skipped") else {}),
        **({"terminology_sha256": sha256_text(canonical_json(card["terminology"]))} if card.get("terminology") else {}),
        # the embedding backend and model behind semantic_score, only when --semantic scored it
        **({"semantic_backend": card["semantic"]["backend"], "semantic_model": card["semantic"]["model"]}
           if card.get("semantic") else {}),
        # a calibrated profile (--profile FILE): its key and the hash of its whole definition
        **({"calibrated_profile": card["calibrated_profile"]["id"],
            "calibrated_profile_sha256": card["calibrated_profile"]["sha256"]}
           if card.get("calibrated_profile") else {}),
        # generated LLM judges (--judge): each judge card's id and sha256, only when judges were scored
        **({"judges": fingerprint_judges(card)} if card.get("judges") else {}),
        # the COMET checkpoint behind comet_score, only when --comet-model scored it
        **({"comet_model": card["comet"]["comet_model"], "comet_checkpoint_sha256": card["comet"]["checkpoint_sha256"]}
           if card.get("comet") else {}),
    }


def _none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def entry_composites(table: MetricTable, profile: Weights, rule: str) -> list[float | None]:
    """Each entry's composite under the card's profile and rule, from its per-entry metric values: what the
    web's disagreement lens and any outside meta-evaluation (``mt-eval calibrate``) read per segment."""
    per_entry = {m: table.entry_values(m) for m in table.metrics}
    out: list[float | None] = []
    for i in range(len(table.errors)):
        values = {m: _none(v[i]) for m, v in per_entry.items() if v is not None}
        score = composite(values, profile, rule)
        out.append(None if score is None or np.isnan(score) else float(score))
    return out


def _results(
    dataset: Dataset, translations: Sequence[Translation], hyps: list[str], table: MetricTable,
    target: LanguageCard, composites: Sequence[float | None], latencies: Sequence[float | None],
) -> list[dict[str, Any]]:
    per_entry = {m: table.entry_values(m) for m in table.metrics}
    fst = fst_details_many(hyps, target, table.cache)  # the metrics' own words and analyses, reused
    verdicts = entry_verdicts(hyps, dataset.entries, target)  # EXACT / EQUIVALENT / MISS / NO_OUTPUT (App. B)
    rows = []
    for i, (entry, tr) in enumerate(zip(dataset.entries, translations, strict=True)):
        values = {m: _none(v[i]) for m, v in per_entry.items() if v is not None}
        values["composite"] = composites[i]
        fst_accepted, fst_analysis = fst[i]
        rows.append({
            "entry_id": entry.id,
            "source": entry.source,
            "reference": entry.reference,
            "predicted": hyps[i],
            "exact_match": bool(values.get("exact_match_rate")),
            "match_verdict": verdicts[i],
            "entry_chrf": values.get("chrf_plus_plus"),
            "fst_accepted": fst_accepted,
            "fst_analysis": fst_analysis,
            "difficulty": entry.difficulty,
            "variants": list(entry.variants),
            **({"variant_class": entry.variant_class} if entry.variant_class else {}),  # what verify re-applies
            "morphological_analysis": entry.morphological_analysis,
            "provenance": entry.provenance.value,
            "segment": entry.segment.value,
            "register": entry.register.value if entry.register else None,
            "latency_seconds": latencies[i],
            "usage": {
                "prompt_tokens": tr.usage.prompt_tokens,
                "completion_tokens": tr.usage.completion_tokens,
                "reasoning_tokens": tr.usage.reasoning_tokens,
            },
            "error": tr.error,
            "metrics": values,
            # every reference, when the entry has several (verify and compare score against all of them)
            **({"references": list(entry.references)} if len(entry.references) > 1 else {}),
            **_llm_fields(tr),
        })
    return rows


def _llm_fields(tr: Translation) -> dict[str, Any]:
    """Per-entry facts only LLM methods have: attempts, batching (latency is then the request's)."""
    keys = ("batched", "attempts", "cached", "validation_attempts", "validated", "batch_rejected")
    out = {k: tr.extra[k] for k in keys if k in tr.extra}
    if tr.model_id and out:
        out["model_id"] = tr.model_id
    return out


def detector_warnings(table: MetricTable, target: LanguageCard, source: LanguageCard) -> list[str]:
    """A metric this install could not run (no language detector) says so on the card, naming what to install."""
    if CodeSwitching.id not in table.metrics:
        return []
    reason = CodeSwitching.unavailable(target, source)
    return [reason] if reason else []


def build_card(
    dataset: Dataset,
    identity: MethodIdentity,
    translations: Sequence[Translation],
    run: RunInfo,
    target: LanguageCard,
    source: LanguageCard,
    terminology: Mapping[str, tuple[str, ...]] | None = None,
    *,
    statistics_file: str | None = None,
    opt_in: Sequence[OptInMetric] = (),
    calibrated: CalibratedProfile | None = None,
) -> tuple[dict[str, Any], bytes | None]:
    """The sealed card, and with ``statistics_file`` (the sidecar's name beside the card) the bytes to
    write there: the statistics are referenced on the card before sealing, so the seal covers them
    (``runcard/statistics.py``, docs/decisions.md §23). ``opt_in``: opt-in metrics scored beside the built-ins
    (``metrics.opt_in``), each recording its own block: ``semantic`` (the embedding backend), ``judges``
    (``runcard/judges.py``), ``comet`` (model name, sha256, low-resource warning, never its path; never weighted
    in the composite), all in the fingerprint too. ``calibrated``: the profile the composite is computed under
    (``run``/``score --profile FILE``, or a rebuilt card's own), recorded in ``calibrated_profile``; None: the
    target language's A/B."""
    if calibrated is not None:  # a profile weighting a judge is never computed without that very judge card
        require_judges(calibrated.judges, opt_in, "the calibrated profile weights")
    table, hyps = score_outputs(dataset, translations, target, source, terminology=terminology, opt_in=opt_in)
    profile = calibrated.weights if calibrated else weights_of(target.profile)
    rule = CALIBRATED_RULE if calibrated else DEFAULT_RULE
    scores = quality_scores(table, profile, run.bootstrap, rule)
    cfg = identity.config
    usage = total_usage(translations)
    if run.cost_status is not None:
        money, paid_by = run.cost_status, run.cost_source
    else:
        money, paid_by = cost_status(translations, identity.provider, identity.method_class.value,
                                    cost_known=run.cost_known, fallback_source=run.cost_source)
    pricing = run.pricing if run.pricing is not None else pricing_block(translations, cfg.get("pricing"))
    cost = cost_block(usage, dataset.entries, money, paid_by, pricing if money == MEASURED else None)
    scores["cost_adjusted"] = cost_adjusted(scores["composite"], cost["cost_per_entry_usd"])
    cost["cost_adjusted_formula"] = COST_ADJUSTED_FORMULA  # verify recomputes a card with its own formula
    timing = run.speed_status or speed_status(translations, identity.provider, identity.method_class.value)
    # unknown latencies are null on every entry, never the 0 a replayed file's translations carry
    latencies = [None if timing == UNKNOWN else t.latency_seconds for t in translations]
    speed = speed_block(latencies, None if identity.provider == REPLAY_PROVIDER else run.elapsed_seconds,
                        usage.prompt_tokens + usage.completion_tokens, timing)
    for key in ("avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds"):
        scores[key] = speed[key]
    weights = effective_weights({k for k, v in scores.items() if v is not None}, profile)
    model_ids = sorted({t.model_id for t in translations if t.model_id})
    card: dict[str, Any] = {
        "schema_version": "2.0",
        "run_id": run.run_id,
        "harness_version": __version__,
        "timestamp": run.timestamp,
        "elapsed_seconds": run.elapsed_seconds,
        "model_slug": identity.model_slug,
        "model_id": ", ".join(model_ids) if model_ids else identity.model_slug,
        "condition": run.condition,
        "method_class": identity.method_class.value,
        "method": {
            "name": identity.name,
            "method_class": identity.method_class.value,
            "version": identity.version,
            "config": cfg,
            "config_sha256": sha256_text(canonical_json(cfg)),
        },
        "temperature": cfg.get("temperature"),
        "system_prompt_sha256": sha256_text(identity.system_prompt),
        "system_prompt_used": identity.system_prompt,
        "coaching_data_sha256": cfg.get("coaching_data_sha256"),
        "fst_version": version_of(target),
        "analyser_skipped": target.analyser_skipped,
        "terminology": {k: list(v) for k, v in terminology.items()} if terminology else None,
        **({"calibrated_profile": calibrated.card_block} if calibrated else {}),
        **card_blocks(opt_in),  # semantic, judges, comet: each absent unless asked for, so ordinary cards are unchanged
        "tools_enabled": list(cfg.get("tools_enabled", [])),
        "batch_size": cfg.get("batch_size"),
        "max_retries": cfg.get("max_retries"),
        "config": {
            "api_provider": identity.provider,
            "temperature": cfg.get("temperature"),
            "max_tokens": cfg.get("max_tokens"),
            "batch_size": cfg.get("batch_size"),
            "concurrency": cfg.get("concurrency"),
            "coaching_file": cfg.get("coaching_file"),
            "method_path": cfg.get("method_path"),
            "fst_retries": cfg.get("fst_retries"),
        },
        "method_config": {
            "model": identity.model_slug,
            "temperature": cfg.get("temperature"),
            "batchSize": cfg.get("batch_size"),
            "register": cfg.get("register"),
            "coachingFile": cfg.get("coaching_file"),
            "coachingPrompt": identity.coaching,  # the coaching text the prompt carried (None: no coaching)
            "promptContext": cfg.get("prompt_context"),
            "qualityTier": scores["quality_tier"],  # this run's §5 tier
            "development_data": cfg.get("development_data") or NONE_DECLARED,  # §9.2.2, from the method's config
        },
        "dataset": {
            "id": dataset.info.id,
            "version": dataset.info.version,
            "language_pair": dataset.info.language_pair
            or f"{source.code.upper()}→{target.code.upper()}",
            "source_language": source.code,
            "target_language": target.code,
            "sha256": dataset.sha256,
            "entry_count": len(dataset.entries),
            "selection": run.selection,
            "entry_ids_sha256": entry_ids_sha256([e.id for e in dataset.entries]),
            # A catalogue test set's public exposure (release month, known inclusion): absent otherwise.
            **({"exposure": dataset.info.exposure} if dataset.info.exposure else {}),
        },
        "profile": target.profile,  # the language's A/B; a calibrated profile is in calibrated_profile
        "composite_rule": rule,
        "scores": scores,
        "cost": cost,
        "speed": speed,
        "tokens": tokens_block(usage, len(dataset.entries)),
        "totals": totals_block(usage, cost),
        "metrics": {
            m.id: {
                "status": m.status.value,
                "level": m.level.value,
                "scale": m.scale,
                "higher_is_better": m.higher_is_better,
                "weight": weights.get(m.id),
                "signature": m.signature(target),
            }
            for m in table.metrics.values()
        },
        "environment": environment.capture(),
        # the detector that scored this card (None: none did): verify and compare refuse to mix detectors
        "language_detector": langid.detector_of(m.signature(target) for m in table.metrics.values()),
        "warnings": list(dict.fromkeys([*target.warnings, *source.warnings, *run.warnings,
                                        *length_warnings(scores, table.entry_values("length_ratio")),
                                        *detector_warnings(table, target, source)])),
        "results": _results(dataset, translations, hyps, table, target, entry_composites(table, profile, rule),
                            latencies),
        "run_card_hash": "",
    }
    sidecar = None
    if statistics_file is not None:
        sidecar = statistics.encode(table, [e.id for e in dataset.entries])
        card["statistics"] = statistics.reference(table, sidecar, statistics_file)
    components = fingerprint_components(card)
    card["fingerprint"] = {"hash": fingerprint_hash(components), "components": components}
    # §10.1's "model ID used for COMET": the checkpoint's name and content hash (never its path), null without it
    comet_block = card.get("comet")
    scores["comet_model"] = (f"{comet_block['comet_model']}@sha256:{comet_block['checkpoint_sha256']}"
                             if isinstance(comet_block, dict) else None)
    RunCard.model_validate(card)  # schema check before sealing: a card we write always loads
    return seal(card), sidecar



"""Rebuild a run's metric table from a card alone (``results[]`` carries source, reference, output).

``verify`` uses it to recompute every score (and to check the stored statistics), and ``compare``
falls back to it for a card without usable stored statistics (docs/decisions.md §23).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard, language_card, without_analyser
from mt_eval.methods.base import Translation
from mt_eval.metrics.comet import CometConfig, CometScore
from mt_eval.metrics.embeddings import SemanticConfig
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.metrics.registry import OPT_IN, available_metrics
from mt_eval.metrics.semantic import SemanticScore
from mt_eval.metrics.spbleu import SpBleu, SpmConfig
from mt_eval.runcard.judges import card_judges, require_judges
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.scores import MetricTable


def dataset_from_card(card: Mapping[str, Any]) -> Dataset:
    ds = card["dataset"]
    entries = [
        Entry(
            id=r["entry_id"], source=r["source"], reference=r["reference"], difficulty=r["difficulty"],
            provenance=r["provenance"], segment=r.get("segment", "development"), register=r.get("register"),
            variants=r.get("variants") or [], morphological_analysis=r.get("morphological_analysis"),
            references=r.get("references") or [], variant_class=r.get("variant_class"),
        )
        for r in card["results"]
    ]
    info = DatasetInfo(id=ds["id"], version=ds.get("version", "1.0"), source_language=ds["source_language"],
                       target_language=ds["target_language"], exposure=ds.get("exposure"))
    return Dataset(info=info, entries=entries, sha256=ds["sha256"])


def target_card(card: Mapping[str, Any]) -> LanguageCard:
    """The target language card the run was scored with (without its analyser if the run skipped it):
    it decides which metrics apply, here and when stored statistics are read (``runcard.statistics``)."""
    target = language_card(card["dataset"]["target_language"])
    return without_analyser(target) if card.get("analyser_skipped") else target


def semantic_config(card: Mapping[str, Any]) -> SemanticConfig | None:
    """The embedding backend a card scored ``semantic_score`` with (None: not scored)."""
    block = card.get("semantic")
    return SemanticConfig.from_card(block) if isinstance(block, dict) else None


def opt_in_from_card(card: Mapping[str, Any], judges: Sequence[OptInMetric] = (),
                     comet: CometConfig | None = None) -> list[OptInMetric]:
    """The opt-in metrics that recompute the card's own: its semantic backend (built from the card: building it
    loads no model), and the judges and COMET checkpoint it records, which only the verifier gives (``judges``,
    ``comet``; one line naming what is missing or differs)."""
    given_judges = require_judges(card_judges(card), judges)
    config, checkpoint = semantic_config(card), require_comet(card, comet)
    return [*([SemanticScore(config)] if config else []), *([CometScore(checkpoint)] if checkpoint else []),
            *given_judges, *spbleu_from_card(card)]


def spbleu_from_card(card: Mapping[str, Any]) -> list[OptInMetric]:
    """The card's spBLEU, with the FLORES-200 model found on this machine, which must be the card's (sha256)."""
    block = card.get("spbleu")
    return [SpBleu(SpmConfig.from_card(block))] if isinstance(block, dict) else []


def configured_metrics(card: Mapping[str, Any]) -> dict[str, Any]:
    """The opt-in metrics a card was scored with, as ``metrics.registry.metrics_for(…, configured=…)`` takes
    them: reading a card's stored statistics needs its ``semantic_score`` too (it is in the composite), and
    building that metric loads no model (only extracting statistics does)."""
    config = semantic_config(card)
    return {"semantic_score": config} if config else {}


def require_comet(card: Mapping[str, Any], given: CometConfig | None) -> CometConfig | None:
    """The checkpoint that recomputes the card's ``comet_score`` (None: the card has none). The card names the
    model and its sha256, never a path: the verifier gives the checkpoint (``--comet-model``), and one that
    hashes differently, or none, is refused with one line rather than passed unchecked."""
    block = card.get("comet")
    if not isinstance(block, Mapping):
        return None
    want, name = str(block.get("checkpoint_sha256")), block.get("comet_model")
    if given is None:
        raise UserError(f"the card scored comet_score with the COMET model {name!r} (checkpoint sha256 {want[:12]}…): "
                        "give that checkpoint with --comet-model PATH to recompute it")
    if given.auto:  # ``auto`` chooses for the card's own target language, as the run did
        given = CometConfig.parse("auto", given.batch_size, target=str(card["dataset"]["target_language"]))
    if given.sha256 != want:
        raise UserError(f"--comet-model: the checkpoint given hashes to {given.sha256[:12]}…, the card was scored with "
                        f"{name!r} hashing to {want[:12]}…: give that checkpoint")
    return given


def table_from_card(card: Mapping[str, Any], *, only: list[str] | None = None,
                    judges: Sequence[OptInMetric] = (), comet: CometConfig | None = None) -> MetricTable:
    """The same statistics the run computed, from the card's per-entry results (``only``: a subset).

    ``judges``: generated judges given by the verifier (``--judge``); every judge the card records must be
    among them with the same judge card (``runcard.judges.require_judges``: one line otherwise), since a
    judge is never built from what a card says."""
    recorded_judges = card_judges(card)
    if only is not None:
        recorded_judges = {k: v for k, v in recorded_judges.items() if k in only}
    given_judges = require_judges(recorded_judges, judges)
    checkpoint = require_comet(card, comet) if only is None or "comet_score" in only else None
    config = semantic_config(card)
    opt_in: list[OptInMetric] = [*([SemanticScore(config)] if config else []),
                                 *([CometScore(checkpoint)] if checkpoint else []), *given_judges,
                                 *(spbleu_from_card(card) if only is None or "spbleu" in only else [])]
    dataset = dataset_from_card(card)
    translations = [Translation(r["entry_id"], r["predicted"], r.get("error")) for r in card["results"]]
    terms = {k: tuple(v) for k, v in card["terminology"].items()} if card.get("terminology") else None
    source = language_card(card["dataset"]["source_language"])
    recorded = {k: v.get("signature") for k, v in (card.get("metrics") or {}).items()}
    if only is None and recorded:  # the card keeps the metrics it was sealed with, in the harness's order: a metric
        # added to the harness since (critical_error_rate…) is not scored on it, so its sealed numbers still verify
        only = [*(m for m in available_metrics() if m in recorded),
                *(m for m in recorded if m not in available_metrics() and (m in OPT_IN or m in card_judges(card)))]
    # semantic_score is recomputed with the card's backend and model, which must be available here (or every
    # vector cached): otherwise a UserError says so, and verify reports the card as not rescorable
    table, _ = score_outputs(dataset, translations, target_card(card), source, only=only, terminology=terms,
                             recorded=recorded, opt_in=opt_in)
    return table

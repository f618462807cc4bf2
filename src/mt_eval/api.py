"""The public Python API: evaluate a method on a dataset, or score an existing output file."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.engine.journal import DEFAULT_RUNS_DIR
from mt_eval.engine.runner import Journal, Progress, read_journal, run_method
from mt_eval.engine.session import check_resume, read_header
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Method, Translation, as_method
from mt_eval.metrics.comet import CometConfig
from mt_eval.metrics.embeddings import SemanticConfig, check_semantic
from mt_eval.metrics.judges.metric import JudgeMetric
from mt_eval.runcard.builder import RunInfo, build_card, entry_ids_sha256
from mt_eval.runcard.io import load_card, write_card
from mt_eval.runcard.seal import canonical_json, sha256_text
from mt_eval.runcard.statistics import sidecar_name
from mt_eval.scoring.egress import refuse_remote_on_secret
from mt_eval.scoring.intervals import BootstrapConfig
from mt_eval.scoring.pipeline import source_warnings

__all__ = ["DEFAULT_RUNS_DIR", "RunInterrupted", "evaluate", "load_card", "score_predictions"]


class RunInterrupted(Exception):
    """Ctrl-C during a run: finished entries are safe in the journal; ``run_dir`` resumes it (None:
    the method keeps no journal, a rerun is the resume)."""

    def __init__(self, run_dir: Path | None, done: int, total: int) -> None:
        self.run_dir, self.done, self.total = run_dir, done, total
        super().__init__(f"interrupted with {done} of {total} entries finished")


def _run_header(dataset: Dataset, method: Method, run_id: str, timestamp: str, condition: str,
                selection: dict[str, Any], invocation: dict[str, Any] | None) -> dict[str, Any]:
    cfg = canonical_json(method.identity.config)
    return {"run_id": run_id, "timestamp": timestamp, "condition": condition, "selection": selection,
            "dataset_sha256": dataset.sha256, "entry_ids_sha256": entry_ids_sha256([e.id for e in dataset.entries]),
            "method": method.identity.name, "method_config_sha256": sha256_text(cfg),
            "invocation": invocation or {}}


def _check_resumable(header: dict[str, Any], fresh: dict[str, Any], run_dir: Path) -> None:
    if not header:
        raise UserError("no run to resume here (journal.jsonl with a run header not found)", file=str(run_dir))
    for key, what in (("dataset_sha256", "corpus"), ("entry_ids_sha256", "entry selection"),
                      ("method", "method"), ("method_config_sha256", "method configuration")):
        if header.get(key) != fresh[key]:
            raise UserError(f"cannot resume: the {what} differs from the interrupted run's", file=str(run_dir))


def evaluate(
    dataset: Dataset,
    method: Method,
    *,
    condition: str = "default",
    runs_dir: str | Path = DEFAULT_RUNS_DIR,
    out: str | Path | None = None,
    selection: dict[str, Any] | None = None,
    progress: Progress | None = None,
    bootstrap: BootstrapConfig | None = None,
    resume: str | Path | None = None,
    invocation: dict[str, Any] | None = None,
    skip_analyser: bool = False,
    terminology: str | Path | None = None,
    semantic: SemanticConfig | None = None,
    judges: Sequence[JudgeMetric] = (),
    comet: CometConfig | None = None,
) -> tuple[dict[str, Any], Path]:
    """Translate every entry with ``method``, score it and write a sealed run card.

    Finished entries are journalled in ``<runs_dir>/<run_id>/journal.jsonl`` as they complete
    (methods that are ``resumable``: a predictions file keeps none, and with ``out`` leaves no run
    directory); ``resume=<run dir>`` continues that run (same run id), sending only entries not yet
    finished. ``invocation`` (CLI options, never secrets) is stored in the journal header; a resume
    compares its own with it and refuses a difference (``engine/session.check_resume``), never
    takes options from the file. Ctrl-C raises :class:`RunInterrupted`.
    A target card that declares an analyser this machine lacks stops the run *before* translating
    (docs/decisions.md §19) unless ``skip_analyser``, which scores profile B and is recorded on the card.
    ``semantic`` scores ``semantic_score`` with that embedding backend (None: null, no model loaded); a
    backend that sends text off the machine is refused for held-out (secret) entries before anything runs.
    ``judges``: generated LLM judges (``metrics.judges.judge_metrics``) scored beside the other metrics and
    recorded on the card (``runcard/judges.py``); refused on secret entries before anything runs, too.
    ``comet``: score ``comet_score`` with this local COMET checkpoint (``metrics.comet``; in no composite).
    """
    from mt_eval.analyzers.registry import require_analyser
    from mt_eval.languages.card import without_analyser
    from mt_eval.metrics.behavioral import load_terminology

    method = as_method(method)  # a plugin with identity and translate only gets the declared defaults
    target = language_card(dataset.info.target_language)
    source = language_card(dataset.info.source_language)
    if skip_analyser:
        target = without_analyser(target)
    require_analyser(target)
    terms = load_terminology(terminology) if terminology else None
    if semantic is not None:
        check_semantic(semantic, dataset.entries)
    refuse_remote_on_secret(judges, dataset.entries)  # before translating: the judges would refuse after it
    done: dict[int, Translation] = {}
    journal: Journal | None = None
    if resume is not None:
        run_dir = Path(resume)
        header = read_header(run_dir)  # shape-checked; its values are compared, never followed
        if invocation is not None:
            check_resume(run_dir, invocation)
        _, done = read_journal(run_dir / "journal.jsonl")
        fresh = _run_header(dataset, method, "", "", condition, selection or {}, invocation)
        _check_resumable(header, fresh, run_dir)
        run_id, timestamp = str(header["run_id"]), str(header["timestamp"])
        journal = Journal(run_dir / "journal.jsonl")
    else:
        run_id = str(uuid.uuid4())
        run_dir = Path(runs_dir) / run_id
        timestamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        if method.resumable:
            journal = Journal(run_dir / "journal.jsonl")
            journal.header(_run_header(dataset, method, run_id, timestamp, condition, selection or {}, invocation))
    wanted = {e.id for e in dataset.entries}  # once: a 10,000-entry resume is not a quadratic scan
    done = {i: t for i, t in done.items() if i in wanted}
    try:
        translations, elapsed = asyncio.run(
            run_method(method, dataset, source_language=source.code, target_language=target.code,
                       journal=journal, progress=progress, done=done)
        )
    except KeyboardInterrupt:
        if journal is None:
            raise RunInterrupted(None, 0, len(dataset.entries)) from None
        journal.close()
        _, now = read_journal(run_dir / "journal.jsonl")
        finished = sum(1 for t in now.values() if t.error is None)
        raise RunInterrupted(run_dir, finished, len(dataset.entries)) from None
    finally:
        if journal is not None:
            journal.close()
    # a resumed run's elapsed covers every session (engine/journal.py)
    warnings = [*method.warnings, *source_warnings(dataset, target, source)]
    sources = {t.extra.get("cost_source", "none") for t in translations if t.error is None}
    cost_known = None not in sources and "unknown" not in sources
    info = RunInfo(run_id, timestamp, elapsed, condition, selection=selection or {}, warnings=warnings,
                   bootstrap=bootstrap or BootstrapConfig(), cost_known=cost_known,
                   cost_source=_cost_source(sources) if method.plan([]) is not None else None)
    path = Path(out) if out else run_dir / "run_card.json"
    # the per-entry statistics go beside the card, referenced under its seal, so that compare reads
    # them instead of re-running every metric (docs/decisions.md §23)
    card, stats = build_card(dataset, method.identity, translations, info, target, source,
                             terms, statistics_file=sidecar_name(path), semantic=semantic, judges=judges,
                             comet=comet)
    return card, write_card(card, path, stats)


def _cost_source(sources: set[Any]) -> str:
    """What the card's cost came from: provider-reported, the pricing table, cache hits or a mix."""
    named = sorted(str(s) for s in sources - {"none"})
    return "+".join(named) if named else "none"


def score_predictions(dataset: Dataset, predictions: str | Path, **kwargs: Any) -> tuple[dict[str, Any], Path]:
    """Score an existing output file (JSONL keyed by entry id, or one line per entry) as a run."""
    from mt_eval.methods.predictions import PredictionsMethod

    return evaluate(dataset, PredictionsMethod(predictions, dataset), **kwargs)

"""One run of a method on a dataset, in three steps shared by the CLI and the Python API.

:func:`prepare_run` checks everything before a request is sent (analyser, opt-in metrics, resume),
:func:`translate` drives the engine (the one awaitable step), :func:`finish_run` builds the sealed card
and writes it where asked. ``api.orchestrate.run`` is the CLI's path (``mt-eval run``/``score``, the sweep,
``reproduce``, through ``evaluate_card``): it owns its event loop, plans, asks about the budget and turns Ctrl-C
into :class:`RunInterrupted`. The notebook API (``api.evaluation``) awaits the same steps inside the caller's
loop and writes only when asked.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.engine.journal import DEFAULT_RUNS_DIR
from mt_eval.engine.runner import Journal, Progress, read_journal, run_method
from mt_eval.engine.session import compare_invocation, read_run
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard, language_card
from mt_eval.methods.base import Method, Translation, as_method
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.metrics.semantic import not_scored_warnings
from mt_eval.runcard.builder import RunInfo, build_card, entry_ids_sha256
from mt_eval.runcard.io import write_card
from mt_eval.runcard.judges import require_judges
from mt_eval.runcard.seal import canonical_json, sha256_text
from mt_eval.runcard.statistics import sidecar_name
from mt_eval.scoring.calibrated import CalibratedProfile
from mt_eval.scoring.egress import refuse_remote_on_secret
from mt_eval.scoring.intervals import BootstrapConfig
from mt_eval.scoring.pipeline import source_warnings

__all__ = ["DEFAULT_RUNS_DIR", "PreparedRun", "RunInterrupted", "finish_run", "open_journal", "prepare_run",
           "translate"]


class RunInterrupted(Exception):
    """Ctrl-C during a run: finished entries are safe in the journal; ``run_dir`` resumes it (None:
    the method keeps no journal, a rerun is the resume)."""

    def __init__(self, run_dir: Path | None, done: int, total: int) -> None:
        self.run_dir, self.done, self.total = run_dir, done, total
        super().__init__(f"interrupted with {done} of {total} entries finished")


@dataclass
class PreparedRun:
    """Everything checked before translating, and where the run's journal (if any) is kept."""

    dataset: Dataset
    method: Method
    condition: str
    selection: dict[str, Any]
    run_id: str
    timestamp: str
    run_dir: Path
    target: LanguageCard
    source: LanguageCard
    terminology: Mapping[str, tuple[str, ...]] | None
    journal: Journal | None = None
    done: dict[int, Translation] = field(default_factory=dict)


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


def prepare_run(
    dataset: Dataset, method: Method, *, condition: str = "default", runs_dir: str | Path = DEFAULT_RUNS_DIR,
    selection: dict[str, Any] | None = None, resume: str | Path | None = None,
    invocation: dict[str, Any] | None = None, skip_analyser: bool = False, terminology: str | Path | None = None,
    opt_in: Sequence[OptInMetric] = (), journal: bool = True, profile: CalibratedProfile | None = None,
) -> PreparedRun:
    """Check what would stop the run, before any request: the analyser, opt-in metrics on secret entries, the
    judges a calibrated ``profile`` weights, a resume's journal against this run (its header and finished entries
    read once). ``journal`` False starts none (the API's ``write=False``: nothing on disk; ``api.run`` starts it
    with :func:`open_journal` once the budget is confirmed); a ``resume`` always appends to the journal it
    continues."""
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
    for metric in opt_in:
        metric.preflight(dataset.entries)
    if profile is not None:  # a profile weighting a judge is never computed without that very judge card
        require_judges(profile.judges, opt_in, "the calibrated profile weights")
    refuse_remote_on_secret(opt_in, dataset.entries)  # before translating: scoring would refuse after it
    selection = selection or {}
    if resume is not None:
        run_dir = Path(resume)
        header, done = read_run(run_dir)  # shape-checked; its values are compared, never followed
        if invocation is not None:
            compare_invocation(header, invocation, run_dir)
        _check_resumable(header, _run_header(dataset, method, "", "", condition, selection, invocation), run_dir)
        wanted = {e.id for e in dataset.entries}  # once: a 10,000-entry resume is not a quadratic scan
        return PreparedRun(dataset, method, condition, selection, str(header["run_id"]), str(header["timestamp"]),
                           run_dir, target, source, terms, Journal(run_dir / "journal.jsonl"),
                           {i: t for i, t in done.items() if i in wanted})
    run_id = str(uuid.uuid4())
    prepared = PreparedRun(dataset, method, condition, selection, run_id,
                           datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), Path(runs_dir) / run_id, target, source,
                           terms)
    if journal:
        open_journal(prepared, invocation)
    return prepared


def open_journal(run: PreparedRun, invocation: dict[str, Any] | None = None) -> None:
    """Start a fresh run's journal (its run header, with ``invocation``) when the method keeps one."""
    if run.method.resumable and run.journal is None:
        run.journal = Journal(run.run_dir / "journal.jsonl")
        run.journal.header(_run_header(run.dataset, run.method, run.run_id, run.timestamp, run.condition,
                                       run.selection, invocation))


async def translate(run: PreparedRun, progress: Progress | None = None) -> tuple[list[Translation], float]:
    """Every entry's translation and the elapsed seconds (a resumed run's cover every session,
    ``engine/journal.py``); the journal is closed however this ends, so a later resume can read it."""
    try:
        return await run_method(run.method, run.dataset, source_language=run.source.code,
                                target_language=run.target.code, journal=run.journal, progress=progress,
                                done=run.done)
    finally:
        if run.journal is not None:
            run.journal.close()


def interrupted(run: PreparedRun) -> RunInterrupted:
    """What Ctrl-C left: the entries the journal holds, and the run directory that resumes them."""
    if run.journal is None:
        return RunInterrupted(None, 0, len(run.dataset.entries))
    run.journal.close()
    _, now = read_journal(run.run_dir / "journal.jsonl")
    finished = sum(1 for t in now.values() if t.error is None)
    return RunInterrupted(run.run_dir, finished, len(run.dataset.entries))


def finish_run(
    run: PreparedRun, translations: list[Translation], elapsed: float, *, out: str | Path | None = None,
    write: bool = True, bootstrap: BootstrapConfig | None = None, opt_in: Sequence[OptInMetric] = (),
    profile: CalibratedProfile | None = None,
) -> tuple[dict[str, Any], Path | None]:
    """The sealed card, and where it was written (``out``, else ``<run dir>/run_card.json``; None when
    ``write`` is False: the card then references no statistics sidecar, ``compare`` rebuilds them)."""
    method, dataset = run.method, run.dataset
    warnings = [*method.warnings, *source_warnings(dataset, run.target, run.source), *not_scored_warnings(opt_in)]
    sources = {t.extra.get("cost_source", "none") for t in translations if t.error is None}
    cost_known = None not in sources and "unknown" not in sources
    info = RunInfo(run.run_id, run.timestamp, elapsed, run.condition, selection=run.selection, warnings=warnings,
                   bootstrap=bootstrap or BootstrapConfig(), cost_known=cost_known,
                   cost_source=_cost_source(sources) if method.plan([]) is not None else None)
    path = (Path(out) if out else run.run_dir / "run_card.json") if write else None
    # the per-entry statistics go beside the card, referenced under its seal, so that compare reads
    # them instead of re-running every metric (docs/decisions.md §23)
    card, stats = build_card(dataset, method.identity, translations, info, run.target, run.source,
                             run.terminology, statistics_file=sidecar_name(path) if path else None,
                             opt_in=opt_in, calibrated=profile)
    return card, write_card(card, path, stats) if path else None


def _cost_source(sources: set[Any]) -> str:
    """What the card's cost came from: provider-reported, the pricing table, cache hits or a mix."""
    named = sorted(str(s) for s in sources - {"none"})
    return "+".join(named) if named else "none"

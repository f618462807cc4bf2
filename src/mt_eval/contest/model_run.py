"""A weights-only model's translations, made in a child process under a wall clock.

A model bundle runs no submitted code (``model_bundle.py``), but its data still drives code we ship for as long
as it likes: a tokenizer.json regex that backtracks, a checkpoint whose decoding is slow. A bundle's run is bounded
by the sandbox's per-run wall clock; a model's is bounded by the same number (``SandboxPolicy.wall_seconds_per_run``
of the contest's ``governance/sandbox.toml``) by translating in a fresh interpreter (``spawn``: no torch threads
inherited from the harness) that is killed when the time is up. Only entry ids, sources and the translations cross
the pipe; the scoring (``runner.score_translations``) happens in the harness, as for a bundle.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.methods.base import MethodIdentity, Translation

LOAD_FAILED, TIMEOUT, CRASHED, OK = "load_failed", "timeout", "crashed", "ok"


def _child(conn: Connection, folder: str, source: str, target: str, max_bytes: int,
           entries: list[tuple[int, str]]) -> None:
    """The child: load (checked again), translate, send ``(status, identity, translations)``."""
    import asyncio

    from mt_eval.contest.model_bundle import load_model_bundle
    from mt_eval.methods.base import TranslationRequest

    try:
        method = load_model_bundle(Path(folder), source, target, max_bytes)
    except Exception:  # checked data transformers' own loader still rejects is the entry's failure
        conn.send((LOAD_FAILED, None, []))
        return
    requests = [TranslationRequest(i, text, source, target) for i, text in entries]
    translations = asyncio.run(method.translate(requests))
    conn.send((OK, method.identity, translations))


def translate_model(folder: Path, dataset: Dataset, max_bytes: int,
                    seconds: float) -> tuple[str, MethodIdentity | None, list[Translation]]:
    """(status, the method's identity, its translations in entry order) of the model at ``folder`` over
    ``dataset``; status ``ok``, ``crashed`` (some entry failed, or the child died), ``load_failed`` or
    ``timeout`` (killed after ``seconds``; nothing is kept)."""
    ctx = multiprocessing.get_context("spawn")
    ours, theirs = ctx.Pipe(duplex=False)
    entries = [(e.id, e.source) for e in dataset.entries]
    child = ctx.Process(target=_child, args=(theirs, str(folder), dataset.info.source_language,
                                             dataset.info.target_language, max_bytes, entries), daemon=True)
    child.start()
    theirs.close()
    try:
        if not ours.poll(seconds):
            return TIMEOUT, None, []
        got: Any = ours.recv()
    except EOFError:  # the child died without an answer (killed for memory, a native crash)
        return CRASHED, None, []
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        ours.close()
    status, identity, translations = got
    if status == OK and any(t.error is not None for t in translations):
        status = CRASHED
    return status, identity, translations

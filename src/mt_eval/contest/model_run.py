"""A weights-only model's translations, made in a child process under a wall clock.

A model bundle runs no submitted code (``model_bundle.py``), but its data still drives code we ship for as long
as it likes: a tokenizer.json regex that backtracks, a checkpoint whose decoding is slow. A bundle's run is bounded
by the sandbox's per-run wall clock; a model's is bounded by the same number (``SandboxPolicy.wall_seconds_per_run``
of the contest's ``governance/sandbox.toml``) by translating in a fresh interpreter (``spawn``: no torch threads
inherited from the harness) that is killed when the time is up. Only entry ids, sources and the translations cross
the pipe; the scoring (``runner.score_translations``) happens in the harness, as for a bundle.

Memory is bounded too, as a bundle's is by the sandbox's ``RLIMIT_AS``: the child's ``RLIMIT_DATA`` (its heap and
private mappings) is :data:`MEMORY_FLOOR` plus four times the contest's artefact limit, so data that makes our code
allocate (a tokenizer.json whose normalizer doubles every "a" 27 times: 1.6 GB asked for a 5-character input,
measured) ends the child ("crashed"), not the custodians' machine.
"""

from __future__ import annotations

import multiprocessing
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.methods.base import MethodIdentity, Translation

LOAD_FAILED, TIMEOUT, CRASHED, OK = "load_failed", "timeout", "crashed", "ok"
MEMORY_FLOOR = 4 << 30
"""The runtime's own share: torch, transformers and tokenizers loaded, before the weights. Measured as VmData
(what RLIMIT_DATA counts): 0.5 GB translating with the tiny checkpoint on CPU here; on an H100 host (torch 2.11,
CUDA 13) 2.9 GB for the tiny model on CUDA and 3.3 GB for a 76M-parameter (293 MiB) one."""


def memory_limit(max_bytes: int) -> int:
    """The child's ``RLIMIT_DATA`` for a contest whose artefacts hold at most ``max_bytes``: the weights once
    as loaded, once in transit, and room to decode."""
    return MEMORY_FLOOR + 4 * max_bytes


def _bound_memory(max_bytes: int) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    limit = memory_limit(max_bytes) if hard == resource.RLIM_INFINITY else min(memory_limit(max_bytes), hard)
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an aborted child writes no core file of its heap


def _child(conn: Connection, folder: str, source: str, target: str, max_bytes: int,
           entries: list[tuple[int, str]]) -> None:
    """The child: load (checked again), translate, send ``(status, identity, translations)``."""
    import asyncio

    from mt_eval.contest.model_bundle import load_model_bundle
    from mt_eval.methods.base import TranslationRequest

    _bound_memory(max_bytes)
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

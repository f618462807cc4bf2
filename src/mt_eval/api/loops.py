"""Run a coroutine to completion from synchronous code, whether or not an event loop is running.

A notebook (Jupyter, IPython's autoawait) runs every cell inside a running loop, where ``asyncio.run``
raises ``RuntimeError``. As inspect_ai's ``eval()`` does, the coroutine then runs on a fresh loop in a
worker thread while the caller waits: no loop is re-entered (nest-asyncio patches the loop; we add no
dependency) and the caller's loop is blocked only for as long as a synchronous call would block it anyway.
The caller's context (``contextvars``: a calibrated profile set by ``scoring.calibrated.using``) is copied
into the worker, so the run is scored exactly as it would be in the caller's thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["blocking", "run_blocking"]

T = TypeVar("T")
P = ParamSpec("P")


def run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """``coro``'s result; its exception is raised here, in the caller's thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop in this thread: the ordinary case (a script, the CLI)
        return asyncio.run(coro)
    context = contextvars.copy_context()
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = context.run(asyncio.run, coro)
        except BaseException as exc:  # handed to the caller, KeyboardInterrupt and SystemExit included
            outcome["error"] = exc

    # a plain thread, not an executor: its lifetime is this call, and nothing lingers at interpreter exit
    thread = threading.Thread(target=worker, name="mt-eval-run", daemon=True)
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def blocking(coroutine_function: Callable[P, Coroutine[Any, Any, T]], name: str, doc: str) -> Callable[P, T]:
    """A synchronous twin of ``coroutine_function`` with its very signature (typed, and what ``help`` shows)."""

    @functools.wraps(coroutine_function)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        return run_blocking(coroutine_function(*args, **kwargs))

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    return call

"""Shared by the bench_llm_* benchmarks: the fake OpenAI server from the tests, a corpus, one run.

The server is the test suite's real HTTP server (tests/support/fake_openai.py) with the
deterministic translator from tests/support/llm_fake.py. For timing it runs in its own process, so
client and server do not share one interpreter lock; :func:`server_window` reads back, from the
server's side, how long a run kept it busy and how many requests it really had in flight.
"""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.request import urlopen

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the test helpers package (tests/support), as pytest's pythonpath

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry  # noqa: E402
from mt_eval.engine.runner import run_method  # noqa: E402
from mt_eval.methods.base import Translation  # noqa: E402
from mt_eval.methods.llm import LLMMethod, LLMSettings  # noqa: E402
from support.llm_fake import FakeOpenAI, Fault, Translator, translate_text  # noqa: E402

logging.getLogger("mt_eval.providers").setLevel(logging.ERROR)  # retries are counted, not logged

__all__ = ["FakeOpenAI", "Fault", "Translator", "Window", "dataset", "external_server", "llm", "run",
           "server_spans", "server_window", "translate_text"]


def dataset(n: int) -> Dataset:
    entries = [Entry(id=i, source=f"Sentence {i} says that the weather in town {i % 37} is fine today.",
                     reference=f"La frase {i} dice que hace buen tiempo hoy.") for i in range(1, n + 1)]
    return Dataset(info=DatasetInfo(id="bench", source_language="en", target_language="es"), entries=entries,
                   sha256="0" * 64)


@contextmanager
def external_server(latency: float) -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "url"
        proc = subprocess.Popen([sys.executable, "-m", "support.llm_fake", str(port_file), str(latency)],
                                cwd=REPO / "tests")  # run as a module of tests/support, which imports its siblings
        try:
            deadline = time.monotonic() + 30
            while not (port_file.exists() and port_file.read_text()):
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("fake server did not start")
                time.sleep(0.05)
            yield port_file.read_text()
        finally:
            proc.kill()
            proc.wait()


def llm(base_url: str, **kw: Any) -> LLMMethod:
    settings = LLMSettings(**{"model": "bench/model", "base_url": base_url, "cache_path": None,
                              "retry_base_delay": 0.05, **kw})
    return LLMMethod(settings, source_language="en", target_language="es")


def run(method: LLMMethod, ds: Dataset) -> tuple[list[Translation], float]:
    return asyncio.run(run_method(method, ds, source_language="en", target_language="es"))


def server_spans(base_url: str) -> list[tuple[float, float]]:
    """Every request the external server answered so far: (received, answered), monotonic seconds."""
    root = base_url.removesuffix("/v1")
    with urlopen(f"{root}/_stats", timeout=10) as resp:  # our own server on 127.0.0.1
        return [(float(a), float(b)) for a, b in json.loads(resp.read())["spans"]]


class Window:
    """Requests as the server saw them: the phase from the first arrival to the last answer, and
    the mean number in flight over it (busy request-seconds / phase seconds)."""

    def __init__(self, spans: list[tuple[float, float]]) -> None:
        self.requests = len(spans)
        self.seconds = max(b for _, b in spans) - min(a for a, _ in spans) if spans else 0.0
        busy = sum(b - a for a, b in spans)
        self.mean_in_flight = busy / self.seconds if self.seconds else 0.0


def server_window(base_url: str, skip: int = 0) -> Window:
    """The :class:`Window` of the requests after the first ``skip`` (a warm-up run's)."""
    return Window(server_spans(base_url)[skip:])

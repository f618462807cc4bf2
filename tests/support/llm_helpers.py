"""Shared set-up for LLM and engine tests: a synthetic corpus, settings, one engine run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.engine.runner import EngineStats, run_method
from mt_eval.methods.base import Translation
from mt_eval.methods.llm import LLMMethod, LLMSettings
from support.llm_fake import FakeOpenAI, Translator


def make_dataset(n: int, words: int = 8) -> Dataset:
    entries = [Entry(id=i, source=" ".join(f"Word{i}x{k}" for k in range(words)) + ".",
                     reference=f"palabra {i} referencia") for i in range(1, n + 1)]
    info = DatasetInfo(id="synthetic", source_language="en", target_language="es")
    return Dataset(info=info, entries=entries, sha256=f"{n:064d}")


def write_text_pair(tmp: Path, n: int) -> tuple[Path, Path]:
    ds = make_dataset(n)
    src, ref = tmp / "src.txt", tmp / "ref.txt"
    src.write_text("".join(e.source + "\n" for e in ds.entries), encoding="utf-8")
    ref.write_text("".join(e.reference + "\n" for e in ds.entries), encoding="utf-8")
    return src, ref


def serve(translator: Translator, dataset: Dataset | None = None, **kw: Any) -> FakeOpenAI:
    if dataset is not None:
        translator.register([(e.id, e.source) for e in dataset.entries])
    return FakeOpenAI(responder=translator, **kw)


def method(server: FakeOpenAI, tmp: Path | None = None, **kw: Any) -> LLMMethod:
    defaults: dict[str, Any] = {"model": "test/model", "base_url": server.base_url, "retry_base_delay": 0.01,
                                "cache_path": str(tmp / "cache.sqlite") if tmp else None}
    return LLMMethod(LLMSettings(**{**defaults, **kw}), source_language="en", target_language="es")


def run(m: Any, dataset: Dataset, **kw: Any) -> tuple[list[Translation], float, EngineStats]:
    seen: list[EngineStats] = []
    out, elapsed = asyncio.run(run_method(m, dataset, source_language="en", target_language="es",
                                          progress=seen.append, **kw))
    return out, elapsed, seen[-1] if seen else EngineStats()

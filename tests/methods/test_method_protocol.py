"""The declared Method protocol: every built-in inherits its defaults; older plugins are wrapped once;
``plugin:module:Class`` loads either kind."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from mt_eval.corpus.models import Dataset
from mt_eval.engine.runner import run_method
from mt_eval.errors import MethodError
from mt_eval.methods.apertium import ApertiumMethod
from mt_eval.methods.base import (
    Method,
    MethodBase,
    MethodClass,
    MethodIdentity,
    Translation,
    TranslationRequest,
    as_method,
)
from mt_eval.methods.llm import LLMMethod
from mt_eval.methods.pipeline import ValidateRetryMethod
from mt_eval.methods.predictions import PredictionsMethod
from mt_eval.methods.registry import build_method

MakeDataset = Callable[[list[int]], Dataset]
IDENTITY = MethodIdentity("legacy", MethodClass.CUSTOM_PLUGIN, "1", "legacy")


@pytest.mark.parametrize("cls", [LLMMethod, ValidateRetryMethod, ApertiumMethod, PredictionsMethod])
def test_every_built_in_method_inherits_the_declared_defaults(cls: type) -> None:
    assert issubclass(cls, MethodBase)


def test_defaults_say_local_and_unpaid() -> None:
    class Local(MethodBase):
        identity = IDENTITY

        async def translate(self, requests):
            return [Translation(r.entry_id, r.source) for r in requests]

    class NoTranslate(MethodBase):
        identity = IDENTITY

    with pytest.raises(TypeError, match="translate"):
        NoTranslate()  # the one member a method must write is abstract, not a stub that fails mid-run
    m = Local()
    assert isinstance(m, Method) and as_method(m) is m  # a full method is passed through unwrapped
    assert (m.batch_size, m.concurrency, m.retries, m.plan([])) == (None, None, 0, None)
    asyncio.run(m.open())
    asyncio.run(m.close())


class Legacy:
    """Written when the engine probed with getattr: concurrency, stats, open and close, no plan."""

    identity = IDENTITY
    concurrency = 3

    def __init__(self) -> None:
        self.events: list[str] = []
        self.stats = SimpleNamespace(retries=0)
        self.in_flight = self.peak = 0

    async def open(self) -> None:
        self.events.append("open")

    async def close(self) -> None:
        self.events.append("close")

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        self.stats.retries += 1
        return [Translation(r.entry_id, text=r.source.upper()) for r in requests]


def test_a_legacy_plugin_runs_with_its_own_optional_members(make_dataset: MakeDataset) -> None:
    plugin = Legacy()
    seen: list[int] = []
    out, _ = asyncio.run(run_method(plugin, make_dataset(list(range(1, 301))), source_language="en",
                                    target_language="es", progress=lambda s: seen.append(s.retries)))
    assert [t.text for t in out] == [f"SOURCE {i}" for i in range(1, 301)]
    assert plugin.events == ["open", "close"]
    assert plugin.peak > 1  # its concurrency was honoured: groups ran side by side
    assert seen[-1] == plugin.stats.retries == 3  # 300 entries in groups of 100, retries read from stats
    assert as_method(plugin).plan([]) is None


@pytest.mark.parametrize("obj", [object(), SimpleNamespace(identity=IDENTITY), SimpleNamespace(translate=print)])
def test_an_object_that_is_not_a_method_is_rejected_up_front(obj: Any) -> None:
    with pytest.raises(MethodError, match="is not a translation method"):
        as_method(obj)


PLUGIN_MODULE = '''
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation


class Reverse(MethodBase):
    identity = MethodIdentity("reverse", MethodClass.CUSTOM_PLUGIN, "1", "reverse")
    batch_size = 7

    async def translate(self, requests):
        return [Translation(r.entry_id, text=r.source[::-1]) for r in requests]


class Bare:  # the older protocol: identity and translate only
    identity = MethodIdentity("bare", MethodClass.CUSTOM_PLUGIN, "1", "bare")

    async def translate(self, requests):
        return [Translation(r.entry_id, text="bare") for r in requests]
'''


def test_plugin_scheme_loads_a_class_from_a_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   make_dataset: MakeDataset) -> None:
    (tmp_path / "my_mt_plugin.py").write_text(PLUGIN_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    ds = make_dataset([1, 2, 3])
    reverse = build_method("plugin:my_mt_plugin:Reverse", dataset=ds)
    bare = build_method("plugin:my_mt_plugin:Bare", dataset=ds)
    assert reverse.batch_size == 7 and bare.batch_size is None and bare.plan([]) is None
    out, _ = asyncio.run(run_method(reverse, ds, source_language="en", target_language="es"))
    assert [t.text for t in out] == ["1 ecruos", "2 ecruos", "3 ecruos"]
    out, _ = asyncio.run(run_method(bare, ds, source_language="en", target_language="es"))
    assert [t.text for t in out] == ["bare"] * 3
    for spec, message in [("plugin:my_mt_plugin:Nope", "cannot load method plugin"),
                          ("plugin:no_such_module_xyz:Cls", "cannot load method plugin"),
                          ("plugin:JustAName", "is not module:Class")]:
        with pytest.raises(MethodError, match=message):
            build_method(spec, dataset=ds)

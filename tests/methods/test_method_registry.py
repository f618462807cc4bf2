"""build_method: spec parsing, errors that say what is supported, and room for later schemes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from mt_eval.corpus.models import Dataset
from mt_eval.errors import MethodError
from mt_eval.methods import registry
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.methods.predictions import PredictionsMethod
from mt_eval.methods.registry import build_method, register_scheme

MakeDataset = Callable[[list[int]], Dataset]


@pytest.mark.parametrize("spec", ["nonsense:x", "llm", "", "PREDICTIONS"])
def test_unknown_scheme_lists_the_supported_ones(spec: str, make_dataset: MakeDataset) -> None:
    with pytest.raises(MethodError) as info:
        build_method(spec, dataset=make_dataset([1]))
    message = str(info.value)
    assert "unknown method" in message or "needs an argument" in message
    if "unknown method" in message:
        assert "apertium:PAIR" in message
        assert "predictions:PATH" in message
    assert info.value.exit_code == 2


@pytest.mark.parametrize("spec", ["apertium", "apertium:", "predictions:  "])
def test_missing_argument_shows_usage(spec: str, make_dataset: MakeDataset) -> None:
    with pytest.raises(MethodError, match=r"needs an argument.*usage: "):
        build_method(spec, dataset=make_dataset([1]))


def test_predictions_spec(tmp_path: Path, make_dataset: MakeDataset) -> None:
    path = tmp_path / "out.txt"
    path.write_text("uno\n", encoding="utf-8")
    method = build_method(f"predictions:{path}", dataset=make_dataset([4]))
    assert isinstance(method, PredictionsMethod)
    request = TranslationRequest(entry_id=4, source="one", source_language="en", target_language="es")
    assert asyncio.run(method.translate([request]))[0].text == "uno"


def test_predictions_errors_propagate(tmp_path: Path, make_dataset: MakeDataset) -> None:
    with pytest.raises(MethodError, match="predictions file not found"):
        build_method(f"predictions:{tmp_path / 'missing.jsonl'}", dataset=make_dataset([1]))


def test_apertium_without_the_command_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, make_dataset: MakeDataset
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty PATH: no apertium anywhere
    with pytest.raises(MethodError) as info:
        build_method("apertium:eng-spa", dataset=make_dataset([1]))
    assert "'apertium' command is not installed" in str(info.value)
    assert "apt-get install apertium apertium-eng-spa" in str(info.value)


def test_a_later_scheme_is_one_function(monkeypatch: pytest.MonkeyPatch, make_dataset: MakeDataset) -> None:
    """A scheme registered later slots in the same way; its argument keeps its own colons."""
    monkeypatch.setattr(registry, "SCHEMES", dict(registry.SCHEMES))
    seen: list[str] = []

    class Echo:
        identity = MethodIdentity("echo", MethodClass.CUSTOM_PLUGIN, "1", "echo")

        async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
            return [Translation(r.entry_id, text=r.source) for r in requests]

    def factory(argument: str, dataset: Dataset) -> Echo:
        seen.append(argument)
        return Echo()

    register_scheme("later", factory, "later:MODULE:CLASS")
    method = build_method("later:my_pkg.methods:Echo", dataset=make_dataset([1]))
    assert method.identity is Echo.identity  # a two-member plugin gets the protocol's defaults
    assert method.plan([]) is None and method.batch_size is None and method.retries == 0
    assert seen == ["my_pkg.methods:Echo"]
    with pytest.raises(MethodError, match=r"later:MODULE:CLASS"):
        build_method("nope:x", dataset=make_dataset([1]))
    with pytest.raises(ValueError, match="already registered"):
        register_scheme("later", factory, "later:MODULE:CLASS")

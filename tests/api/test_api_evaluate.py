"""``mt_eval.evaluate``/``evaluate_async`` from a notebook, ``compare`` on results, ``load_card`` typed.

A notebook (Jupyter) runs every cell inside an event loop: ``evaluate`` must work there, which
``asyncio.run`` refuses. The method comes as a spec string or an object; nothing is written unless asked.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from sacrebleu.metrics import CHRF

import mt_eval
from mt_eval.corpus import Dataset, load_corpus, select_entries
from mt_eval.stats.config import BootstrapConfig

FAST = BootstrapConfig(200, 0.05, 7)
IDS = "1-8"


@pytest.fixture(scope="module")
def dataset(ntrex_json: Path) -> Dataset:
    return select_entries(load_corpus(ntrex_json), ids=IDS)


def test_evaluate_inside_a_running_event_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ntrex_json: Path,
                                             apertium_outputs: list[str], ntrex: tuple[list[str], list[str]]) -> None:
    monkeypatch.chdir(tmp_path)

    async def cell() -> mt_eval.EvalResult:  # what a notebook cell is: code run by a running loop
        asyncio.get_running_loop()
        return mt_eval.evaluate(ntrex_json, "apertium:eng-spa", ids=IDS, bootstrap=FAST)

    result = asyncio.run(cell())
    hyps = [e.hypothesis for e in result.entries]
    assert hyps == apertium_outputs[:8]  # the very outputs Apertium gives through the engine
    assert result["chrf_plus_plus"] == pytest.approx(CHRF(word_order=2).corpus_score(hyps, [ntrex[1][:8]]).score,
                                                     rel=1e-12)
    assert result.card["dataset"]["selection"] == {"ids": IDS} and result.system == "apertium:eng-spa"
    assert os.listdir(tmp_path) == []  # write=False: no runs/<uuid>/


def test_evaluate_async_is_awaited_and_equals_evaluate(dataset: Dataset, tmp_path: Path) -> None:
    from mt_eval.methods.registry import build_method

    async def main() -> tuple[mt_eval.EvalResult, mt_eval.EvalResult]:
        method = build_method("apertium:eng-spa", dataset=dataset)  # a Method object, too
        return (await mt_eval.evaluate_async(dataset, "apertium:eng-spa", bootstrap=FAST),
                await mt_eval.evaluate_async(dataset, method, bootstrap=FAST, write=True, runs_dir=tmp_path))

    by_spec, by_object = asyncio.run(main())
    plain = mt_eval.evaluate(dataset, "apertium:eng-spa", bootstrap=FAST)  # no loop running: asyncio.run
    for result in (by_object, plain):
        assert result.card["scores"]["chrf_plus_plus"] == by_spec.card["scores"]["chrf_plus_plus"]
        assert result.card["scores"]["confidence_intervals"] == by_spec.card["scores"]["confidence_intervals"]
    assert by_object.path is not None and by_object.path.parent.parent == tmp_path  # runs/<run_id>/run_card.json
    assert by_object.path.is_file() and by_object.path.with_suffix(".stats.npz").is_file()


def test_the_calling_context_reaches_the_worker_thread() -> None:
    """``evaluate`` inside a loop runs in a worker thread: the caller's context variables go with it (a library
    the caller configured through one, such as a tracer, sees the same value there)."""
    import contextvars

    from mt_eval.api.loops import run_blocking

    var: contextvars.ContextVar[object] = contextvars.ContextVar("probe", default=None)
    marker = object()
    seen: list[object] = []

    async def probe() -> None:
        seen.append(var.get())

    async def cell() -> None:
        var.set(marker)
        run_blocking(probe())

    asyncio.run(cell())
    assert seen == [marker]


def test_compare_takes_results_and_load_card_gives_a_typed_card(tmp_path: Path, apertium_outputs: list[str],
                                                                ntrex: tuple[list[str], list[str]]) -> None:
    sources, refs = ntrex
    good = mt_eval.score(apertium_outputs, refs, sources=sources, lang="en-es", system="apertium", bootstrap=FAST,
                         out=tmp_path / "good.json")
    worse = mt_eval.score([" ".join(o.split()[::2]) for o in apertium_outputs], refs, sources=sources, lang="en-es",
                          system="every-other-word", bootstrap=FAST)
    comparison = mt_eval.compare([good, worse], metrics=["chrf_plus_plus"], n_resamples=200)
    assert [s.name for s in comparison.systems] == ["apertium", "every-other-word"]
    from_dicts = mt_eval.compare([dict(good.card), dict(worse.card)], metrics=["chrf_plus_plus"], n_resamples=200)
    assert comparison.as_dict()["paired"] == from_dicts.as_dict()["paired"]
    paired = comparison.paired[0]
    assert paired.delta < 0 and paired.p_value < 0.05

    assert good.path is not None
    card = mt_eval.load_card(good.path)
    assert isinstance(card, mt_eval.RunCard) and card.run_card_hash == good.card["run_card_hash"]
    identity = card.identity()
    assert identity.name == "apertium" and identity.version == good.card["method"]["version"]
    data = card.corpus()
    assert data.sha256 == good.card["dataset"]["sha256"] and [e.source for e in data.entries] == sources
    assert [t.text for t in card.translations()] == apertium_outputs
    again = mt_eval.score([t.text for t in card.translations()], [e.reference for e in data.entries],
                          sources=[e.source for e in data.entries], lang="en-es", system="apertium", bootstrap=FAST)
    assert again.card["fingerprint"] == good.card["fingerprint"] and again["bleu"] == good["bleu"]

"""Spec rows that were hard-coded null (issue 22 item 9): ``method_config.qualityTier`` and ``coachingPrompt``
filled from the run and the method where known (``scores.comet_model``: tests/comet/test_comet_model_field.py)."""

from __future__ import annotations

from pathlib import Path

import mt_eval
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.methods.llm import LLMMethod, LLMSettings
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.stats.config import BootstrapConfig

SRCS = ["The cat sat on the mat.", "It will rain in Madrid tomorrow."]
REFS = ["El gato se sentó en la alfombra.", "Mañana lloverá en Madrid."]
HYPS = ["El gato se sentó sobre la alfombra.", "Mañana va a llover en Madrid."]


def _dataset() -> Dataset:
    entries = [Entry(id=i, source=s, reference=r) for i, (s, r) in enumerate(zip(SRCS, REFS, strict=True), 1)]
    return Dataset(info=DatasetInfo(id="t", source_language="en", target_language="es"), entries=entries,
                   sha256="1" * 64)


def _run() -> RunInfo:
    return RunInfo("r", "2026-01-01T00:00:00Z", 1.0, "default", bootstrap=BootstrapConfig(20, 0.05, 1))


def test_quality_tier_is_the_runs() -> None:
    card = mt_eval.score(HYPS, REFS, sources=SRCS, lang="en-es").card
    assert card["method_config"]["qualityTier"] == card["scores"]["quality_tier"] is not None
    assert card["method_config"]["coachingPrompt"] is None  # replayed predictions: no coaching


def test_coaching_prompt_is_the_coaching_text(tmp_path: Path) -> None:
    coaching = tmp_path / "coaching.txt"
    coaching.write_text("Use 'alfombra' for 'mat'.\nNever translate names.\n", encoding="utf-8")
    method = LLMMethod(LLMSettings(model="test/model", base_url="http://127.0.0.1:9/v1", coaching_file=str(coaching),
                                   require_key=False),
                       source_language="en", target_language="es", coached=True)
    dataset = _dataset()
    translations = [Translation(e.id, h) for e, h in zip(dataset.entries, HYPS, strict=True)]
    card, _ = build_card(dataset, method.identity, translations, _run(), language_card("es"), language_card("en"))
    assert card["method_config"]["coachingPrompt"] == coaching.read_text(encoding="utf-8")
    assert card["method_config"]["coachingFile"] == str(coaching)
    assert card["method_config"]["qualityTier"] == card["scores"]["quality_tier"]

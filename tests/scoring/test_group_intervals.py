"""A breakdown group that holds every entry (kept only when verify rebuilds a card written before one-group
breakdowns were left out) gets the whole run's intervals, and that shortcut is exact."""

from __future__ import annotations

import numpy as np

from data_paths import NTREX
from mt_eval.corpus import load_text_pair
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.scoring.intervals import confidence_intervals, scores_with_intervals
from mt_eval.scoring.pipeline import score_outputs
from mt_eval.scoring.profiles import PROFILES
from mt_eval.stats.config import BootstrapConfig

WB = PROFILES["B"]  # profile B's weights: composite functions take weights, not keys



def test_a_group_of_every_entry_has_exactly_the_whole_runs_intervals(tmp_path) -> None:
    src = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:60]
    ref = (NTREX / "newstest2019-ref.deu.txt").read_text(encoding="utf-8").splitlines()[:60]
    (tmp_path / "s").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp_path / "r").write_text("\n".join(ref) + "\n", encoding="utf-8")
    dataset = load_text_pair(tmp_path / "s", tmp_path / "r", "en", "de")  # no annotations: one group each
    hyps = [" ".join(r.split()[:-2]) for r in ref]
    table, _ = score_outputs(dataset, [Translation(e.id, h) for e, h in zip(dataset.entries, hyps, strict=True)],
                             language_card("de"), language_card("en"))
    config = BootstrapConfig(200, 0.05, 7)
    assert "by_difficulty" not in scores_with_intervals(table, WB, config)  # one group: left out
    scores = scores_with_intervals(table, WB, config, keep=["by_difficulty"])  # as verify rebuilds an old card
    assert list(scores["by_difficulty"]) == ["3"]
    group = scores["by_difficulty"]["3"]["confidence_intervals"]
    assert group == scores["confidence_intervals"] and group is not scores["confidence_intervals"]
    explicit = confidence_intervals(table, WB, config, np.arange(60))  # what the shortcut skips
    assert explicit == group
    assert explicit["chrf_plus_plus"]["ci_lower"] < explicit["chrf_plus_plus"]["ci_upper"]

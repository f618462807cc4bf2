"""Cards written by earlier versions keep loading and verifying; unknown versions are refused.

The files under ``saved/`` were written by mt-eval 2.0.0 and are never regenerated (see its
README): if a change to a metric, the schema or the seal breaks them, this test says so, and the
fix is a migration in ``runcard/io.py``, not new files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.runcard import io as card_io
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.verify import verify_card

SAVED = sorted((Path(__file__).parent / "saved").glob("card-*.json"))


def test_there_are_saved_cards() -> None:
    assert len(SAVED) >= 2


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_saved_card_loads_typed_and_verifies(path: Path) -> None:
    card = card_io.load_card(path)
    model = RunCard.model_validate(card)
    assert model.scores.composite is not None and model.scores.confidence_intervals is not None
    assert model.scores.confidence_intervals.n_resamples == 200
    assert verify_card(card) == []
    result = CliRunner().invoke(app, ["verify", str(path)])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("path", SAVED, ids=lambda p: p.stem)
def test_saved_card_with_one_score_changed_fails(path: Path) -> None:
    card = card_io.load_card(path)
    card["scores"]["chrf_plus_plus"] += 0.01
    problems = verify_card(card)
    assert problems and problems[0].startswith("scores.chrf_plus_plus")


def test_unknown_schema_version_is_refused_with_one_line(tmp_path: Path) -> None:
    card = json.loads(SAVED[0].read_text(encoding="utf-8"))
    card["schema_version"] = "9.9"
    path = tmp_path / "future.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    with pytest.raises(UserError, match=r"unknown run card schema_version '9\.9'"):
        card_io.load_card(path)
    result = CliRunner().invoke(app, ["show", str(path)])
    assert result.exit_code == 2
    assert "schema_version" in result.stderr and "Traceback" not in result.output


def test_a_registered_migration_is_applied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hook runs old cards through each step up to the current version (and only then)."""
    card = json.loads(SAVED[0].read_text(encoding="utf-8"))
    card["schema_version"] = "1.9"
    card["old_name"] = card.pop("condition")
    path = tmp_path / "old.json"
    path.write_text(json.dumps(card), encoding="utf-8")

    def upgrade(old: dict) -> dict:
        new = dict(old, schema_version="2.0", condition=old["old_name"])
        del new["old_name"]
        return new

    monkeypatch.setitem(card_io.MIGRATIONS, "1.9", upgrade)
    loaded = card_io.load_card(path)
    assert loaded["schema_version"] == "2.0" and loaded["condition"] == "saved-2.0" and "old_name" not in loaded


@pytest.mark.parametrize("content", [b"\xff\xfe\x00garbage", b"[1, 2]", b"{", b"[" * 100_000])
def test_hostile_files_give_one_line(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "card.json"
    path.write_bytes(content)
    for command in ("show", "verify", "report"):
        result = CliRunner().invoke(app, [command, str(path)])
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr.count("\n") == 1 and str(path) in result.stderr and "Traceback" not in result.output


def test_a_directory_is_not_a_card(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["verify", str(tmp_path)])
    assert result.exit_code == 2 and "is a directory" in result.stderr


def _resealed(card: dict) -> dict:
    """A forger's card: edited, then sealed again (the hash alone cannot catch it)."""
    from mt_eval.runcard.seal import seal

    return seal(dict(card, run_card_hash=""))


def test_per_entry_fst_facts_are_recomputed() -> None:
    card = card_io.load_card(SAVED[0])  # Apertium eng→spa: profile A, per-entry fst_accepted
    row = next(i for i, r in enumerate(card["results"]) if r["fst_accepted"] is False)
    card["results"][row]["fst_accepted"] = True
    problems = verify_card(_resealed(card))
    assert problems and problems[0].startswith(f"results[{row}].fst_accepted")
    card = card_io.load_card(SAVED[0])
    card["results"][0]["fst_analysis"] = ["forged/analysis"]
    assert verify_card(_resealed(card))[0].startswith("results[0].fst_analysis")


def test_hostile_resample_count_fails_fast_with_one_line(tmp_path: Path) -> None:
    """n_resamples = 10**9 once asked for 745 GiB before the hash was checked; now the bounds refuse it (a
    regression would raise MemoryError or hit the suite's timeout; no wall-clock bound here)."""
    import tracemalloc

    card = card_io.load_card(SAVED[0])
    card["scores"]["confidence_intervals"]["n_resamples"] = 10**9
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(_resealed(card)), encoding="utf-8")
    tracemalloc.start()  # numpy's allocations are traced too: the refusal comes before any resampling buffer
    try:
        result = CliRunner().invoke(app, ["verify", str(path)])
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert result.exit_code == 1 and "n_resamples" in result.stderr, result.output
    assert peak < 256 * 2**20, f"verify allocated {peak / 2**20:.0f} MiB before refusing"
    shown = CliRunner().invoke(app, ["show", str(path)])
    assert shown.exit_code == 0 and "n_resamples" in shown.output and "Traceback" not in shown.output

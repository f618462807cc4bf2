"""A sidecar forged and resealed with its card (the seal is plain SHA-256: anyone can recompute it)
is not trusted: its statistics must reproduce the card's own ``scores``, else ``compare`` rebuilds
them from ``results[]`` and says why in one line."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mt_eval.comparison import StatisticsFallbackWarning, compare, load_for_compare
from mt_eval.runcard import layout
from mt_eval.runcard.io import load_card
from mt_eval.runcard.seal import seal
from mt_eval.runcard.statistics import decode, encode, sha256_bytes, sidecar_name
from mt_eval.scoring.scores import MetricTable


def _copy(card: Path, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(card, where / card.name)
    shutil.copy(card.with_name(sidecar_name(card)), where / sidecar_name(card))
    return where / card.name


def _forge(card_path: Path, edit, *, scores: dict | None = None) -> None:
    """Rewrite the sidecar with ``edit(stats, errors)`` applied, fix ``statistics.sha256`` (and any
    ``scores`` given) on the card, reseal it and write it in the harness's own layout."""
    card = load_card(card_path)
    side = card_path.with_name(sidecar_name(card_path))
    stored = decode(side.read_bytes(), card["statistics"])
    stats = {k: v.copy() for k, v in stored.stats.items()}
    errors = stored.errors.copy()
    edit(stats, errors)
    data = encode(MetricTable({}, stats, errors), stored.entry_ids)
    side.write_bytes(data)
    card["statistics"]["sha256"] = sha256_bytes(data)
    card["scores"].update(scores or {})
    seal(card)
    card_path.write_bytes(layout.dumps(card))
    assert layout.sealed_header(card_path.read_bytes()) is not None  # the fast path's seal check passes


def _raise_chrf_pp(stats: dict[str, np.ndarray], errors: np.ndarray) -> None:
    stats["chrf_plus_plus"] = stats["chrf_plus_plus"].copy()
    # every hypothesis n-gram counted as a match: chrF++ far above the card's score
    hyp_cols = np.arange(stats["chrf_plus_plus"].shape[1]) % 3 == 0
    stats["chrf_plus_plus"][:, 2::3] = stats["chrf_plus_plus"][:, hyp_cols]


def test_forged_statistics_are_not_used(cards, tmp_path: Path) -> None:
    a = _copy(cards["a"], tmp_path / "a")
    _forge(a, _raise_chrf_pp)
    loaded = load_for_compare(a)
    assert loaded.statistics is None
    assert loaded.fallback and "chrf_plus_plus" in loaded.fallback and "scores.chrf_plus_plus" in loaded.fallback


def test_forged_error_count_is_not_used(cards, tmp_path: Path) -> None:
    a = _copy(cards["a"], tmp_path / "a")

    def flip(stats: dict[str, np.ndarray], errors: np.ndarray) -> None:
        errors[0] = not errors[0]

    _forge(a, flip)
    loaded = load_for_compare(a)
    assert loaded.statistics is None and loaded.fallback and "scores.errors" in loaded.fallback


def test_compare_cli_warns_and_gives_the_cards_own_numbers(cards, tmp_path: Path) -> None:
    from mt_eval.cli import app

    a, forged = _copy(cards["a"], tmp_path / "a"), _copy(cards["b"], tmp_path / "forged")
    _forge(forged, _raise_chrf_pp)
    run = CliRunner().invoke(app, ["compare", "-m", "chrf_plus_plus", str(a), str(forged), "--bootstrap", "100",
                                   "--json"])  # fmt: skip
    assert run.exit_code == 0, run.output
    [line] = run.stderr.strip().splitlines()
    assert str(forged) in line and "stored statistics not used" in line and "chrf_plus_plus" in line
    honest = CliRunner().invoke(app, ["compare", "-m", "chrf_plus_plus", str(cards["a"]), str(cards["b"]),
                                      "--bootstrap", "100", "--json"])  # fmt: skip
    assert json.loads(run.stdout)["paired"] == json.loads(honest.stdout)["paired"]
    systems = json.loads(run.stdout)["systems"]
    own = load_card(cards["b"])["scores"]["chrf_plus_plus"]
    assert systems[1]["scores"]["chrf_plus_plus"]["point"] == pytest.approx(own)


def test_an_honest_sidecar_stays_on_the_fast_path(cards, tmp_path: Path) -> None:
    a = _copy(cards["a"], tmp_path / "a")
    with warnings.catch_warnings():
        warnings.simplefilter("error", StatisticsFallbackWarning)
        compare([a, cards["b"]], metrics=["chrf"], n_resamples=50)
    assert load_for_compare(a).statistics is not None

"""A card whose top-level fields do not have a run card's shape is refused by ``compare`` with one
line naming the file and the field (exit 2), never a traceback: it is checked against
``runcard.model.RunCard`` when loaded, whether or not its stored statistics are used."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.comparison import load_for_compare
from mt_eval.errors import UserError
from mt_eval.runcard.io import load_card
from mt_eval.runcard.seal import seal
from mt_eval.runcard.statistics import sidecar_name

FIELDS = ["dataset", "method", "metrics", "terminology", "fingerprint", "scores", "results"]


def _broken(card: Path, where: Path, field: str, *, resealed: bool) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    data = load_card(card)
    data[field] = [1]
    if resealed:
        seal(data)
    out = where / "k.json"
    out.write_text(json.dumps(data), encoding="utf-8")
    shutil.copy(card.with_name(sidecar_name(card)), where / sidecar_name(out))
    return out


@pytest.mark.parametrize("resealed", [False, True], ids=["edited", "resealed"])
@pytest.mark.parametrize("field", FIELDS)
def test_compare_names_the_file_and_field(cards, tmp_path: Path, field: str, resealed: bool) -> None:
    from mt_eval.cli import app

    k = _broken(cards["b"], tmp_path, field, resealed=resealed)
    run = CliRunner().invoke(app, ["compare", str(cards["a"]), str(k), "--bootstrap", "50"])
    assert run.exit_code == 2, run.output
    assert run.exception is None or isinstance(run.exception, SystemExit)  # no traceback
    [line] = run.stderr.strip().splitlines()
    assert str(k) in line and re.search(rf"\b{field}(\.\d+)?:", line), line


def test_load_for_compare_raises_a_user_error(cards, tmp_path: Path) -> None:
    k = _broken(cards["b"], tmp_path, "dataset", resealed=True)
    with pytest.raises(UserError, match=r"k\.json is not a valid run card: dataset"):
        load_for_compare(k)


@pytest.mark.parametrize("field", ["dataset", "method", "metrics", "terminology"])
def test_the_api_refuses_a_malformed_card_dict(cards, field: str) -> None:
    from mt_eval.comparison import compare

    bad = load_card(cards["b"])
    bad[field] = [1]
    with pytest.raises(UserError, match=rf"cards\[1\] is not a valid run card: {field}"):
        compare([load_card(cards["a"]), bad], metrics=["chrf"], n_resamples=20)
    with pytest.raises(UserError, match=rf"k\.json is not a valid run card: {field}"):
        compare([load_card(cards["a"]), bad], metrics=["chrf"], n_resamples=20, sources=["a.json", "k.json"])

"""Stored statistics (docs/decisions.md §23): the sidecar, its reference under the seal, the card's
layout, and ``verify`` catching a changed sidecar or an edited reference by name."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from mt_eval.api import evaluate_card
from mt_eval.cli import app
from mt_eval.corpus import load_text_pair
from mt_eval.methods.registry import build_method
from mt_eval.runcard import layout, statistics
from mt_eval.runcard.io import load_card, write_card
from mt_eval.runcard.rescore import table_from_card
from mt_eval.runcard.seal import card_hash, seal
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.intervals import BootstrapConfig

N = 40


@pytest.fixture(scope="module")
def written(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two runs of the same outputs (different run ids and times) and one of other outputs."""
    tmp = tmp_path_factory.mktemp("sidecar")
    src = (ntrex_dir / "newstest2019-src.eng.txt").read_text(encoding="utf-8").split("\n")[:N]
    ref = (ntrex_dir / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").split("\n")[:N]
    (tmp / "src.en").write_text("\n".join(src) + "\n", encoding="utf-8")
    (tmp / "ref.es").write_text("\n".join(ref) + "\n", encoding="utf-8")
    dataset = load_text_pair(tmp / "src.en", tmp / "ref.es", "en", "es")
    hyps = {"a": [" ".join(r.split()[:-1]) for r in ref], "b": [" ".join(r.split()[1:]) for r in ref]}
    out: dict[str, Path] = {}
    for name, run in (("a", "a"), ("a_again", "a"), ("b", "b")):
        (tmp / f"{run}.txt").write_text("\n".join(hyps[run]) + "\n", encoding="utf-8")
        method = build_method(f"predictions:{tmp / f'{run}.txt'}", dataset=dataset)
        _, out[name] = evaluate_card(dataset, method, runs_dir=tmp / "runs", out=tmp / name / "run_card.json",
                                     bootstrap=BootstrapConfig(50, 0.05, 7))  # fmt: skip
    return out


def _copy(card: Path, where: Path) -> Path:
    where.mkdir(parents=True, exist_ok=True)
    shutil.copy(card, where / card.name)
    shutil.copy(card.with_name(statistics.sidecar_name(card)), where / statistics.sidecar_name(card))
    return where / card.name


def test_the_card_references_its_sidecar_under_the_seal(written) -> None:
    path = written["a"]
    card = load_card(path)
    ref = card["statistics"]
    sidecar = path.with_name("run_card.stats.npz")
    assert ref["file"] == sidecar.name and ref["format"] == "npz-1"
    assert ref["sha256"] == hashlib.sha256(sidecar.read_bytes()).hexdigest()
    assert set(ref["metrics"]) == set(card["metrics"])  # every metric of the run
    assert card_hash(card) == card["run_card_hash"]  # the reference is inside the seal
    assert verify_card(card, path) == []


def test_sidecar_holds_exactly_the_rebuilt_statistics_and_numpy_reads_it(written) -> None:
    path = written["a"]
    card = load_card(path)
    fresh = table_from_card(card)
    with np.load(path.with_name("run_card.stats.npz")) as npz:  # a plain .npz
        assert npz["entry_ids"].tolist() == [r["entry_id"] for r in card["results"]]
        assert np.array_equal(npz["errors"], fresh.errors)
        assert card["statistics"]["metrics"] == list(fresh.stats)
        for metric_id, array in fresh.stats.items():
            stored = npz[f"metric.{metric_id}"]
            assert stored.dtype == array.dtype and np.array_equal(stored, array, equal_nan=True), metric_id


def test_same_statistics_same_bytes(written) -> None:
    """Two runs of the same outputs, written at different times: the sidecars are byte-identical
    (no clock in the zip), and so are their hashes on the cards."""
    a, again = load_card(written["a"]), load_card(written["a_again"])
    assert a["run_id"] != again["run_id"]
    assert a["statistics"]["sha256"] == again["statistics"]["sha256"]
    data = written["a"].with_name("run_card.stats.npz").read_bytes()
    assert data == written["a_again"].with_name("run_card.stats.npz").read_bytes()
    assert {i.date_time for i in zipfile.ZipFile(io.BytesIO(data)).infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert load_card(written["b"])["statistics"]["sha256"] != a["statistics"]["sha256"]


def test_the_file_is_the_seals_own_text(written) -> None:
    """Newlines and tabs are layout only: without them the file is the Run Card Spec's hashed text."""
    raw = written["a"].read_bytes()
    card = json.loads(raw)
    body = dict(card, run_card_hash="")
    spec_text = json.dumps(body, sort_keys=True, ensure_ascii=False).encode("utf-8")
    assert raw.translate(None, b"\n\t").replace(card["run_card_hash"].encode(), b"") == spec_text
    assert layout.sealed_header(raw) == dict(card, results=[])  # the fast check: seal verified in one pass
    head = layout.header(raw)
    assert head is not None and head["results"] == [] and head == dict(card, results=[])


def test_fast_seal_check_refuses_what_it_cannot_show(written, tmp_path: Path) -> None:
    raw = written["a"].read_bytes()
    card = json.loads(raw)
    edited = raw.replace(b'"condition": "default"', b'"condition": "defaulx"')
    assert edited != raw and layout.header(edited) is not None and layout.sealed_header(edited) is None
    reindented = json.dumps(card, ensure_ascii=False, indent=2).encode()  # valid, another layout
    assert layout.sealed_header(reindented) is None and layout.header(reindented) is None
    assert card_hash(json.loads(reindented)) == card["run_card_hash"]  # still a sealed card


def _problems(path: Path) -> list[str]:
    return verify_card(load_card(path), path)


def test_verify_names_a_changed_sidecar(written, tmp_path: Path) -> None:
    path = _copy(written["a"], tmp_path / "flip")
    sidecar = path.with_name("run_card.stats.npz")
    data = bytearray(sidecar.read_bytes())
    data[len(data) // 2] ^= 0xFF
    sidecar.write_bytes(bytes(data))
    assert _problems(path)[0].startswith("statistics.sha256:")
    # another run's sidecar in its place
    shutil.copy(written["b"].with_name("run_card.stats.npz"), sidecar)
    assert _problems(path)[0].startswith("statistics.sha256:")
    result = CliRunner().invoke(app, ["verify", str(path)])
    assert result.exit_code == 1 and "statistics.sha256" in result.output


def test_verify_names_the_first_metric_that_differs(written, tmp_path: Path) -> None:
    """A sidecar whose hash *is* on the card (reference updated, card resealed) but whose numbers are
    not the card's: verify compares the arrays with its own recomputation and names the metric."""
    path = _copy(written["a"], tmp_path / "resealed")
    card = load_card(path)
    table = table_from_card(card)
    table.stats["chrf"] = table.stats["chrf"].copy()
    table.stats["chrf"][3, 0] += 1
    data = statistics.encode(table, [r["entry_id"] for r in card["results"]])
    card["statistics"] = statistics.reference(table, data, "run_card.stats.npz")
    seal(card)
    write_card(card, path, data)
    problems = _problems(path)
    entry = card["results"][3]["entry_id"]
    assert problems[0] == (
        f"statistics: chrf in the sidecar differs from the recomputed statistics (first at entry {entry})"
    )
    assert len(problems) == 1  # the card itself is consistent


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [("sha256", "0" * 64, "statistics.sha256"), ("format", "npz-2", "statistics.format"),
     ("metrics", ["chrf"], "statistics.metrics"), ("file", "../elsewhere.stats.npz", "statistics.file"),
     ("file", "run_card.stats.npzx", "statistics.file")],
)
def test_an_edited_reference_is_named(written, tmp_path: Path, field: str, value: Any, expected: str) -> None:
    path = _copy(written["a"], tmp_path / "ref")
    card = load_card(path)
    card["statistics"][field] = value
    problems = verify_card(card, path)
    assert problems[0].startswith(expected), problems
    assert problems[-1].startswith("run_card_hash")


def test_a_card_without_its_sidecar_still_verifies(written, tmp_path: Path) -> None:
    path = tmp_path / "alone" / "run_card.json"
    path.parent.mkdir()
    shutil.copy(written["a"], path)
    assert _problems(path) == []


def test_write_card_refuses_bytes_the_card_does_not_reference(written, tmp_path: Path) -> None:
    card = load_card(written["a"])
    with pytest.raises(ValueError, match="not the ones the card references"):
        write_card(card, tmp_path / "x.json", b"other bytes")
    assert not (tmp_path / "x.json").exists()

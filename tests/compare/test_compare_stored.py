"""``compare`` from stored statistics (docs/decisions.md §23): no metric runs, the numbers are
bit-identical to rebuilding them from ``results[]``, and every fallback says why in one line."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path

import pytest
from compare_helpers import load
from typer.testing import CliRunner

from mt_eval.comparison import StatisticsFallbackWarning, compare, load_for_compare
from mt_eval.runcard.statistics import sidecar_name

NAMES = ["a", "b", "near_a"]
SAVED = sorted((Path(__file__).parents[1] / "runcard" / "saved").glob("card-*.json"))


def _copies(cards: dict[str, Path], where: Path, names: list[str], *, sidecars: bool = True) -> list[Path]:
    where.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        shutil.copy(cards[name], where / cards[name].name)
        if sidecars:
            shutil.copy(cards[name].with_name(sidecar_name(cards[name])), where / sidecar_name(cards[name]))
        out.append(where / cards[name].name)
    return out


@pytest.fixture
def no_metric_may_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Statistics extraction and rescoring raise: a comparison from stored statistics needs neither."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a metric ran")

    monkeypatch.setattr("mt_eval.runcard.rescore.table_from_card", refuse)
    monkeypatch.setattr("mt_eval.scoring.extraction.extract_statistics", refuse)


@pytest.mark.parametrize("method", ["bootstrap", "approx-rand"])
def test_stored_statistics_give_bit_identical_results(cards, no_metric_may_run, method, monkeypatch) -> None:
    paths = [cards[n] for n in NAMES]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback
        stored = compare(paths, names=NAMES, method=method, n_resamples=300, n_trials=500)
    monkeypatch.undo()  # the rebuild path may run metrics again
    rebuilt = compare([load(p) for p in paths], names=NAMES, method=method, n_resamples=300, n_trials=500,
                      sources=[str(p) for p in paths])  # fmt: skip
    assert stored.as_dict() == rebuilt.as_dict()  # every score, CI, delta, p-value: equal, not close
    assert [s.source for s in stored.systems] == [str(p) for p in paths]
    assert len(stored.paired) == 2 * len(stored.metrics) and "composite" in [m.id for m in stored.metrics]


def test_metric_restriction_reads_only_what_is_asked(cards, no_metric_may_run, monkeypatch) -> None:
    paths = [cards["a"], cards["b"]]
    stored = compare(paths, names=NAMES[:2], metrics=["chrf", "ter"], n_resamples=200)
    assert [m.id for m in stored.metrics] == ["chrf", "ter"]
    with_composite = compare(paths, names=NAMES[:2], metrics=["chrf", "composite"], n_resamples=200)
    assert [m.id for m in with_composite.metrics] == ["chrf", "composite"]
    monkeypatch.undo()
    rebuilt = compare([load(p) for p in paths], names=NAMES[:2], metrics=["chrf", "composite"], n_resamples=200)
    assert with_composite.as_dict()["paired"] == rebuilt.as_dict()["paired"]


def test_the_loaded_card_skips_the_rows(cards) -> None:
    loaded = load_for_compare(cards["a"])
    assert loaded.fallback is None and loaded.statistics is not None
    assert loaded.card["results"] == []  # the per-entry rows were never parsed
    assert loaded.entry_ids == [r["entry_id"] for r in load(cards["a"])["results"]]


def _cli(*args: str):
    from mt_eval.cli import app

    return CliRunner().invoke(app, ["compare", *args, "--bootstrap", "200", "--json"])


def test_cli_without_sidecars_warns_once_per_card_and_gives_the_same_numbers(cards, tmp_path: Path) -> None:
    with_sidecars = _cli(str(cards["a"]), str(cards["b"]))
    assert with_sidecars.exit_code == 0 and with_sidecars.stderr == ""
    a, b = _copies(cards, tmp_path, ["a", "b"], sidecars=False)
    result = _cli(str(a), str(b))
    assert result.exit_code == 0, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("warning: ") for line in lines)
    assert str(a) in lines[0] and "a.stats.npz is missing" in lines[0] and "rebuilding" in lines[0]
    stored, rebuilt = json.loads(with_sidecars.stdout), json.loads(result.stdout)
    for key in ("systems", "paired"):  # sources differ (other paths); every number is equal
        for row in stored[key] + rebuilt[key]:
            row.pop("source", None)
        assert stored[key] == rebuilt[key]


def test_a_changed_sidecar_is_not_used(cards, tmp_path: Path) -> None:
    a, b = _copies(cards, tmp_path, ["a", "b"])
    shutil.copy(cards["near_a"].with_name(sidecar_name(cards["near_a"])), a.with_name(sidecar_name(a)))
    result = _cli(str(a), str(b))
    assert result.exit_code == 0, result.output
    [line] = result.stderr.strip().splitlines()
    assert "a.stats.npz does not match the card's statistics.sha256" in line
    assert json.loads(result.stdout)["paired"] == json.loads(_cli(str(cards["a"]), str(cards["b"])).stdout)["paired"]


def test_a_card_edited_after_sealing_is_rebuilt_with_a_warning(cards, tmp_path: Path) -> None:
    a, b = _copies(cards, tmp_path, ["a", "b"])
    raw = a.read_bytes()
    edited = raw.replace(b'"elapsed_seconds": ', b'"elapsed_seconds": 1', 1)
    assert edited != raw
    a.write_bytes(edited)
    with pytest.warns(StatisticsFallbackWarning, match="run_card_hash does not match"):
        compare([a, b], n_resamples=100)


def test_an_older_card_without_statistics_is_rebuilt_with_a_warning() -> None:
    loaded = load_for_compare(SAVED[0])
    assert loaded.statistics is None and loaded.card["results"]
    assert loaded.fallback and "no statistics are stored with this card" in loaded.fallback


def test_stored_statistics_in_another_entry_order_are_aligned(cards, ntrex_text, tmp_path: Path) -> None:
    """A run over the same entries in reverse order: its stored rows are put in the baseline's order,
    so the comparison equals the one against the run in the baseline's own order."""
    from compare_helpers import make_card, text_pair, write_lines

    src, ref = ntrex_text
    _, _, dataset = text_pair(tmp_path, src, ref)
    reversed_set = dataset.model_copy(update={"entries": list(reversed(dataset.entries))})
    b_lines = (cards["b"].with_name("b.txt")).read_text(encoding="utf-8").split("\n")[: len(src)]
    # one output line per entry, in the (reversed) dataset's order
    make_card(reversed_set, write_lines(tmp_path / "b.txt", b_lines[::-1]), tmp_path / "b_reversed.json")
    loaded = load_for_compare(tmp_path / "b_reversed.json")
    assert loaded.statistics is not None and loaded.entry_ids == sorted(loaded.entry_ids, reverse=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        straight = compare([cards["a"], cards["b"]], names=NAMES[:2], n_resamples=200)
        reordered = compare([cards["a"], tmp_path / "b_reversed.json"], names=NAMES[:2], n_resamples=200)
    assert straight.as_dict()["paired"] == reordered.as_dict()["paired"]

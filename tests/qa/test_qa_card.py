"""The sealed QA card beside metrics.json, and ``mt-eval verify`` on it: a fresh card verifies, and
an edit to any score, per-sample value, answer, setting or the hash fails naming the field."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from qa_helpers import write_jsonl
from test_qa_four_systems import GOLD, SYSTEMS
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.runcard.seal import card_hash, fingerprint_hash


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four-system comparison, written once; each test edits its own copy of the card."""
    tmp = tmp_path_factory.mktemp("qa-card")
    gold = write_jsonl(tmp / "gold.jsonl", GOLD)
    args = ["qa", "compare", "--gold", str(gold), "--baseline", "direct", "--out", str(tmp / "metrics.json"),
            "-b", "200"]  # fmt: skip
    args += [f"{name}={write_jsonl(tmp / f'{name}.jsonl', rows)}" for name, rows in SYSTEMS.items()]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"wrote {tmp / 'qa_card.json'}" in result.stderr
    return tmp


def _card(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "qa_card.json").read_text("utf-8")))


def _verify(path: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["verify", str(path)])
    return result.exit_code, result.stdout + result.stderr


def test_card_records_inputs_values_results_and_seal(run: Path) -> None:
    card = _card(run)
    assert card["schema_version"] == "qa-1.0" and card["kind"] == "qa"
    assert card["gold"]["sha256"] == hashlib.sha256((run / "gold.jsonl").read_bytes()).hexdigest()
    for name in SYSTEMS:
        assert card["systems"][name]["sha256"] == hashlib.sha256((run / f"{name}.jsonl").read_bytes()).hexdigest()
    lbrag = card["systems"]["lbrag"]["samples"]
    assert [r["cnbe"] for r in lbrag] == pytest.approx([1 / 60, 0, -1 / 100, 1 / 30])  # the hand values
    assert [r["cost"] for r in lbrag] == [20, 0, 50, 10]
    assert card["config"]["rlc_threshold"] == 0.6 and card["config"]["bootstrap"]["n_resamples"] == 200
    assert card["config"]["judge"] is None and card["config"]["correction"] == "holm"
    assert card["results"] == json.loads((run / "metrics.json").read_text("utf-8"))  # metrics.json, whole
    assert card["fingerprint"]["hash"] == fingerprint_hash(card["fingerprint"]["components"])
    assert card["run_card_hash"] == card_hash(card)
    code, output = _verify(run / "qa_card.json")
    expected = f"OK {run / 'qa_card.json'}: fingerprint, scores and run_card_hash verify"
    said = " ".join(output.split())
    assert code == 0 and said.startswith(expected), said
    assert "the seal alone does not say who produced the card" in said and "unsigned" in said  # what is not proven


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """An edit of the card at a dotted path (``[i]`` indexes a list)."""

    def edit(card: dict[str, Any]) -> None:
        keys: list[str | int] = []
        for part in path.split("."):
            name, _, index = part.partition("[")
            keys.append(name)
            if index:
                keys.append(int(index.rstrip("]")))
        node: Any = card
        for key in keys[:-1]:
            node = node[key]
        node[keys[-1]] = value(node[keys[-1]]) if callable(value) else value

    return edit


TAMPERING = [
    (_set("results.metrics.lbrag.f1", 0.9), "results.metrics.lbrag.f1: card says 0.9, recomputed 0.75"),
    (_set("results.metrics.cross.cnbe_std", 0.0), "results.metrics.cross.cnbe_std"),
    (_set("results.confidence_intervals.multi.em.ci_upper", 1.5), "results.confidence_intervals.multi.em.ci_upper"),
    (_set("results.paired_tests.systems.cross.f1.p_adjusted", 1e-3), "paired_tests.systems.cross.f1.p_adjusted"),
    (_set("results.coverage.lbrag.missing", 1), "results.coverage.lbrag.missing"),
    (_set("systems.cross.samples[0].em", 0.0), "systems.cross.samples[0].em (id q1): card says 0.0, recomputed 1.0"),
    (_set("systems.lbrag.samples[2].cnbe", 0.5), "systems.lbrag.samples[2].cnbe (id q3)"),
    (_set("systems.direct.samples[1].prediction", "308"), "systems.direct.samples[1].em (id q2)"),
    (_set("samples[3].answers", ["Manning"]), "systems.direct.samples[3].em (id q4)"),
    (_set("config.rlc_threshold", 0.8), "results.config.rlc_threshold: card says 0.6, recomputed 0.8"),
    (_set("fingerprint.components.gold_sha256", "0" * 64), "fingerprint.components.gold_sha256"),
    (_set("systems.cross.sha256", "0" * 64), "fingerprint.components.predictions_sha256"),
    (_set("run_card_hash", "0" * 64), "run_card_hash: does not match"),
]


@pytest.mark.parametrize(("edit", "named"), TAMPERING, ids=[t[1].split(":")[0].split(" ")[0] for t in TAMPERING])
def test_an_edit_fails_verify_naming_the_field(run: Path, tmp_path: Path, edit: Any, named: str) -> None:
    card = _card(run)
    edit(card)
    path = tmp_path / "qa_card.json"
    path.write_text(json.dumps(card, ensure_ascii=False), "utf-8")
    code, output = _verify(path)
    assert code == 1
    first = " ".join(output.split("\n  also:")[0].split())  # the first problem, unwrapped
    assert first.startswith(f"FAILED {path}: ") and named in first, output


def test_a_resealed_edit_still_fails_on_the_recomputed_field(run: Path, tmp_path: Path) -> None:
    """The seal is not the only check: an edit with a fresh hash is caught by recomputation."""
    card = _card(run)
    card["results"]["metrics"]["direct"]["em"] = 0.25
    card["run_card_hash"] = card_hash(card)
    path = tmp_path / "resealed.json"
    path.write_text(json.dumps(card), "utf-8")
    code, output = _verify(path)
    assert code == 1 and "results.metrics.direct.em: card says 0.25, recomputed 0.0" in " ".join(output.split())
    assert "run_card_hash" not in output


def test_card_path_option_and_no_card_without_out(run: Path, tmp_path: Path) -> None:
    gold = run / "gold.jsonl"
    args = ["qa", "score", "--gold", str(gold), "--predictions", str(run / "lbrag.jsonl"), "-b", "50"]
    result = CliRunner().invoke(app, [*args, "--card", str(tmp_path / "c" / "card.json")])
    assert result.exit_code == 0, result.output
    assert _verify(tmp_path / "c" / "card.json")[0] == 0
    before = set(tmp_path.iterdir())
    assert CliRunner().invoke(app, args).exit_code == 0 and set(tmp_path.iterdir()) == before


def test_a_garbled_card_is_a_named_failure_not_a_traceback(run: Path, tmp_path: Path) -> None:
    card = _card(run)
    del card["systems"]["lbrag"]["samples"][0]["status"]
    path = tmp_path / "garbled.json"
    path.write_text(json.dumps(card), "utf-8")
    code, output = _verify(path)
    assert code == 1 and "cannot be rescored" in output and "Traceback" not in output

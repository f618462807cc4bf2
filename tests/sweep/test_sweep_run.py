"""A 3 models × 2 temperatures × 2 prompts sweep plus Apertium against the real local OpenAI-protocol
server: 13 sealed cards published and ranked, each answer the oracle's, each entry requested once;
the report's numbers recomputed from the cards; one in-flight limit shared by all cells."""

from __future__ import annotations

import json
import re
from pathlib import Path

import sacrebleu
from sqlalchemy import select
from sweep_helpers import FAST, MODELS, FakeOpenAI, LocalSweep, Oracle, cards_in, expected, oracle_key, write_sweep
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.stats.config import BootstrapConfig
from mt_eval.store.board import leaderboard
from mt_eval.store.db import open_store
from mt_eval.store.models import Card, Sweep, SweepCell
from mt_eval.store.ranking import key_value
from mt_eval.sweep.execute import settings_for
from mt_eval.sweep.plan import load_plan
from mt_eval.sweep.report import build_report, hard_entries


def test_thirteen_cards_published_ranked_and_each_entry_requested_once(local_sweep: LocalSweep) -> None:
    cards = cards_in(local_sweep.root)
    assert len(cards) == 13
    lines = local_sweep.progress.splitlines()  # one overall bar, then a line per cell with its composite
    assert lines[0].startswith("sweep ") and "13/13 cells" in lines[0]
    for folder, card in cards.items():
        key = folder.replace("test_", "test/").replace("cell=apertium", "cell=apertium ")
        assert any(line.startswith(key) and f"composite {card['scores']['composite']:.3f}" in line for line in lines)
    for folder, card in cards.items():
        if folder == "cell=apertium":
            assert card["method"]["name"] == "apertium:eng-spa"
            continue
        model, temperature, v2, _ = oracle_key(folder, "")
        assert card["model_slug"] == model and card["temperature"] == temperature
        for r in card["results"]:  # the card holds exactly what the server answered for this cell
            assert r["predicted"] == expected(model, temperature, v2, r["source"], r["reference"])
            assert local_sweep.asked[(model, temperature, v2, r["source"])] == 1
    assert sum(local_sweep.asked.values()) == 12 * 6  # no cache, no retry: one request per entry and cell
    with open_store(str(local_sweep.db)) as store:
        boards = leaderboard(store)
        ranked = [row for board in boards for row in board.rows]
        assert len(ranked) == 13
        assert [board.key.metric for board in boards] == ["chrf_plus_plus"]  # the registered dataset's default key
        values = [key_value(row, boards[0].key) for row in ranked]
        assert values == sorted(values, reverse=True)
        with store.session() as session:
            sweep = session.scalars(select(Sweep)).one()
            rows = session.scalars(select(SweepCell).where(SweepCell.sweep_id == sweep.id)).all()
            published = {c.id: c.run_card_hash for c in session.scalars(select(Card))}
    assert sweep.name == "demo" and len(rows) == 13 and {r.status for r in rows} == {"published"}
    assert sorted(published[r.card_id] for r in rows) == sorted(c["run_card_hash"] for c in cards.values())
    assert {r.params["model"] for r in rows if "model" in r.params} == set(MODELS)


def test_report_best_per_model_axis_effects_and_hard_entries(local_sweep: LocalSweep) -> None:
    spec, cells = load_plan(local_sweep.file)
    settings = settings_for(spec, runs_dir=local_sweep.root.parent, concurrency=4, cache_path=None,
                            bootstrap=BootstrapConfig())
    report = build_report(spec, cells, settings)
    composite = {folder: card["scores"]["composite"] for folder, card in cards_in(local_sweep.root).items()}
    best = {s.model: s.cell.slug for s in report.best}
    for model in MODELS:  # recomputed from the cards: the highest composite among the model's cells
        mine = {f: c for f, c in composite.items() if f.startswith(f"model={model.replace('/', '_')},")}
        assert best[model] == max(mine, key=lambda f: mine[f])
    assert best["apertium/eng-spa"] == "cell=apertium"
    effects = {(e.axis, e.value): e for e in report.effects}
    assert set(effects) == {("model", "test/mid"), ("model", "test/bad"), ("temperature", "0.7"),
                            ("prompt", "prompt-v2")}
    temp = effects[("temperature", "0.7")]
    deltas = [composite[f.replace("temperature=0.0", "temperature=0.7")] - c
              for f, c in composite.items() if "temperature=0.0" in f]
    assert temp.pairs == 6 and abs(temp.mean_delta - sum(deltas) / 6) < 1e-12
    assert temp.ci[0] <= temp.mean_delta <= temp.ci[1] < 0  # dropping a word always hurts: the CI says so
    assert effects[("prompt", "prompt-v2")].ci[0] > 0 and effects[("model", "test/bad")].pairs == 4
    assert report.hard == [] and report.entries == 6  # test/good with the v2 prompt gets every entry right
    # without the good model, the entries nobody gets right, checked with sacrebleu's own sentence chrF++
    cards = [(c, card) for c in cells
             if not c.key.startswith("model=test/good") and (card := _card(local_sweep.root, c.slug)) is not None]
    hard, shared = hard_entries(cards, 50.0)
    wrong = {r["entry_id"] for _, card in cards for r in card["results"]}
    for _, card in cards:
        for r in card["results"]:
            if sacrebleu.sentence_chrf(r["predicted"], [r["reference"]], word_order=2).score >= 50.0:
                wrong.discard(r["entry_id"])
    assert shared == 6 and {h.entry_id for h in hard} == wrong and 0 < len(wrong) < 6


def _card(root: Path, slug: str) -> dict[str, object] | None:
    path = root / slug / "run_card.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def test_report_and_dry_run_commands(local_sweep: LocalSweep, tmp_path: Path) -> None:
    report = CliRunner().invoke(app, ["sweep", "report", str(local_sweep.file), "--runs-dir",
                                      str(local_sweep.root.parent)], terminal_width=250)
    assert report.exit_code == 0, report.output
    assert "best configuration per model" in report.stdout and "effect of each axis" in report.stdout
    assert "entries no cell gets right (exact match or entry chrF++ ≥ 50): 0 of 6" in report.stdout
    pricing = tmp_path / "pricing.json"
    pricing.write_text(json.dumps({"models": {m: {"prompt": 1.0, "completion": 2.0} for m in MODELS}}),
                       encoding="utf-8")
    priced = write_sweep(tmp_path, "http://127.0.0.1:9/v1", method=(f'pricing = "{pricing}"',))
    dry = CliRunner().invoke(app, ["sweep", str(priced), "--dry-run"], terminal_width=250)
    assert dry.exit_code == 0, dry.output
    costs = [float(c) for c in re.findall(r"^\s*model=.*\$(\d+\.\d+)\s*$", dry.stdout, re.MULTILINE)]
    total = float(re.search(r"estimated sweep cost: \$(\d+\.\d+)", dry.stdout).group(1))  # type: ignore[union-attr]
    assert len(costs) == 12 and abs(sum(costs) - total) < 1e-3 and total > 0
    assert "13 cells" in dry.stdout and "no paid requests" in dry.stdout
    over = CliRunner().invoke(app, ["sweep", str(priced), "--budget-usd", str(total / 2)])
    assert over.exit_code == 2 and "exceeds --budget-usd" in over.stderr
    assert not (tmp_path / "runs").exists()  # neither a dry run nor a refused budget writes anything


def test_cells_share_one_in_flight_limit(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    for concurrency in (2, 6):
        with FakeOpenAI(responder=Oracle(), base_delay=0.05) as server:
            file = write_sweep(tmp_path, server.base_url, name=f"c{concurrency}", temperatures=(0.0,),
                               prompts=False, apertium=False)
            result = CliRunner().invoke(app, ["sweep", str(file), "-j", "3", "--concurrency", str(concurrency),
                                              "--no-cache", *FAST])
            assert result.exit_code == 0, result.output
            # three cells at once, six entries each: only the shared pool keeps the total at --concurrency
            seen = server.max_in_flight
            assert seen == 2 if concurrency == 2 else 2 < seen <= 6, (concurrency, seen)

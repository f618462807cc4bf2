"""``api.run``: the one orchestration of a run (plan, budget through a callback, resume read once, an existing
``out`` refused), used by ``mt-eval run`` (which only parses and renders) and the sweep (issue 23 items 3, 6)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mt_eval.api import RunOutcome, run
from mt_eval.cli import app
from mt_eval.corpus import load_corpus
from mt_eval.errors import UserError
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.stats.config import BootstrapConfig

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "examples" / "ntrex128-eng-spa.json"
FAST = BootstrapConfig(n_resamples=50)


class PaidEcho(MethodBase):
    """A resumable method with a request plan and a price: the reference back, so the card is real."""

    resumable = True

    def __init__(self, cost_per_entry: float = 0.01) -> None:
        self.cost, self.sent = cost_per_entry, 0
        self.refs = {e.id: e.reference for e in load_corpus(CORPUS).entries}
        self.identity = MethodIdentity(name="paid-echo", method_class=MethodClass.CUSTOM_PLUGIN, version="1",
                                       model_slug="paid-echo", config={}, provider="test")

    def plan(self, requests: Sequence[TranslationRequest]) -> dict[str, Any] | None:
        return {"requests": len(requests), "est_cost_usd": self.cost * len(requests)}

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        self.sent += len(requests)
        return [Translation(r.entry_id, self.refs[r.entry_id]) for r in requests]


@pytest.fixture(scope="module")
def small() -> Any:
    from mt_eval.corpus import select_entries

    return select_entries(load_corpus(CORPUS), ids="1-4")


def test_an_existing_out_is_refused_before_any_work_unless_overwrite(small: Any, tmp_path: Path) -> None:
    out = tmp_path / "card.json"
    out.write_text("{}", encoding="utf-8")
    method = PaidEcho()
    with pytest.raises(UserError, match="already exists; pass --force"):
        run(small, method, runs_dir=tmp_path / "runs", out=out, bootstrap=FAST)
    assert method.sent == 0 and not (tmp_path / "runs").exists() and out.read_text(encoding="utf-8") == "{}"
    done = run(small, method, runs_dir=tmp_path / "runs", out=out, overwrite=True, bootstrap=FAST)
    assert done.path == out and json.loads(out.read_text(encoding="utf-8"))["run_card_hash"]


def test_the_budget_is_asked_through_the_callback_and_a_no_sends_nothing(small: Any, tmp_path: Path) -> None:
    asked: list[str] = []
    plans: list[Any] = []
    method = PaidEcho(cost_per_entry=1.0)
    def say_no(question: str) -> bool:
        asked.append(question)
        return False

    with pytest.raises(UserError, match="not run: over budget"):
        run(small, method, runs_dir=tmp_path / "runs", budget_usd=1.0, on_plan=plans.append, confirm=say_no)
    assert plans and plans[0]["est_cost_usd"] == pytest.approx(4.0) and "exceeds --budget-usd" in asked[0]
    assert method.sent == 0 and not (tmp_path / "runs").exists()  # no journal started for a refused run
    with pytest.raises(UserError, match="exceeds --budget-usd"):  # nobody to ask: refused
        run(small, method, runs_dir=tmp_path / "runs", budget_usd=1.0)
    outcome = run(small, method, runs_dir=tmp_path / "runs", budget_usd=1.0, confirm=lambda q: True, bootstrap=FAST)
    assert isinstance(outcome, RunOutcome) and outcome.card is not None and method.sent == 4


def test_a_dry_run_plans_and_writes_nothing(small: Any, tmp_path: Path) -> None:
    method = PaidEcho()
    outcome = run(small, method, runs_dir=tmp_path / "runs", dry_run=True)
    assert outcome.card is None and outcome.plan == {"requests": 4, "est_cost_usd": pytest.approx(0.04)}
    assert method.sent == 0 and not (tmp_path / "runs").exists()


def test_a_resume_plans_only_what_is_left_from_one_journal_read(small: Any, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    first = run(small, PaidEcho(), runs_dir=tmp_path / "runs", bootstrap=FAST, invocation={"method": "x"})
    assert first.path is not None
    run_dir = first.path.parent
    journal = (run_dir / "journal.jsonl").read_text(encoding="utf-8").splitlines()
    (run_dir / "journal.jsonl").write_text("\n".join(journal[:3]) + "\n", encoding="utf-8")  # header + 2 entries
    from mt_eval.engine import runner, session

    reads: list[Path] = []
    real = session.read_journal

    def counted(path: Path) -> Any:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(session, "read_journal", counted)
    monkeypatch.setattr(runner, "read_journal", counted)
    again = PaidEcho()
    resumed = run(small, again, runs_dir=tmp_path / "runs", resume=run_dir, invocation={"method": "x"},
                  bootstrap=FAST, overwrite=True)
    assert resumed.plan is not None and resumed.plan["requests"] == 2 and again.sent == 2
    assert len(reads) == 1  # the header and the finished entries: one read of the journal
    assert resumed.card is not None and resumed.card["run_id"] == first.card["run_id"]  # type: ignore[index]
    with pytest.raises(UserError, match="--method is 'y' here but 'x'"):  # compared, never followed
        run(small, PaidEcho(), runs_dir=tmp_path / "runs", resume=run_dir, invocation={"method": "y"})


def test_mt_eval_run_out_needs_force_to_replace_a_card(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "card.json"
    args = ["run", "-c", str(CORPUS), "--ids", "1-3", "--method", "apertium:eng-spa", "--runs-dir",
            str(tmp_path / "runs"), "-o", str(out), "--bootstrap", "50"]
    assert runner.invoke(app, args).exit_code == 0
    first = out.read_text(encoding="utf-8")
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2 and "already exists; pass --force" in refused.output
    assert out.read_text(encoding="utf-8") == first  # untouched
    assert runner.invoke(app, [*args, "--force"]).exit_code == 0
    assert json.loads(out.read_text(encoding="utf-8"))["run_id"] != json.loads(first)["run_id"]

"""Generated judges where they are used: examples from a run card (secret entries never shown to the model),
the judge's reasons kept, and a judge measured by ``mt-eval robustness --judge`` like any metric."""

from __future__ import annotations

import json
from pathlib import Path

from test_judges import EXAMPLES, respond
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.metrics.judges import judge_metrics
from mt_eval.robustness import robustness
from support.fake_openai import FakeOpenAI

runner = CliRunner()
CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"


def _generate(server: FakeOpenAI, examples: Path, out: Path, cache: Path) -> None:
    result = runner.invoke(app, ["metrics", "generate-judges", "--task", "English to Spanish news", "--examples",
                                 str(examples), "--model", "judge-m", "--base-url", server.base_url, "-o", str(out),
                                 "--criteria", "1", "--rubrics", "0", "--cache", str(cache)])
    assert result.exit_code == 0, result.output


def test_examples_from_a_card_never_include_secret_entries(tmp_path: Path) -> None:
    rows = [{"entry_id": i, "source": f"src {i}", "reference": f"ref {i}", "predicted": f"out {i}",
             "entry_chrf": float(s), "segment": seg}
            for i, (s, seg) in enumerate([(99, "held_out"), (90, "development"), (80, "development"),
                                          (5, "gold_standard"), (10, "development"), (20, "diagnostic")])]
    card = tmp_path / "card.json"
    card.write_text(json.dumps({"run_card_hash": "x", "results": rows}), encoding="utf-8")
    with FakeOpenAI(responder=respond) as server:
        _generate(server, card, tmp_path / "j", tmp_path / "c.sqlite")
        prompt = server.requests[0].body["messages"][0]["content"]
    assert "out 0" not in prompt and "out 3" not in prompt  # held_out (best) and gold_standard (worst) withheld
    good, bad = prompt.split("Good examples")[1].split("Bad examples")
    assert "out 1" in good and "out 4" in bad and "Target metric: chrF of each entry" in prompt


def test_a_judge_in_robustness_and_its_reasons(tmp_path: Path) -> None:
    hyp = tmp_path / "hyp.jsonl"
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:6]
    hyp.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": e["reference"]}, ensure_ascii=False) + "\n"
                           for e in entries), encoding="utf-8")
    card = tmp_path / "card.json"
    result = runner.invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--ids", "1-6", "-b", "0", "-o", str(card),
                                 "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    examples = tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLES), encoding="utf-8")
    with FakeOpenAI(responder=respond) as server:
        _generate(server, examples, tmp_path / "judges", tmp_path / "c.sqlite")
        judges = judge_metrics([tmp_path / "judges"], cache_path=str(tmp_path / "c.sqlite"))
        report = robustness(card, system="references", only=["chrf_plus_plus"], extra=judges)
    judge = judges[0].id
    assert report.metrics == ["chrf_plus_plus", judge, "composite"]
    # the server scores word overlap with the reference: the reference itself gets 5, a truncation less
    assert report.sensitivity[judge]["truncation"].value == 1.0
    assert report.sensitivity[judge]["dropped_content_words"].value == 1.0
    assert report.stability[judge]["whitespace"].value == 1.0  # split() ignores doubled spaces
    assert set(judges[0].explanations.values()) == {"overlap"}

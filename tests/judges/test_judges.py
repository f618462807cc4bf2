"""Generated LLM-judge metrics against the real local OpenAI-protocol server (tests/support/fake_openai.py):
generation from best/worst examples, the cards it writes, scoring under the metric protocol, the response
cache (a re-run sends nothing), unreadable answers (counted, never a crash), 429/500 retries."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics.bank import parse_card
from mt_eval.metrics.judges import JudgeAnswerError, judge_metrics, parse_score
from mt_eval.providers.openai_compat import RetryPolicy
from mt_eval.scoring.pipeline import score_outputs
from support.fake_openai import FakeOpenAI, Fault

runner = CliRunner()
AXES = [{"name": "Meaning preserved", "description": "Does the translation say what the source says?"},
        {"name": "Numbers & names", "description": "Are numbers and names carried over exactly?"},
        {"name": "Fluency", "description": "Does it read as natural Spanish?"}]


def _between(text: str, start: str, end: str) -> str:
    match = re.search(re.escape(start) + r"[^\n]*\n(.*?)\n\n" + re.escape(end), text, re.DOTALL)
    assert match, text
    return match.group(1)


def expected_score(output: str, reference: str) -> int:
    """The server's rule, written independently of the metric: 1 + 4 × word-set overlap, rounded."""
    out, ref = set(output.lower().split()), set(reference.lower().split())
    return 1 + round(4 * len(out & ref) / max(len(out | ref), 1))


def respond(body: dict[str, Any]) -> str:
    prompt = str(body["messages"][-1]["content"])
    if "axes of variation" in prompt:
        return "Here you go:\n```json\n" + json.dumps(AXES) + "\n```"
    if "generate a rubric" in prompt:
        name = re.search(r"^Metric title: (.*)$", prompt, re.MULTILINE).group(1)  # type: ignore[union-attr]
        return json.dumps({str(s): f"{name}: level {s}" for s in range(1, 6)})
    output = _between(prompt, "Translation to rate", "Rate the translation")
    reference = _between(prompt, "Reference translation", "Translation to rate")
    if "GARBAGE" in output:
        return "It is a fine translation, I would say."
    if "SIX" in output:
        return '{"score": 6, "explanation": "beyond the scale"}'
    return json.dumps({"score": expected_score(output, reference), "explanation": "overlap"})


EXAMPLES = [
    {"source": f"Sentence {i}.", "output": f"Salida {i}.", "reference": f"Referencia {i}.", "score": s}
    for i, s in enumerate([-0.0, -25.0, -1.0, -7.5, -0.5, -30.0, -3.0, -12.0])
]


def _generate(server: FakeOpenAI, tmp_path: Path, *extra: str) -> Any:
    examples = tmp_path / "examples.jsonl"
    examples.write_text("".join(json.dumps(r) + "\n" for r in EXAMPLES), encoding="utf-8")
    return runner.invoke(app, ["metrics", "generate-judges", "--task", "English to Spanish news",
                               "--examples", str(examples), "--model", "judge-m", "--base-url", server.base_url,
                               "-o", str(tmp_path / "judges"), "--criteria", "3", "--rubrics", "2",
                               "--per-side", "2", "--cache", str(tmp_path / "cache.sqlite"), *extra])


def test_generate_writes_valid_remote_ai_generated_cards_and_a_rerun_sends_nothing(tmp_path: Path) -> None:
    with FakeOpenAI(responder=respond) as server:
        result = _generate(server, tmp_path)
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 1 + 2  # the axes, then one rubric per rubric judge
        axes_prompt = server.requests[0].body["messages"][0]["content"]
        assert server.requests[0].body["temperature"] == 0.0
        good, bad = axes_prompt.split("Good examples")[1].split("Bad examples")
        # best by score: 0.0 (Salida 0) and -0.5 (Salida 4); worst: -30 (Salida 5) and -25 (Salida 1)
        assert "Salida 0." in good and "Salida 4." in good and "Salida 5." not in good
        assert "Salida 5." in bad and "Salida 1." in bad and "Salida 0." not in bad
        again = _generate(server, tmp_path)
        assert again.exit_code == 0 and len(server.requests) == 3  # every answer came from the cache
    files = sorted(p.name for p in (tmp_path / "judges").iterdir())
    assert files == ["judge_fluency.toml", "judge_meaning_preserved.toml", "judge_meaning_preserved_rubric.toml",
                     "judge_numbers_names.toml", "judge_numbers_names_rubric.toml"]
    for path in (tmp_path / "judges").iterdir():
        text = path.read_text(encoding="utf-8")
        card = parse_card(path.stem, text)  # the MetricBank's own validation
        assert card.egress == "remote" and "AI-generated" in card.sections["authors"]["ai_assistance"]
        judge = tomllib.loads(text)["judge"]
        assert judge["ai_generated"] is True and judge["model"] == "judge-m"
        assert len(judge["rubric"]) == (5 if path.stem.endswith("_rubric") else 0)
    rubric = tomllib.loads((tmp_path / "judges" / "judge_numbers_names_rubric.toml").read_text())["judge"]["rubric"]
    assert rubric[0] == "Numbers & names: level 1" and rubric[4] == "Numbers & names: level 5"
    assert "judge_numbers_names" in result.output


def _dataset(outputs: list[str], segment: str = "development") -> tuple[Dataset, list[Translation]]:
    refs = ["el gato duerme en la casa", "tres perros corren", "hoy llueve mucho", "la reunión es el lunes",
            "el tren sale a las cinco"]
    entries = [Entry(id=i + 1, source=f"source {i}", reference=r, segment=segment) for i, r in enumerate(refs)]
    ds = Dataset(info=DatasetInfo(id="j", source_language="en", target_language="es"), entries=entries,
                 sha256="0" * 64)
    return ds, [Translation(e.id, o) for e, o in zip(entries, outputs, strict=True)]


OUTPUTS = ["el gato duerme en la casa", "tres gatos corren", "GARBAGE", "", "SIX el tren"]


def _score(tmp_path: Path, server: FakeOpenAI, outputs: list[str] = OUTPUTS, segment: str = "development"):
    metrics = judge_metrics([tmp_path / "judges" / "judge_fluency.toml",
                             tmp_path / "judges" / "judge_meaning_preserved_rubric.toml"],
                            cache_path=str(tmp_path / "cache.sqlite"), base_url=server.base_url)
    for m in metrics:
        m.retry = RetryPolicy(base_delay=0.01)
    ds, translations = _dataset(outputs, segment)
    table, _ = score_outputs(ds, translations, language_card("es"), language_card("en"),
                             only=[m.id for m in metrics], opt_in=metrics)
    return metrics, table


def test_judges_score_under_the_protocol_count_malformed_answers_and_are_cached(tmp_path: Path) -> None:
    with FakeOpenAI(responder=respond) as server:
        assert _generate(server, tmp_path).exit_code == 0
        before = len(server.requests)
        metrics, table = _score(tmp_path, server)
        assert set(table.metrics) == {"judge_fluency", "judge_meaning_preserved_rubric"}
        refs = [e.reference for e in table.entries]
        for m in metrics:
            values = table.entry_values(m.id)
            assert values is not None
            want_0 = (expected_score(OUTPUTS[0], refs[0]) - 1) / 4
            want_1 = (expected_score(OUTPUTS[1], refs[1]) - 1) / 4
            assert values[0] == want_0 == 1.0 and values[1] == pytest.approx(want_1) and 0 < want_1 < 1
            assert np.isnan(values[2]) and np.isnan(values[4])  # unreadable (prose; 6 of 5): not scored
            assert values[3] == 0.0  # an empty output is the worst translation, asked of no one
            assert m.counts.malformed == 2 and m.counts.sent == 4  # the empty output is never sent
            assert table.values()[m.id] == pytest.approx((want_0 + want_1) / 3)  # mean over judged entries
            assert m.signature(language_card("es")).startswith("judge-1|kind:")
        sent = len(server.requests) - before
        assert sent == 8 and all(r.body["temperature"] == 0.0 for r in server.requests[before:])
        metrics2, table2 = _score(tmp_path, server)
        # readable answers came from the cache; the two unreadable ones were asked again (never cached)
        assert len(server.requests) - before - sent == 4
        assert all(m.counts.cached == 2 and m.counts.malformed == 2 for m in metrics2)
        for m in metrics:
            np.testing.assert_array_equal(table.stats[m.id], table2.stats[m.id])


def test_429_and_500_are_retried_and_secret_entries_are_refused(tmp_path: Path) -> None:
    with FakeOpenAI(responder=respond) as server:
        assert _generate(server, tmp_path).exit_code == 0
        before = len(server.requests)
        server.inject(Fault(status=429, retry_after="0"), Fault(status=500), Fault(status=503))
        outputs = ["el gato", "tres perros corren", "hoy llueve", "la reunión", "el tren sale"]
        metrics, table = _score(tmp_path, server, outputs)
        assert len(server.requests) - before == 10 + 3  # every fault retried, each answer once
        assert all(m.counts.malformed == 0 for m in metrics)
        assert not np.isnan(table.entry_values("judge_fluency")).any()  # type: ignore[union-attr]
        with pytest.raises(UserError, match=r"5 secret .* judge_fluency, judge_meaning_preserved_rubric"):
            _score(tmp_path, server, outputs, segment="held_out")
        assert len(server.requests) - before == 13  # nothing was sent for the secret entries


@pytest.mark.parametrize(("reply", "ok"), [
    ('{"score": 4, "explanation": "x"}', 4), ("```json\n{\"score\": \"2\"}\n```", 2), ('{"score": 5.0}', 5),
    ('{"score": 0}', None), ('{"score": 3.5}', None), ('{"score": true}', None), ("four", None), ("[]", None),
])
def test_parse_score_accepts_integers_1_to_5_only(reply: str, ok: int | None) -> None:
    if ok is None:
        with pytest.raises(JudgeAnswerError):
            parse_score(reply)
    else:
        assert parse_score(reply)[0] == ok


def test_bad_generation_answers_and_forged_cards_are_one_line(tmp_path: Path) -> None:
    with FakeOpenAI(responder=lambda body: "I cannot help with that.") as server:
        result = _generate(server, tmp_path)
    assert result.exit_code == 2 and "did not answer with a JSON list" in result.output
    assert "Traceback" not in result.output
    with FakeOpenAI(responder=respond) as server:
        assert _generate(server, tmp_path).exit_code == 0
    card = tmp_path / "judges" / "judge_fluency.toml"
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace('egress = "remote"', 'egress = "local"'), encoding="utf-8")
    with pytest.raises(UserError, match='must say egress = "remote"'):
        judge_metrics([card])
    card.write_text(text.replace("ai_generated = true", "ai_generated = false"), encoding="utf-8")
    with pytest.raises(UserError, match="not a generated judge card"):
        judge_metrics([card])
    card.write_text(text.replace('kind = "single"', 'kind = "rubric"'), encoding="utf-8")
    with pytest.raises(UserError, match="exactly five levels"):
        judge_metrics([card])
    with pytest.raises(UserError, match="no such judge card"):
        judge_metrics([tmp_path / "nope.toml"])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"output": "x", "score": "high"}\n{"output": "y", "score": 1}\n', encoding="utf-8")
    result = runner.invoke(app, ["metrics", "generate-judges", "--task", "t", "--examples", str(bad), "--model",
                                 "m", "--base-url", "http://127.0.0.1:9/v1", "-o", str(tmp_path / "o")])
    assert result.exit_code == 2 and "score 'high' is not a number" in result.output

"""The semantic judge against the real local OpenAI-compatible server, with the shared response cache."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from qa_helpers import write_jsonl
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.providers import Endpoint, OpenAICompatClient, ProviderError, RetryPolicy
from mt_eval.providers.cache import DEFAULT_CACHE, ResponseCache
from mt_eval.qa.judge import (
    JudgeItem,
    JudgeParseError,
    Judgment,
    SemanticJudge,
    build_prompt,
    parse_judgment,
)
from mt_eval.qa.run import JudgeConfig
from support.fake_openai import FakeOpenAI, Fault

FAST = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)


def test_prompt_is_the_specs_plus_a_json_instruction() -> None:
    prompt = build_prompt("世贸双塔建造用时多长", ["11.0 年份", "11年"], "大约11年左右")
    assert prompt.startswith(
        "Question: 世贸双塔建造用时多长\nGold Answer: 11.0 年份 | 11年\nPredicted Answer: 大约11年左右\n\n"
        "Rate semantic equivalence from 0.0 to 1.0.\nConsider:\n"
        "- Same meaning in different wording → high score\n"
        "- Different units but same value → high score\n"
        "- Missing key info → lower score\n"
        "- Contradicts gold answer → near 0\n"
    )
    assert prompt.endswith('{"score": <number from 0.0 to 1.0>, "explanation": "<one sentence>"}')


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"score": 0.94, "explanation": "same"}', (0.94, "same")),
        ('```json\n{"score": 1, "explanation": "x"}\n```', (1.0, "x")),
        ('Sure! {"score": "0.5", "explanation": "partly"} Hope this helps.', (0.5, "partly")),
        ('{"score": 0}', (0.0, "")),
    ],
)
def test_parse_judgment(content: str, expected: tuple[float, str]) -> None:
    assert parse_judgment(content) == expected


@pytest.mark.parametrize("content", ["looks right to me", '{"score": 1.5}', '{"score": "high"}', '{"note": 1}'])
def test_parse_judgment_rejects(content: str) -> None:
    with pytest.raises(JudgeParseError):
        parse_judgment(content)


def _judge_all(
    server: FakeOpenAI, items: list[JudgeItem], cache: ResponseCache | None, temperature: float = 0.0
) -> list[Judgment | JudgeParseError]:
    async def go() -> list[Judgment | JudgeParseError]:
        async with OpenAICompatClient(Endpoint(server.base_url), retry=FAST, concurrency=4) as client:
            judge = SemanticJudge(client, "judge/model", temperature=temperature, cache=cache)
            return await judge.judge_many(items)

    return asyncio.run(go())


ITEMS = [
    JudgeItem("Capital?", ("Paris",), "paris"),
    JudgeItem("Who?", ("Denver Broncos",), "Broncos"),
    JudgeItem("Who?", ("Denver Broncos",), "Carolina Panthers"),
    JudgeItem("Who?", ("Denver Broncos",), "GARBAGE"),
    JudgeItem("Who?", ("Denver Broncos",), "  "),
    JudgeItem("Capital?", ("Paris",), "paris"),  # a duplicate: asked once
]


def _key(base_url: str, model: str, item: JudgeItem) -> str:
    judge = SemanticJudge(OpenAICompatClient(Endpoint(base_url)), model)
    return judge.cache_key(judge.request(item))


def test_judge_scores_caches_and_never_caches_errors(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "judge.sqlite")
    with FakeOpenAI() as server:
        first = _judge_all(server, ITEMS, cache)
        assert len(server.requests) == 4  # not the empty answer, not the duplicate
        assert server.requests[0].body["temperature"] == 0.0
        scores = [r.score if isinstance(r, Judgment) else r for r in first]
        assert scores[:3] == [1.0, 0.5, 0.0] and scores[5] == 1.0
        assert isinstance(scores[3], JudgeParseError)
        assert first[4] == Judgment(0.0, "empty prediction")
        assert len(cache) == 3  # the unparsable reply was not cached

        second = _judge_all(server, ITEMS, cache)
        assert len(server.requests) == 5  # only the unparsable one is asked again
        assert all(r.cached for r in second[:3] if isinstance(r, Judgment))

        _judge_all(server, ITEMS[:1], cache, temperature=0.7)  # temperature is part of the key
        assert len(server.requests) == 6
    cache.close()

    reopened = ResponseCache(tmp_path / "judge.sqlite")  # persists across runs: the raw reply is stored
    hit = reopened.get(_key(server.base_url, "judge/model", ITEMS[0]))
    assert hit is not None and parse_judgment(hit.content) == (1.0, "identical")
    assert reopened.get(_key(server.base_url, "other/model", ITEMS[0])) is None
    assert reopened.get(_key("http://elsewhere/v1", "judge/model", ITEMS[0])) is None  # endpoint is keyed
    reopened.close()


def test_judge_shares_the_llm_methods_cache() -> None:
    """One response cache: the judge's default file is the LLM methods' one, its keys kept apart by kind."""
    assert JudgeConfig(model="m").cache_path == DEFAULT_CACHE


def test_provider_failure_stops_the_run_and_caches_nothing(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "judge.sqlite")
    with FakeOpenAI() as server:
        server.inject(Fault(status=500), Fault(status=500))
        with pytest.raises(ProviderError, match="giving up after 2 attempts"):
            _judge_all(server, ITEMS[:1], cache)
    assert len(cache) == 0
    cache.close()


def test_unwritable_cache_is_a_user_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(UserError, match="cannot open the response cache"):
        ResponseCache(blocker / "judge.sqlite")


GOLD = [
    {"id": "q1", "question": "世贸双塔建造用时多长", "answers": ["11年"], "lang": "zh"},
    {"id": "q2", "question": "珠峰多高", "answers": ["8848米"], "lang": "zh"},
    {"id": "q3", "question": "首都", "answers": ["北京"], "lang": "zh"},
]


def test_compare_with_judge_reports_semantic_score(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    direct = write_jsonl(tmp_path / "direct.jsonl", [
        {"id": "q1", "prediction": "11年"}, {"id": "q2", "prediction": "GARBAGE"}, {"id": "q3", "prediction": "上海"},
    ])  # fmt: skip
    rag = write_jsonl(tmp_path / "rag.jsonl", [
        {"id": "q1", "prediction": "11年"}, {"id": "q2", "prediction": "8848"}, {"id": "q3", "prediction": "北京"},
    ])  # fmt: skip
    out = tmp_path / "metrics.json"
    cache = tmp_path / "cache" / "judge.sqlite"
    with FakeOpenAI(api_key="sk-local") as server:
        args = ["compare", "--gold", str(gold), "--baseline", "direct", f"direct={direct}", f"rag={rag}",
                "--judge-model", "judge/model", "--judge-base-url", server.base_url,
                "--judge-api-key-env", "FAKE_JUDGE_KEY", "--judge-cache", str(cache), "--out", str(out),
                "--spec-block"]  # fmt: skip
        result = CliRunner().invoke(app, ["qa", *args], env={"FAKE_JUDGE_KEY": "sk-local"})
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 5  # q1 "11年" is the same answer in both systems: asked once
        assert all(r.headers["Authorization"] == "Bearer sk-local" for r in server.requests)

        again = CliRunner().invoke(app, ["qa", *args], env={"FAKE_JUDGE_KEY": "sk-local"})
        assert again.exit_code == 0, again.output
        assert len(server.requests) == 6  # everything cached except the unparsable reply
    assert "sk-local" not in result.output and "sk-local" not in out.read_text("utf-8")

    lines = result.stdout.splitlines()
    assert lines[3].endswith("| Sem=0.500±0.500")  # direct: 1.0 and 0.0; q2 unusable, left out
    assert lines[4].endswith("| Sem=0.833±0.236")  # rag: 1.0, 0.5, 1.0
    assert "direct: the judge's reply was unusable for 1 samples" in result.stderr
    doc = json.loads(out.read_text("utf-8"))
    assert list(doc["metrics"]["rag"])[-3:] == ["semantic_score", "semantic_score_std", "n"]
    assert doc["coverage"]["direct"]["semantic_errors"] == 1
    assert doc["config"]["judge"] == {"model": "judge/model", "base_url": server.base_url, "temperature": 0.0}
    assert "semantic_score" in doc["paired_tests"]["systems"]["rag"]
    assert doc["confidence_intervals"]["direct"]["semantic_score"]["point"] == pytest.approx(0.5)
    card = json.loads((tmp_path / "qa_card.json").read_text("utf-8"))  # judged scores on the card, verified
    assert [r["semantic_score"] for r in card["systems"]["direct"]["samples"]] == [1.0, None, 0.0]
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "qa_card.json")]).exit_code == 0
    card["systems"]["rag"]["samples"][1]["semantic_score"] = 1.0  # an edited judgment changes the results
    (tmp_path / "edited.json").write_text(json.dumps(card), "utf-8")
    edited = CliRunner().invoke(app, ["verify", str(tmp_path / "edited.json")])
    assert edited.exit_code == 1 and "results.metrics.rag.semantic_score:" in " ".join(edited.output.split())


def test_rejected_key_is_one_line_exit_2(tmp_path: Path) -> None:
    gold = write_jsonl(tmp_path / "gold.jsonl", GOLD)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"id": "q1", "prediction": "11年"}])
    with FakeOpenAI(api_key="right") as server:
        result = CliRunner().invoke(app, ["qa",
            "score", "--gold", str(gold), "--predictions", str(preds), "--judge-model", "m",
            "--judge-base-url", server.base_url, "--judge-api-key-env", "K", "--judge-cache", "",
        ], env={"K": "wrong-secret"})  # fmt: skip
        assert len(server.requests) == 1  # 401 is not retried
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and "HTTP 401: invalid API key" in result.stderr
    assert "wrong-secret" not in result.output and "Traceback" not in result.output

"""``translate`` with an LLM method against the real local OpenAI-protocol server: the same prompts give the
outputs the card holds, and a different prompt file is another method hash, refused against the card."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.api.translate import card_method_hash
from mt_eval.cli import app
from support.llm_fake import FakeOpenAI, Translator
from support.llm_helpers import make_dataset, write_text_pair

N = 6


def test_translate_llm_card_outputs_and_prompt_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-translate")
    src, ref = write_text_pair(tmp_path, N)
    translator = Translator()
    translator.register([(e.id, e.source) for e in make_dataset(N).entries])
    runner = CliRunner()
    with FakeOpenAI(responder=translator) as server:
        llm = ["--model", "test/model", "--base-url", server.base_url, "--api-key-env", "FAKE_LLM_KEY",
               "--no-cache", "--batch-size", "1", "--concurrency", "2"]
        card_path = tmp_path / "card.json"
        made = runner.invoke(app, ["run", "--source-file", str(src), "--reference-file", str(ref), "-l", "en-es",
                                   "--method", "llm", *llm, "--runs-dir", str(tmp_path / "runs"), "--bootstrap", "0",
                                   "--no-semantic", "-o", str(card_path)])
        assert made.exit_code == 0, made.output
        card = json.loads(card_path.read_text(encoding="utf-8"))
        asked = len(server.requests)

        out = tmp_path / "out.txt"
        got = runner.invoke(app, ["translate", "--card", str(card_path), "--api-key-env", "FAKE_LLM_KEY",
                                  str(src), "-o", str(out)])
        assert got.exit_code == 0, got.output
        assert out.read_text(encoding="utf-8").splitlines() == [r["predicted"] for r in card["results"]]
        assert len(server.requests) == asked + N  # nothing came from a cache: every segment was asked again
        provenance = json.loads((tmp_path / "out.txt.provenance.json").read_text(encoding="utf-8"))
        assert provenance["method_hash"] == card_method_hash(card)

        prompt = tmp_path / "prompt.txt"
        prompt.write_text("Translate {source_language} to {target_language}. Add a friendly greeting.\n",
                          encoding="utf-8")
        refused = runner.invoke(app, ["translate", "--card", str(card_path), "--method", "llm", *llm,
                                      "--system-prompt", str(prompt), str(src), "-o", str(tmp_path / "o2.txt")])
        assert refused.exit_code == 2 and "not the card's" in refused.output and "system prompt" in refused.output
        assert len(server.requests) == asked + N  # refused before any request

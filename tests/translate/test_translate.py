"""Deploy what was measured (issue 25 item 3): ``translate`` and ``serve-method`` give the outputs the card of the
same method over the same sources holds, name the card's method hash, and refuse another method or an oversized
request. Real Apertium eng-spa, a real card from ``mt-eval run``, uvicorn on a real socket."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from typer.testing import CliRunner

from mt_eval.api.translate import card_method_hash, method_hash
from mt_eval.cli import app
from mt_eval.methods.base import MethodClass, MethodIdentity
from mt_eval.methods.registry import build_method
from mt_eval.web.method_server import Limits, create_method_app

CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
IDS = "1-6"


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """The sealed card of apertium:eng-spa over six NTREX entries, as ``mt-eval run`` writes it."""
    tmp = tmp_path_factory.mktemp("card")
    out = tmp / "card.json"
    got = CliRunner().invoke(app, ["run", "-c", str(CORPUS), "--ids", IDS, "--method", "apertium:eng-spa",
                                   "--no-semantic", "--bootstrap", "50", "--runs-dir", str(tmp / "runs"),
                                   "-o", str(out)])
    assert got.exit_code == 0, got.output
    return out, json.loads(out.read_text(encoding="utf-8"))


def _card_outputs(card: dict[str, Any]) -> list[str]:
    return [r["predicted"] for r in card["results"]]


def test_translate_corpus_with_card_matches_the_cards_outputs(card: tuple[Path, dict[str, Any]],
                                                             tmp_path: Path) -> None:
    path, sealed = card
    out = tmp_path / "out.jsonl"
    got = CliRunner().invoke(app, ["translate", "--card", str(path), str(CORPUS), "--ids", IDS, "-o", str(out)])
    assert got.exit_code == 0, got.output
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [r["id"] for r in rows] == [r["entry_id"] for r in sealed["results"]]
    assert [r["translation"] for r in rows] == _card_outputs(sealed)
    provenance = json.loads((tmp_path / "out.jsonl.provenance.json").read_text(encoding="utf-8"))
    assert provenance["method_hash"] == card_method_hash(sealed)
    assert provenance["run_card_hash"] == sealed["run_card_hash"]
    assert provenance["harness_version"] == sealed["harness_version"]


def test_translate_plain_text_with_method_matches_the_card(card: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    """The same sources as a text file, the method by its spec: the same lines, the same method hash."""
    _, sealed = card
    src = tmp_path / "src.txt"
    src.write_text("".join(r["source"] + "\n" for r in sealed["results"]), encoding="utf-8")
    out = tmp_path / "out.txt"
    got = CliRunner().invoke(app, ["translate", "--method", "apertium:eng-spa", "-l", "en-es", str(src),
                                   "-o", str(out)])
    assert got.exit_code == 0, got.output
    assert out.read_text(encoding="utf-8").splitlines() == [t.replace("\n", " ") for t in _card_outputs(sealed)]
    provenance = json.loads((tmp_path / "out.txt.provenance.json").read_text(encoding="utf-8"))
    assert provenance["method_hash"] == card_method_hash(sealed)
    assert provenance["input_sha256"] == hashlib.sha256(src.read_bytes()).hexdigest()


def test_translate_card_refuses_another_method(card: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    path, _ = card
    got = CliRunner().invoke(app, ["translate", "--card", str(path), "--method", "apertium:eng-cat", str(CORPUS),
                                   "--ids", IDS, "-o", str(tmp_path / "o.jsonl")])
    assert got.exit_code == 2
    assert "not the card's" in got.output and "method hash" in got.output
    assert not (tmp_path / "o.jsonl").exists()


def test_translate_card_refuses_a_card_whose_method_record_was_edited(card: tuple[Path, dict[str, Any]],
                                                                    tmp_path: Path) -> None:
    """A card claiming another configuration (here: another engine version) is not what this machine runs."""
    _, sealed = card
    edited = json.loads(json.dumps(sealed))
    edited["method"]["config_sha256"] = "0" * 64
    other = tmp_path / "edited.json"
    other.write_text(json.dumps(edited), encoding="utf-8")
    got = CliRunner().invoke(app, ["translate", "--card", str(other), "--method", "apertium:eng-spa", str(CORPUS),
                                   "--ids", IDS])
    assert got.exit_code == 2 and "config differ" in got.output


def test_method_hash_separates_what_a_card_separates() -> None:
    base = MethodIdentity(name="llm", method_class=MethodClass.RAW_LLM, version="1", model_slug="m",
                          config={"temperature": 0.0}, system_prompt="Translate.")
    variants = [MethodIdentity(**{**base.__dict__, **change}) for change in (
        {"config": {"temperature": 0.7}}, {"system_prompt": "Translate. Ignore the source."},
        {"model_slug": "m2"}, {"version": "2"}, {"coaching": "glossary"}, {"provider": "openai"})]
    hashes = {method_hash(base), *(method_hash(v) for v in variants)}
    assert len(hashes) == 1 + len(variants)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def served(card: tuple[Path, dict[str, Any]]) -> Iterator[str]:
    _, sealed = card
    method = build_method("apertium:eng-spa", dataset=None)  # type: ignore[arg-type]
    app_ = create_method_app(method, source_lang="en", target_lang="es", card_hash=sealed["run_card_hash"],
                             limits=Limits(max_body_bytes=20_000, max_segments=8))
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app_, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


def test_serve_method_answers_the_cards_outputs_over_http(card: tuple[Path, dict[str, Any]], served: str) -> None:
    _, sealed = card
    sources = [r["source"] for r in sealed["results"]]
    answer = httpx.post(f"{served}/translate", json={"segments": sources}, timeout=60)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["translations"] == _card_outputs(sealed)
    assert body["method_hash"] == card_method_hash(sealed) and body["run_card_hash"] == sealed["run_card_hash"]
    described = httpx.get(f"{served}/method", timeout=10).json()
    assert described["method_hash"] == card_method_hash(sealed) and described["name"] == "apertium:eng-spa"


@pytest.mark.parametrize(("payload", "status", "reason"), [
    ({"segments": ["a"] * 9}, 413, "at most 8 per request"),
    ({"segments": ["x" * 15_000]}, 413, "at most"),
    ({"segments": "not a list"}, 422, "list of strings"),
    ({"segments": []}, 422, "empty"),
])
def test_serve_method_refuses_bad_requests_with_one_line(served: str, payload: dict[str, Any], status: int,
                                                        reason: str) -> None:
    answer = httpx.post(f"{served}/translate", json=payload, timeout=10)
    assert answer.status_code == status and reason in answer.json()["error"]
    assert "\n" not in answer.json()["error"] and answer.json()["method_hash"]


def test_serve_method_refuses_an_oversized_body_before_reading_it(served: str) -> None:
    answer = httpx.post(f"{served}/translate", content=b'{"segments": ["' + b"y" * 30_000 + b'"]}',
                        headers={"content-type": "application/json"}, timeout=10)
    assert answer.status_code == 413 and "over 20000 bytes" in answer.json()["error"]


def test_serve_method_command_with_card_names_the_cards_hashes(card: tuple[Path, dict[str, Any]]) -> None:
    """The command itself (a real process): --card rebuilds the card's method, -l comes from the card."""
    path, sealed = card
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "mt_eval", "serve-method", "--card", str(path), "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        described: dict[str, Any] = {}
        for _ in range(300):
            try:
                described = httpx.get(f"http://127.0.0.1:{port}/method", timeout=2).json()
                break
            except httpx.TransportError:
                assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
                time.sleep(0.1)
        assert described["method_hash"] == card_method_hash(sealed)
        assert described["run_card_hash"] == sealed["run_card_hash"]
        assert (described["source_language"], described["target_language"]) == ("en", "es")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_method_with_a_token_refuses_requests_without_it() -> None:
    """A served method may spend a paid provider's budget: with a token, nothing answers without it."""
    from fastapi.testclient import TestClient

    method = build_method("apertium:eng-spa", dataset=None)  # type: ignore[arg-type]
    token = "s3cret-token-0123456789abcdef"
    client = TestClient(create_method_app(method, source_lang="en", target_lang="es", token=token))
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789abcd"}, {"Authorization": token},
                    {"Authorization": f"Basic {token}"}):
        for answer in (client.post("/translate", json={"segments": ["Hello."]}, headers=headers),
                       client.get("/method", headers=headers)):
            assert answer.status_code == 401, (headers, answer.text)
            assert answer.headers["www-authenticate"] == "Bearer" and "token" in answer.json()["error"]
            assert answer.json()["method_hash"] and "translations" not in answer.json()
    ok = client.post("/translate", json={"segments": ["Hello."]}, headers={"Authorization": f"Bearer {token}"})
    assert ok.status_code == 200 and ok.json()["translations"][0]


@pytest.mark.parametrize(("host", "env", "message"), [
    ("0.0.0.0", {}, "--token-env"),
    ("192.168.1.5", {"MT_EVAL_METHOD_TOKEN": ""}, "--token-env"),
    ("0.0.0.0", {"MT_EVAL_METHOD_TOKEN": "short"}, "at least 16"),
])
def test_serve_method_command_refuses_a_public_address_without_a_token(host: str, env: dict[str, str], message: str,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from typer.testing import CliRunner

    from mt_eval.cli import app as cli_app

    for name, value in env.items():
        monkeypatch.setenv(name, value)
    extra = ["--token-env", "MT_EVAL_METHOD_TOKEN"] if env else []
    result = CliRunner().invoke(cli_app, ["serve-method", "--method", "apertium:eng-spa", "-l", "en-es",
                                          "--host", host, "--port", "1", *extra])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output

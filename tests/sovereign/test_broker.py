"""The LLM egress broker against the test suite's real OpenAI-protocol server (tests/support/fake_openai.py)
standing in for the governance-configured provider, with a bundle that calls it from inside the sandbox.

References: what the server itself recorded (paths, models, Authorization headers) and the usage it
answers with, recomputed here from the recorded request bodies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mt_eval.errors import UserError
from mt_eval.sovereign.broker import BrokerConfig, egress_config
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.runner import execute, score
from mt_eval.sovereign.sandbox import new_workdir
from support.fake_openai import FakeOpenAI
from support.sovereign import TINY, small_dataset

KEY = "gov-secret-key-123"
ATTACKS = {2: "other_model", 3: "other_provider", 4: "other_route", 5: "own_key", 6: "extra_fields"}
BUDGET = 400


@pytest.fixture(scope="module")
def gateway_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    import shutil

    bundle_dir = tmp_path_factory.mktemp("gw") / "gateway"
    shutil.copytree(Path(__file__).parent / "bundles" / "gateway", bundle_dir)
    (bundle_dir / "attacks.json").write_text(json.dumps(ATTACKS))
    dataset = small_dataset(14)
    with FakeOpenAI(api_key=KEY) as server:
        config = BrokerConfig(server.base_url, KEY, ("test/translator",), max_tokens=BUDGET)  # the policy's models
        bundle = load_bundle(bundle_dir)
        translations, report = execute(bundle, dataset, TINY, new_workdir() / "s", config)
        recorded = list(server.requests)
    return {"texts": {t.entry_id: t.text for t in translations}, "report": report, "recorded": recorded,
            "dataset": dataset, "card": score(dataset, bundle, translations, report, TINY, "test")}


def test_only_declared_models_on_the_one_route_with_the_governance_key(gateway_run: dict) -> None:
    recorded = gateway_run["recorded"]
    assert recorded, "some requests were forwarded"
    assert {r.path for r in recorded} == {"/v1/chat/completions"}
    assert {r.body["model"] for r in recorded} == {"test/translator"}
    assert {r.headers["Authorization"] for r in recorded} == {f"Bearer {KEY}"}  # own_key's header was dropped
    texts = gateway_run["texts"]
    assert texts[2] == texts[3] == "REFUSED:403:undeclared_model"
    assert texts[4] == "REFUSED:403:route"
    assert texts[5].startswith("echo: ")  # answered, with the governance key, not the method's
    assert texts[6] == "REFUSED:403:field"  # provider/plugins/route: refused, never forwarded
    assert not any(set(r.body) & {"provider", "plugins", "route"} for r in recorded)


def test_the_method_never_sees_the_key(gateway_run: dict) -> None:
    assert not any(KEY in text for text in gateway_run["texts"].values())
    assert KEY.encode() not in gateway_run["report"].stderr


def test_counts_match_what_the_provider_recorded(gateway_run: dict) -> None:
    egress = gateway_run["report"].egress
    recorded = gateway_run["recorded"]
    prompt = sum(len(str(m["content"]).split()) for r in recorded for m in r.body["messages"])
    completion = sum(len(("echo: " + str(r.body["messages"][-1]["content"])).split()) for r in recorded)
    assert egress["mode"] == "gateway" and egress["forwarded"] == len(recorded)
    assert (egress["prompt_tokens"], egress["completion_tokens"]) == (prompt, completion)
    assert egress["requests"] == 14 and egress["refused"]["undeclared_model"] == 2 and egress["refused"]["field"] == 1
    assert egress["bytes_out"] > 0 and egress["bytes_in"] > 0
    assert KEY not in json.dumps(egress)


def test_usage_and_requests_are_on_the_card(gateway_run: dict) -> None:
    card, egress = gateway_run["card"], gateway_run["report"].egress
    assert card["tokens"]["prompt_tokens"] == egress["prompt_tokens"]
    assert card["tokens"]["completion_tokens"] == egress["completion_tokens"]
    assert card["cost"]["source"] == "provider" and card["cost"]["total_cost_usd"] == pytest.approx(egress["cost_usd"])
    assert [r.get("attempts") for r in card["results"]] == [1] * 14  # one request per entry, refused ones too
    assert card["method"]["config"]["egress"] == "gateway"


def test_the_budget_stops_forwarding_and_is_named(gateway_run: dict) -> None:
    egress, texts = gateway_run["report"].egress, gateway_run["texts"]
    used_before_last = egress["prompt_tokens"] + egress["completion_tokens"]
    assert used_before_last >= BUDGET  # the budget was reached ...
    exhausted = [i for i, t in texts.items() if t == "REFUSED:403:budget_exhausted"]
    assert exhausted and max(texts) in exhausted  # ... and every later request refused
    errors = gateway_run["report"].errors()
    assert errors["budget_exhausted"] == len(exhausted) and errors["refused_egress"] == 4


def test_a_gateway_bundle_without_a_configured_provider_is_refused(make_bundle, tmp_path: Path) -> None:
    bundle = load_bundle(make_bundle("gateway", {"attacks.json": {}}))
    with pytest.raises(UserError, match="no provider is configured"):
        execute(bundle, small_dataset(1), TINY, tmp_path / "s")


def test_the_key_variable_must_be_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MT_EVAL_TEST_KEY", raising=False)
    with pytest.raises(UserError, match="MT_EVAL_TEST_KEY is not set"):
        egress_config("http://127.0.0.1:1/v1", "MT_EVAL_TEST_KEY", 10, 1.0)
    monkeypatch.setenv("MT_EVAL_TEST_KEY", "sk-zzz")
    config = egress_config("http://127.0.0.1:1/v1", "MT_EVAL_TEST_KEY", 10, 1.0)
    assert config is not None and config.api_key == "sk-zzz" and "sk-zzz" not in json.dumps(config.as_card())
    assert egress_config(None, None, 10, 1.0) is None


def test_concurrent_and_oversized_requests_cannot_overshoot_the_budget(tmp_path: Path) -> None:
    """Requests are checked and forwarded one at a time (all 8 sent at once pass through a single slot) and
    each asks for at most what the budget has left, one choice: whatever a method sends, the provider never
    sees a request that could spend more than the remaining budget."""
    import threading

    import httpx

    from mt_eval.sovereign.broker import ROUTE, Broker

    budget = 50
    with FakeOpenAI(api_key=KEY, base_delay=0.05) as server:
        config = BrokerConfig(server.base_url, KEY, ("m",), max_tokens=budget)
        with Broker(config, tmp_path / "broker.sock") as broker:
            def ask() -> None:
                with httpx.Client(transport=httpx.HTTPTransport(uds=str(broker.socket_path)), timeout=10) as c:
                    c.post("http://broker" + ROUTE, json={"model": "m", "n": 5, "max_tokens": 100_000,
                                                          "messages": [{"role": "user", "content": "a b c d e"}]})

            threads = [threading.Thread(target=ask) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        recorded = list(server.requests)
        assert server.max_in_flight == 1
    assert recorded and all(r.body["n"] == 1 and r.body["max_tokens"] <= budget for r in recorded)

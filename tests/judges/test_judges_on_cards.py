"""Generated judges on run cards (``run``/``score``/``verify --judge``), against the real local OpenAI-protocol
server: the card carries what the server answered, verify refuses without the same judge card (exit 2, one
line naming the judge) and with it recomputes from the response cache (the server sees no new request); a
changed judge card, a tampered judge value and secret segments are refused."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.metrics.judges import JudgeSpec, card_sha256
from mt_eval.metrics.judges.cards import write_cards
from mt_eval.runcard.layout import dumps
from mt_eval.runcard.seal import card_hash
from support.fake_openai import FakeOpenAI

runner = CliRunner()
CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
JUDGE = "judge_meaning_kept"


def answer(body: dict[str, Any]) -> str:
    """The server's rule, known to the test: the reference itself gets 5, an output with MAL 1, anything else 4."""
    prompt = str(body["messages"][-1]["content"])
    ref = re.search(r"Reference translation[^\n]*\n(.*?)\n\nTranslation to rate", prompt, re.DOTALL)
    out = re.search(r"Translation to rate[^\n]*\n(.*?)\n\nRate the translation", prompt, re.DOTALL)
    assert ref and out, prompt
    score = 5 if out.group(1) == ref.group(1) else 1 if "MAL" in out.group(1) else 4
    return json.dumps({"score": score, "explanation": "rule"})


def expected(output: str, reference: str) -> float:
    return (5 - 1) / 4 if output == reference else 0.0 if "MAL" in output else (4 - 1) / 4


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("judge-cards")
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"][:6]
    outputs = [e["reference"] if i % 3 == 0 else "MAL " + e["reference"][:20] if i % 3 == 1
               else " ".join(e["reference"].split()[1:]) for i, e in enumerate(entries)]
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    (tmp / "corpus.json").write_text(json.dumps({**data, "entries": entries}, ensure_ascii=False), encoding="utf-8")
    hyp = tmp / "hyp.jsonl"
    hyp.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": o}, ensure_ascii=False) + "\n"
                           for e, o in zip(entries, outputs, strict=True)), encoding="utf-8")
    with FakeOpenAI(responder=answer) as server:
        spec = JudgeSpec(id=JUDGE, kind="single", criterion="Meaning kept", description="Is the meaning kept?",
                         task="English to Spanish news", model="judge-m", base_url=server.base_url)
        [judge] = write_cards([spec], tmp / "judges", "tests")
        common = ["-c", str(tmp / "corpus.json"), "-b", "20", "--runs-dir", str(tmp / "runs"),
                  "--judge", str(judge), "--judge-cache", str(tmp / "cache.sqlite")]
        scored = runner.invoke(app, ["score", "-p", str(hyp), "-o", str(tmp / "score.json"), *common])
        assert scored.exit_code == 0, scored.output
        after_score = len(server.requests)
        ran = runner.invoke(app, ["run", "--method", f"predictions:{hyp}", "-o", str(tmp / "run.json"), *common])
        assert ran.exit_code == 0, ran.output
        yield {"dir": tmp, "server": server, "judge": judge, "outputs": outputs, "entries": entries,
               "after_score": after_score, "after_run": len(server.requests), "cache": tmp / "cache.sqlite"}


def _card(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["score.json", "run.json"])
def test_the_card_carries_what_the_judge_answered(setup: dict[str, Any], name: str) -> None:
    card = _card(setup["dir"] / name)
    want = [expected(o, e["reference"]) for o, e in zip(setup["outputs"], setup["entries"], strict=True)]
    assert sorted(set(want)) == [0.0, 0.75, 1.0]  # good, bad and middling outputs
    assert [r["metrics"][JUDGE] for r in card["results"]] == want
    assert card["scores"][JUDGE] == pytest.approx(sum(want) / len(want))
    assert "ci_lower" in card["scores"]["confidence_intervals"][JUDGE]
    block = card["judges"][JUDGE]
    assert block == {"sha256": card_sha256(setup["judge"].read_text(encoding="utf-8")), "kind": "single",
                     "model": "judge-m", "base_url": setup["server"].base_url}
    assert card["fingerprint"]["components"]["judges"] == {JUDGE: block["sha256"]}
    assert "composite" in card["scores"] and card["metrics"][JUDGE]["weight"] is None  # never in profile A/B
    assert "api_key" not in json.dumps(card["judges"])
    # one request per distinct (source, output, reference) in score; run asked nothing new (the cache)
    assert setup["after_score"] == 6 and setup["after_run"] == 6


def test_verify_refuses_without_the_judge_card_and_passes_with_it_sending_nothing(setup: dict[str, Any]) -> None:
    card, server = setup["dir"] / "score.json", setup["server"]
    before = len(server.requests)
    refused = runner.invoke(app, ["verify", str(card)])
    assert refused.exit_code == 2, refused.output
    assert len(refused.output.strip().splitlines()) == 1 and JUDGE in refused.output and "--judge" in refused.output
    ok = runner.invoke(app, ["verify", str(card), "--judge", str(setup["judge"]), "--judge-cache", str(setup["cache"])])
    assert ok.exit_code == 0, ok.output
    assert len(server.requests) == before  # every answer came from the response cache


def test_a_changed_judge_card_is_refused_naming_it(setup: dict[str, Any], tmp_path: Path) -> None:
    changed = tmp_path / f"{JUDGE}.toml"
    text = setup["judge"].read_text(encoding="utf-8")
    changed.write_text(text.replace("Is the meaning kept?", "Is the meaning kept, roughly?"), encoding="utf-8")
    result = runner.invoke(app, ["verify", str(setup["dir"] / "score.json"), "--judge", str(changed)])
    assert result.exit_code == 2 and JUDGE in result.output and "hashes to" in result.output, result.output
    # reformatting alone (CRLF line ends, a comment) keeps the judge's identity
    changed.write_bytes(("# reviewed\n" + text).replace("\n", "\r\n").encode("utf-8"))
    same = runner.invoke(app, ["verify", str(setup["dir"] / "score.json"), "--judge", str(changed), "--judge-cache",
                               str(setup["cache"])])
    assert same.exit_code == 0, same.output


@pytest.mark.parametrize("where", ["entry", "scores"])
def test_a_tampered_judge_value_fails_verify_even_resealed(setup: dict[str, Any], tmp_path: Path,
                                                           where: str) -> None:
    card = _card(setup["dir"] / "score.json")
    if where == "entry":
        card["results"][1]["metrics"][JUDGE] = 1.0  # was 0.0: the bad output made good
    else:
        card["scores"][JUDGE] = 0.99
    card["run_card_hash"] = card_hash(card)  # resealed: only recomputing the judge can catch it
    forged = tmp_path / "forged.json"
    forged.write_bytes(dumps(card))
    result = runner.invoke(app, ["verify", str(forged), "--judge", str(setup["judge"]), "--judge-cache",
                                 str(setup["cache"])])
    assert result.exit_code == 1, result.output
    assert (f"results[1].metrics.{JUDGE}" if where == "entry" else f"scores.{JUDGE}") in result.output


def test_judge_values_without_their_judges_block_fail_verify(setup: dict[str, Any], tmp_path: Path) -> None:
    """The judges block removed (and the card resealed around it): its values can no longer be recomputed, so
    the card does not verify, even without a statistics sidecar to disagree with."""
    card = _card(setup["dir"] / "score.json")
    del card["judges"], card["statistics"]
    card["fingerprint"]["components"].pop("judges")
    from mt_eval.runcard.seal import fingerprint_hash

    card["fingerprint"]["hash"] = fingerprint_hash(card["fingerprint"]["components"])
    card["run_card_hash"] = card_hash(card)
    forged = tmp_path / "forged.json"
    forged.write_bytes(dumps(card))
    result = runner.invoke(app, ["verify", str(forged)])
    assert result.exit_code == 1 and f"scores.{JUDGE}: a generated judge's value without" in result.output, \
        result.output


def test_judges_never_score_secret_segments(setup: dict[str, Any], tmp_path: Path) -> None:
    corpus = tmp_path / "secret.json"
    data = json.loads((setup["dir"] / "corpus.json").read_text(encoding="utf-8"))
    data["entries"] = [{**e, "segment": "held_out" if e["id"] == 2 else e["segment"]} for e in setup["entries"]]
    corpus.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    server = setup["server"]
    before = len(server.requests)
    for command in (["score", "-p", str(setup["dir"] / "hyp.jsonl")],
                    ["run", "--method", f"predictions:{setup['dir'] / 'hyp.jsonl'}"]):
        result = runner.invoke(app, [*command, "-c", str(corpus), "-b", "0", "--judge", str(setup["judge"]),
                                     "--runs-dir", str(tmp_path / "runs"), "-o", str(tmp_path / "x.json"),
                                     "--judge-cache", str(tmp_path / "c.sqlite")])
        assert result.exit_code == 2 and f"1 secret (gold_standard/held_out) entries would be sent off this machine " \
            f"by {JUDGE}" in result.output, result.output
        assert not (tmp_path / "x.json").exists()
    assert len(server.requests) == before


def test_a_judge_card_cannot_be_reproduced_or_rescored_without_its_card(setup: dict[str, Any]) -> None:
    from mt_eval.errors import UserError
    from mt_eval.runcard.rescore import table_from_card

    with pytest.raises(UserError, match=f"judge {JUDGE}"):
        table_from_card(_card(setup["dir"] / "score.json"))


def test_compare_reads_judge_statistics_from_the_sidecar_and_refuses_a_rebuild(setup: dict[str, Any],
                                                                                tmp_path: Path) -> None:
    from mt_eval.metrics.registry import OPT_IN

    registered = set(OPT_IN)
    a, b = setup["dir"] / "score.json", setup["dir"] / "run.json"
    result = runner.invoke(app, ["compare", str(a), str(b), "-b", "20", "--json"])
    assert result.exit_code == 0, result.output
    rows = {s["name"]: s["scores"] for s in json.loads(result.stdout)["systems"]}
    assert [r[JUDGE]["point"] for r in rows.values()] == [_card(a)["scores"][JUDGE]] * 2
    assert set(OPT_IN) == registered  # nothing registered for the judge: the metric registry is unchanged
    for name in ("a.json", "b.json"):  # copies without their sidecars: compare would have to recompute the judge
        (tmp_path / name).write_bytes((a if name == "a.json" else b).read_bytes())
    rebuilt = runner.invoke(app, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), "-b", "20"])
    assert rebuilt.exit_code == 2 and JUDGE in rebuilt.output and "--judge" in rebuilt.output, rebuilt.output


def test_show_verifies_with_the_judge_card_and_banners_without(setup: dict[str, Any]) -> None:
    card = str(setup["dir"] / "score.json")
    without = runner.invoke(app, ["show", card, "--json"])
    assert without.exit_code == 0 and json.loads(without.stdout)["verified"] is False
    assert JUDGE in json.dumps(json.loads(without.stdout)["problems"])
    with_card = runner.invoke(app, ["show", card, "--json", "--judge", str(setup["judge"]), "--judge-cache",
                                    str(setup["cache"])])
    assert with_card.exit_code == 0 and json.loads(with_card.stdout)["verified"] is True, with_card.output

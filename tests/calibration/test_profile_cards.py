"""A calibrated profile on cards: ``score --profile FILE`` computes its composite (checked by hand from the card's
own values), records it with its sha256, and the card round-trips through ``verify`` and ``compare``; a forged
profile block or a hostile profile file is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from data_paths import NTREX
from mt_eval.cli import app
from mt_eval.runcard.layout import dumps

runner = CliRunner()
WEIGHTS = {"chrf_plus_plus": 0.5, "ter": 0.3, "chrf": 0.2}
PROFILE = {"format": "mt-eval-profile/1", "name": "test", "rule": "spec-4.1", "weights": WEIGHTS, "semantic": None,
           "trained_on": {}}


def _norm(metric: str, value: float) -> float:
    return 1 - min(value, 100) / 100 if metric == "ter" else value / 100


@pytest.fixture(scope="module")
def cards(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("profile")
    refs = (NTREX / "newstest2019-ref.deu.txt").read_text(encoding="utf-8").splitlines()[:25]
    (tmp / "src.txt").write_text("\n".join((NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8")
                                           .splitlines()[:25]) + "\n", encoding="utf-8")
    (tmp / "ref.txt").write_text("\n".join(refs) + "\n", encoding="utf-8")
    (tmp / "a.txt").write_text("\n".join("Das ist falsch." if i % 3 == 0 else r for i, r in enumerate(refs)) + "\n",
                               encoding="utf-8")
    (tmp / "b.txt").write_text("\n".join(r.lower() for r in refs) + "\n", encoding="utf-8")
    (tmp / "p.json").write_text(json.dumps(PROFILE), encoding="utf-8")
    out = {"dir": tmp}
    for name, extra in (("a", ["--profile", str(tmp / "p.json")]), ("b", ["--profile", str(tmp / "p.json")]),
                        ("plain", [])):
        hyp = tmp / f"{'a' if name == 'plain' else name}.txt"
        result = runner.invoke(app, ["score", "--source-file", str(tmp / "src.txt"), "--reference-file",
                                     str(tmp / "ref.txt"), "-l", "en-de", "-p", str(hyp), "-b", "50",
                                     "--runs-dir", str(tmp / "runs"), "-o", str(tmp / f"{name}.json"), *extra])
        assert result.exit_code == 0, result.output
        out[name] = tmp / f"{name}.json"
    return out


def test_card_carries_the_profile_and_its_composites(cards: dict[str, Path]) -> None:
    card = json.loads(cards["a"].read_text(encoding="utf-8"))
    block = card["calibrated_profile"]
    assert block["definition"] == PROFILE and block["id"] == f"cal-{block['sha256'][:12]}"
    assert card["fingerprint"]["components"]["calibrated_profile_sha256"] == block["sha256"]
    assert card["composite_rule"] == "spec-4.1" and card["profile"] == "B"  # the language's profile stays
    s = card["scores"]
    assert s["composite"] == pytest.approx(sum(w * _norm(m, s[m]) for m, w in WEIGHTS.items()))
    for r in card["results"]:
        v = r["metrics"]
        assert v["composite"] == pytest.approx(sum(w * _norm(m, v[m]) for m, w in WEIGHTS.items()))
    plain = json.loads(cards["plain"].read_text(encoding="utf-8"))
    assert "calibrated_profile" not in plain and all("composite" in r["metrics"] for r in plain["results"])
    assert plain["scores"]["composite"] != pytest.approx(s["composite"])


def test_verify_and_compare(cards: dict[str, Path]) -> None:
    for name in ("a", "plain"):
        result = runner.invoke(app, ["verify", str(cards[name])])
        assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["compare", str(cards["a"]), str(cards["b"]), "-b", "100"], terminal_width=200)
    assert result.exit_code == 0 and "composite" in result.output, result.output
    mixed = runner.invoke(app, ["compare", str(cards["plain"]), str(cards["a"]), "-b", "100"])
    assert mixed.exit_code == 2 and "not comparable" in mixed.output


def test_forged_profile_block_fails_verify(cards: dict[str, Path], tmp_path: Path) -> None:
    """Weights changed after sealing (and the block's hash left alone): verify names the profile."""
    card = json.loads(cards["a"].read_text(encoding="utf-8"))
    card["calibrated_profile"]["definition"]["weights"] = {"chrf_plus_plus": 0.1, "ter": 0.7, "chrf": 0.2}
    forged = tmp_path / "forged.json"
    forged.write_bytes(dumps(card))
    result = runner.invoke(app, ["verify", str(forged)])
    assert result.exit_code == 1 and "calibrated_profile" in result.output, result.output
    # a per-entry composite edited alone is caught too
    card = json.loads(cards["a"].read_text(encoding="utf-8"))
    card["results"][0]["metrics"]["composite"] = 0.99
    forged.write_bytes(dumps(card))
    result = runner.invoke(app, ["verify", str(forged)])
    assert result.exit_code == 1 and "results[0].metrics.composite" in result.output


@pytest.mark.parametrize(("weights", "says"), [
    ({"chrf_plus_plus": 1.2, "ter": -0.2}, "must be a number ≥ 0"),
    ({"chrf_plus_plus": 0.5}, "sum to 0.500000, not 1"),
    ({"length_ratio": 1.0}, "cannot be weighted"),
    ({"semantic_score": 1.0}, "names no embedding backend"),
    ({"judge_fluency": 1.0}, "weights the generated judge 'judge_fluency' but names no judge card"),
    ({"fluency_judge": 1.0}, "'fluency_judge' cannot be weighted"),  # not a judge id: refused as before
])
def test_hostile_profile_files(cards: dict[str, Path], tmp_path: Path, weights: dict[str, float], says: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**PROFILE, "weights": weights}), encoding="utf-8")
    result = runner.invoke(app, ["score", "--source-file", str(cards["dir"] / "src.txt"), "--reference-file",
                                 str(cards["dir"] / "ref.txt"), "-l", "en-de", "-p", str(cards["dir"] / "a.txt"),
                                 "--profile", str(bad), "-o", str(tmp_path / "x.json")])
    assert result.exit_code == 2 and says in result.output and "bad.json" in result.output, result.output
    assert not (tmp_path / "x.json").exists()


def test_published_under_its_profile_id_and_ranked_apart(cards: dict[str, Path], db_url: str) -> None:
    """The store keeps a calibrated card's profile id (longer than "A"/"B": migration 0005 on PostgreSQL). By
    the dataset's default key, chrF++, the profile does not enter the number: all three are ranked together;
    by the composite, a card is ranked only with cards of its profile: the two calibrated cards together, the
    plain one apart (decisions §51)."""
    from mt_eval.corpus import load_text_pair
    from store_fixtures import register_corpus

    register_corpus(db_url, load_text_pair(cards["dir"] / "src.txt", cards["dir"] / "ref.txt", "en", "de"))
    result = runner.invoke(app, ["publish", str(cards["a"]), str(cards["b"]), str(cards["plain"]), "--db", db_url])
    assert result.exit_code == 0, result.output
    board = runner.invoke(app, ["leaderboard", "--db", db_url, "--json"])
    assert board.exit_code == 0, board.output
    rows = {r["run_card_hash"]: r for r in json.loads(board.stdout)}
    card_id = json.loads(cards["a"].read_text(encoding="utf-8"))["calibrated_profile"]["id"]
    by_name = {name: rows[json.loads(cards[name].read_text(encoding="utf-8"))["run_card_hash"]]
               for name in ("a", "b", "plain")}
    assert by_name["a"]["profile"] == by_name["b"]["profile"] == card_id and by_name["plain"]["profile"] == "B"
    assert by_name["a"]["rank"] and by_name["b"]["rank"] and by_name["plain"]["rank"]  # by chrF++
    dataset = json.loads(cards["a"].read_text(encoding="utf-8"))["dataset"]["sha256"]
    switched = runner.invoke(app, ["dataset", "primary-metric", dataset, "composite", "--db", db_url])
    assert switched.exit_code == 0, switched.output
    board = runner.invoke(app, ["leaderboard", "--db", db_url, "--json"])
    rows = {r["run_card_hash"]: r for r in json.loads(board.stdout)}
    by_name = {name: rows[json.loads(cards[name].read_text(encoding="utf-8"))["run_card_hash"]]
               for name in ("a", "b", "plain")}
    assert by_name["a"]["rank"] and by_name["b"]["rank"] and by_name["plain"]["rank"] is None
    assert f"profile B (ranked: {card_id})" in by_name["plain"]["unranked_reason"]


@pytest.mark.parametrize(("judges", "says"), [
    ({"judge_fluency": "abc"}, "judges must be an object"),
    ({"fluency": "a" * 64}, "judges must be an object"),
    ({"judge_other": "a" * 64}, "names no judge card"),
])
def test_a_profile_names_each_judge_it_weights_by_its_card_sha256(judges: dict[str, str], says: str) -> None:
    from mt_eval.errors import UserError
    from mt_eval.scoring.calibrated import check

    definition = {**PROFILE, "weights": {"chrf_plus_plus": 0.5, "judge_fluency": 0.5}}
    assert check({**definition, "judges": {"judge_fluency": "a" * 64}}, "p.json").judges == {
        "judge_fluency": {"sha256": "a" * 64}}
    with pytest.raises(UserError, match=says):
        check({**definition, "judges": judges}, "p.json")


def test_reading_calibrated_cards_never_grows_profiles(cards: dict[str, Path]) -> None:
    """A server reads many calibrated cards: each is composed under the weights its own block carries, and the
    global ``PROFILES`` stays A and B (``card_profile`` used to register every distinct profile it read)."""
    from mt_eval.comparison import COMPOSITE, compare
    from mt_eval.scoring.calibrated import card_profile, card_weights, make_profile
    from mt_eval.scoring.composite import composite
    from mt_eval.scoring.profiles import PROFILES

    a, b = (json.loads(cards[n].read_text(encoding="utf-8")) for n in ("a", "b"))
    before = {k: dict(v) for k, v in PROFILES.items()}
    for i in range(50):  # 50 distinct profiles, each on a copy of the sealed card
        weights = {"chrf_plus_plus": 1.0 + i, "ter": 2.0, "chrf": 0.5 + i / 10}
        profile = make_profile(f"p{i}", weights)
        card = {**a, "calibrated_profile": profile.card_block}
        assert card_profile(card) == profile.id and card_weights(card) == profile.weights
        for r in card["results"][:5]:
            v = r["metrics"]
            assert composite(v, card_weights(card), card["composite_rule"]) == pytest.approx(
                sum(w * _norm(m, v[m]) for m, w in profile.weights.items()) / sum(profile.weights.values()))
    for card in (a, b):  # the sealed cards' own composites, recomputed from their blocks, are unchanged
        assert composite(card["scores"], card_weights(card), card["composite_rule"]) == pytest.approx(
            card["scores"]["composite"], abs=1e-12)
        for r in card["results"]:
            assert composite(r["metrics"], card_weights(card), card["composite_rule"]) == pytest.approx(
                r["metrics"]["composite"], abs=1e-12)
    shown = compare([a, b], n_resamples=50).systems  # the comparison reads the weights the same way
    assert [s.scores[COMPOSITE].point for s in shown] == pytest.approx([a["scores"]["composite"],
                                                                        b["scores"]["composite"]], abs=1e-12)
    assert before == PROFILES and set(PROFILES) == {"A", "B"}

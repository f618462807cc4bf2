"""A registered dataset ranks by its primary metric (chrF++ unless set otherwise), with significance clusters
from the stored per-entry statistics; switching the key re-ranks without re-publishing anything.

Three systems on the bundled NTREX-128 eng→spa slice, made so the two keys disagree: ``nopunct`` (every
reference without its final punctuation: chrF++ high, no exact match), ``shuffled`` (the reference, words
shuffled on 3 entries in 10: chrF++ lower, 70 % exact) and ``truncated`` (words cut from the end). The
independent references: sacrebleu's chrF++ (``CHRF(word_order=2)``) and its own paired bootstrap
(``sacrebleu.significance.PairedTest``, same seed: the resamples are sacrebleu's) on the same outputs, with
Holm's step-down computed here by hand; and, for the composite, each card file's own composite.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from sacrebleu.metrics import CHRF
from sacrebleu.significance import PairedTest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.store.query import BoardRow
from mt_eval.store.rank_key import UNREGISTERED, RankKey, parse_key
from mt_eval.store.ranking import by_key, split_groups
from store_fixtures import CORPUS

SYSTEMS = ("nopunct", "shuffled", "truncated")
DATASET = "ntrex128-eng-spa-demo"


def _outputs(kind: str, references: list[str]) -> list[str]:
    out = []
    for i, ref in enumerate(references):
        if kind == "nopunct":
            out.append(ref.rstrip(".!?;:") if ref[-1:] in ".!?;:" else ref[:-1])
        elif kind == "shuffled":
            words = ref.split()
            if i % 10 < 3:
                random.Random(i).shuffle(words)
            out.append(" ".join(words))
        else:  # truncated
            words = ref.split()
            out.append(" ".join(words[: max(1, len(words) - i % 3)]))
    return out


@pytest.fixture(scope="module")
def three(cards: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The three cards (scored with ``mt-eval score``; ``truncated`` is the store tests' own) and their
    outputs, with the corpus references."""
    folder = tmp_path_factory.mktemp("ranking-key")
    entries = json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]
    refs = [str(e["reference"]) for e in entries]
    made: dict[str, Any] = {"refs": refs, "outputs": {"truncated": _outputs("truncated", refs)},
                            "cards": {"truncated": cards["truncated"]}}
    for kind in ("nopunct", "shuffled"):
        outputs = _outputs(kind, refs)
        hyp = folder / f"{kind}.jsonl"
        hyp.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": o}, ensure_ascii=False) + "\n"
                               for e, o in zip(entries, outputs, strict=True)), encoding="utf-8")  # fmt: skip
        card = folder / f"{kind}.json"
        done = CliRunner().invoke(app, ["score", "-c", str(CORPUS), "-p", str(hyp), "--bootstrap", "100", "--system",
                                        kind, "--runs-dir", str(folder / "runs"), "-o", str(card)])  # fmt: skip
        assert done.exit_code == 0, done.output
        made["outputs"][kind], made["cards"][kind] = outputs, card
    return made


def _cli(*args: str) -> Any:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result


def _board(db: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(_cli("leaderboard", "--db", db, "--json").stdout)
    return rows


def _holm(ps: list[float], alpha: float = 0.05) -> list[bool]:
    """Holm's step-down: significant while p_(i) <= alpha / (m - i), in ascending order of p."""
    order = sorted(range(len(ps)), key=lambda i: ps[i])
    significant = [False] * len(ps)
    for step, i in enumerate(order):
        if ps[i] > alpha / (len(ps) - step):
            break
        significant[i] = True
    return significant


def _ranges(breaks: list[bool]) -> list[str]:
    """Rank ranges from significant steps, written out independently of ``ranking.clusters``."""
    labels, start = [], 0
    for i in range(len(breaks) + 1):
        if i == len(breaks) or breaks[i]:
            labels += [str(start + 1) if i == start else f"{start + 1}–{i + 1}"] * (i + 1 - start)
            start = i + 1
    return labels


def _insert(db: str, paths: list[Path]) -> None:
    """The cards as they are (they are genuine: ``publish``'s rescoring, tested below on SQLite, keeps them)."""
    from mt_eval.store import open_store
    from mt_eval.store.publish import insert_card

    with open_store(db) as store, store.session() as session:
        for path in paths:
            card = json.loads(path.read_text(encoding="utf-8"))
            insert_card(session, card, path.with_name(card["statistics"]["file"]).read_bytes())


def test_registered_slice_ranks_by_chrf_then_by_composite(three: dict[str, Any], db_url: str) -> None:
    cards = three["cards"]
    _insert(db_url, [cards[k] for k in SYSTEMS])
    rows = _board(db_url)
    assert [r["dataset_id"] for r in rows] == [DATASET] * 3 and all(r["rank"] for r in rows)
    name = {json.loads(cards[k].read_text(encoding="utf-8"))["method"]["name"]: k for k in SYSTEMS}
    shown = [name[r["method"]] for r in rows]

    chrf = {k: CHRF(word_order=2).corpus_score(three["outputs"][k], [three["refs"]]).score for k in SYSTEMS}
    expected = sorted(SYSTEMS, key=lambda k: -chrf[k])
    assert shown == expected == ["nopunct", "truncated", "shuffled"]
    assert [r["scores"]["chrf_plus_plus"]["value"] for r in rows] == pytest.approx([chrf[k] for k in expected],
                                                                                   abs=1e-9)
    ps = []
    for better, worse in pairwise(expected):  # sacrebleu's paired bootstrap, same seed
        _, scores = PairedTest([(better, three["outputs"][better]), (worse, three["outputs"][worse])],
                               {"chrF2++": CHRF(word_order=2)}, [three["refs"]], test_type="bs", n_samples=1000)()
        result = scores["chrF2++"][1]
        assert not isinstance(result, str) and result.p_value is not None
        ps.append(float(result.p_value))
    assert [r["rank"] for r in rows] == _ranges(_holm(ps))
    assert all(r["composite"]["value"] is not None and r["quality_tier"] for r in rows)  # the spec's view stays

    before = {r["run_card_hash"] for r in rows}
    switched = _cli("dataset", "primary-metric", DATASET, "composite", "--db", db_url)
    assert "composite" in switched.output
    again = _board(db_url)
    assert {r["run_card_hash"] for r in again} == before  # the same cards: nothing was re-published
    composites = {k: json.loads(cards[k].read_text(encoding="utf-8"))["scores"]["composite"] for k in SYSTEMS}
    assert [name[r["method"]] for r in again] == sorted(SYSTEMS, key=lambda k: -composites[k])
    # the keys rank differently: 70 % exact matches lift "shuffled" above "truncated" by the composite, while
    # chrF++ puts it last (under anchored-1 it was first; anchored-2 weighs the 3 scrambled entries' word order)
    assert [name[r["method"]] for r in again] == ["nopunct", "shuffled", "truncated"] != expected
    table = " ".join(_cli("leaderboard", "--db", db_url).output.split())
    assert "ranked by composite (the dataset's primary metric)" in table


def test_published_cards_rank_the_same(three: dict[str, Any], tmp_path: Path) -> None:
    """Through ``publish`` (rescored against the registered references): the same board as the cards inserted
    as they are."""
    from store_fixtures import register_corpus

    published, inserted = register_corpus(str(tmp_path / "p.db")), register_corpus(str(tmp_path / "i.db"))
    _cli("publish", *(str(three["cards"][k]) for k in SYSTEMS), "--db", published)
    _insert(inserted, [three["cards"][k] for k in SYSTEMS])
    same = ("run_card_hash", "rank", "scores", "composite")
    assert [{k: r[k] for k in same} for r in _board(published)] == [{k: r[k] for k in same} for r in _board(inserted)]


def _row(i: int, value: float | None, *, metric: str = "ter", profile: str = "A", composite: float = 0.5) -> BoardRow:
    scores = {metric: {"value": value, "ci_lower": None, "ci_upper": None}} if value is not None else {}
    return BoardRow(f"h{i}", f"r{i}", "d", "sha", "ids", profile, "anchored-1", "chrf", f"m{i}", "llm", "model", "c",
                    composite, (None, None), None, None, None, "fluent", "self-benchmarked", None, datetime.now(UTC),
                    scores)  # fmt: skip


def test_a_lower_is_better_key_orders_ascending_and_sets_apart_cards_without_it() -> None:
    key = parse_key("ter")
    assert key == RankKey("ter", higher_is_better=False)
    rows = [_row(0, 40.0, profile="A"), _row(1, 20.0, profile="B"), _row(2, None), _row(3, 30.0)]
    ((ranked, apart),) = split_groups(rows, {"sha": key})
    assert [r.run_card_hash for r in sorted(ranked, key=by_key(key))] == ["h1", "h3", "h0"]  # profiles do not matter
    assert [(r.run_card_hash, r.unranked_reason) for r in apart] == [("h2", "no TER")]


def test_profile_key_ranks_only_that_profiles_composites() -> None:
    key = parse_key("profile:cal-0123456789ab")
    assert (key.metric, key.profile) == ("composite", "cal-0123456789ab")
    rows = [_row(0, None, profile="cal-0123456789ab", composite=0.4), _row(1, None, profile="A", composite=0.9),
            _row(2, None, profile="cal-0123456789ab", composite=0.6)]
    ((ranked, apart),) = split_groups(rows, {"sha": key})
    assert [r.run_card_hash for r in sorted(ranked, key=by_key(key))] == ["h2", "h0"]
    assert [(r.run_card_hash, r.unranked_reason) for r in apart] == [("h1", "profile A (ranked: cal-0123456789ab)")]


def test_keys_that_cannot_rank_fall_back_to_the_composite() -> None:
    assert parse_key("length_ratio") == RankKey("composite")  # no direction: neither better nor worse
    assert parse_key("chrf_plus_plus") == RankKey("chrf_plus_plus", True)
    assert parse_key("chrf_plus_plus").label == "chrF++"
    assert UNREGISTERED.metric == "composite" and not UNREGISTERED.registered
    ((ranked, _),) = split_groups([_row(0, None, composite=0.2), _row(1, None, composite=0.7)])
    assert [r.run_card_hash for r in sorted(ranked, key=by_key(UNREGISTERED))] == ["h1", "h0"]
    assert Path(CORPUS).is_file()

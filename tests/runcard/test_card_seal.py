"""Run card: schema, Run Card Spec hash, verify catches any single edit, fingerprint semantics."""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from mt_eval.api import evaluate_card
from mt_eval.corpus import load_text_pair
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.runcard.builder import fingerprint_components
from mt_eval.runcard.model import RunCard
from mt_eval.runcard.seal import fingerprint_hash
from mt_eval.runcard.verify import verify_card
from mt_eval.scoring.intervals import BootstrapConfig

N = 30


class FixedOutputs:
    """A method whose outputs were produced beforehand (what `predictions:` does from a file)."""

    def __init__(self, outputs: dict[int, str], fail: set[int] = frozenset()) -> None:  # type: ignore[assignment]
        self.outputs = outputs
        self.fail = fail
        self.identity = MethodIdentity("fixed", MethodClass.CUSTOM_PLUGIN, "1", "test/fixed", {"k": 1})

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        return [
            Translation(r.entry_id, error="boom") if r.entry_id in self.fail
            else Translation(r.entry_id, self.outputs[r.entry_id], latency_seconds=0.01 * r.entry_id)
            for r in requests
        ]


@pytest.fixture(scope="module")
def sealed(ntrex_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    tmp = tmp_path_factory.mktemp("card")
    src, ref = tmp / "src.txt", tmp / "ref.txt"
    src.write_text("\n".join((ntrex_dir / "newstest2019-src.eng.txt").read_text().splitlines()[:N]) + "\n")
    refs = (ntrex_dir / "newstest2019-ref.spa.txt").read_text().splitlines()[:N]
    ref.write_text("\n".join(refs) + "\n")
    dataset = load_text_pair(src, ref, "en", "es")
    outputs = {i + 1: " ".join(r.split()[: max(1, len(r.split()) - 2)]) for i, r in enumerate(refs)}
    outputs[1] = refs[0]  # one exact match
    # 100 resamples keep ~200 re-verifications fast; the CIs are still recomputed and checked
    card, path = evaluate_card(dataset, FixedOutputs(outputs, fail={2}), runs_dir=tmp / "runs", condition="t",
                               bootstrap=BootstrapConfig(100, 0.05, 3))
    return card, path


def test_card_validates_and_counts_errors(sealed):
    card, path = sealed
    RunCard.model_validate(card)
    assert json.loads(path.read_text(encoding="utf-8")) == card
    s = card["scores"]
    assert s["total"] == N and s["errors"] == 1 and s["evaluated"] == N - 1
    assert s["exact_matches"] >= 1
    assert card["results"][1]["predicted"] == "" and card["results"][1]["error"] == "boom"
    assert card["results"][1]["entry_chrf"] == 0.0
    for planned in ("semantic_score", "equivalent_match_rate"):  # no embeddings, no variants in NTREX
        assert planned in s and s[planned] is None
    assert s["composite"] is not None and s["quality_tier"] != "unscored"
    # the Spanish card declares Apertium's analyser, so profile A (docs/decisions.md §19)
    assert card["profile"] == "A" and 0.9 < s["fst_acceptance_rate"] <= 1 and card["fst_version"]
    assert card["results"][0]["fst_analysis"] and card["results"][1]["fst_accepted"] is None
    assert "by_difficulty" not in s  # every entry difficulty 3: one group, the whole run again, left out


def test_hash_equals_the_run_card_spec_snippet(sealed):
    _, path = sealed
    card = json.loads(path.read_text(encoding="utf-8"))
    stored = card["run_card_hash"]
    # verbatim from the Run Card Spec
    card["run_card_hash"] = ""
    card_json = json.dumps(card, sort_keys=True, ensure_ascii=False)
    card["run_card_hash"] = hashlib.sha256(card_json.encode()).hexdigest()
    assert card["run_card_hash"] == stored
    assert verify_card(card) == []


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(node, list) and node:
        limit = 1 if path == ("results",) else len(node)  # every field of one result is enough
        for i in range(limit):
            yield from _leaves(node[i], (*path, i))
    else:
        yield path


def _tweak(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if value is None:
        return "x"
    return [*value, "x"] if isinstance(value, list) else value


@pytest.mark.slow  # every leaf of a card edited in turn; runs in CI (`-m "not slow"` skips it locally)
def test_any_single_field_change_fails_verify(sealed):
    card, _ = sealed
    paths = [p for p in _leaves(card) if p != ("run_card_hash",)]
    assert len(paths) > 150
    for path in paths:
        tampered = copy.deepcopy(card)
        node = tampered
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = _tweak(node[path[-1]])
        assert verify_card(tampered), f"editing {path} went unnoticed"


@pytest.mark.parametrize(
    ("path", "expected"),
    [(("scores", "chrf_plus_plus"), "scores.chrf_plus_plus"),
     (("scores", "exact_matches"), "scores.exact_matches"),
     (("results", 3, "entry_chrf"), "results[3].entry_chrf"),
     (("model_slug",), "fingerprint.components.model_slug"),
     (("scores", "confidence_intervals", "composite", "ci_lower"), "scores.confidence_intervals.composite"),
     (("timestamp",), "run_card_hash")],
)
def test_verify_names_the_first_differing_field(sealed, path, expected):
    tampered = copy.deepcopy(sealed[0])
    node = tampered
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = _tweak(node[path[-1]])
    assert verify_card(tampered)[0].startswith(expected)


def test_fingerprint_changes_with_each_component_only(sealed):
    card, _ = sealed
    components = card["fingerprint"]["components"]
    assert components == fingerprint_components(card)
    assert {"dataset_sha256", "model_slug", "condition", "system_prompt_sha256", "temperature",
            "harness_version"} <= set(components)
    base = fingerprint_hash(components)
    seen = {base}
    for name, value in components.items():
        changed = dict(components, **{name: _tweak(value)})
        seen.add(fingerprint_hash(changed))
    assert len(seen) == len(components) + 1
    # not otherwise: what is not a component (run id, timestamp, scores) leaves it alone
    other = copy.deepcopy(card)
    other["run_id"], other["timestamp"], other["scores"]["composite"] = "r2", "2030-01-01T00:00:00Z", 0.5
    assert fingerprint_hash(fingerprint_components(other)) == base


def test_write_atomic_leaves_no_temporary_and_a_plain_mode(tmp_path):
    """One atomic writer for cards, sidecars, sweep state, batches and signatures: unique temporaries that
    never outlive the write, and the mode a plain write gives (mkstemp alone would make it 0600)."""
    import stat

    from mt_eval.errors import UserError
    from mt_eval.runcard.io import write_atomic

    target = tmp_path / "sub" / "card.json"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two" and stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in target.parent.iterdir()] == ["card.json"]
    (tmp_path / "dir.json").mkdir()
    with pytest.raises(UserError, match="cannot write"):
        write_atomic(tmp_path / "dir.json", b"x")  # replacing a folder fails: one line, nothing left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir.json", "sub"]

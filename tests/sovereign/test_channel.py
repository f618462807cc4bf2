"""The result channel (docs/decisions.md §44): what a run releases is a fixed schema whose capacity is
counted in bits, the validator refuses anything outside it, and an adversarial bundle that encodes a
secret source into the scores recovers it from the old RESULT.json but no more than the bound from
the new one.

References: the old release rules re-implemented here from commit 103b0cb (every metric at 2
decimals, every group of ≥ 10 entries, per-class error counts), the covert bundle's own encoding
(tests/sovereign/bundles/covert), a brute-force count of the documents the validator accepts, and
real cards scored by the normal pipeline.
"""

from __future__ import annotations

import math
import shutil
from typing import Any

import pytest

from mt_eval.corpus.models import Dataset, Register
from mt_eval.errors import UserError
from mt_eval.methods.base import Translation
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.public_card import public_card
from mt_eval.sovereign.release import (
    ERROR_CLASSES,
    FAILED_BUCKETS,
    HEADLINE,
    ReleaseRefused,
    ReleaseSchema,
    channel_bits,
    check_release,
    public_card_bits,
    quantise,
    released_text,
    result_document,
)
from mt_eval.sovereign.runner import SandboxReport, execute, score
from mt_eval.sovereign.sandbox import new_workdir
from support.sovereign import BUNDLES, TINY, small_dataset

REGISTERS = [r.value for r in Register]
SECRET_CHARS, BITS_PER_CHAR = 8, 7
BLOCK: dict[str, Any] = {"bundle_sha256": "cd" * 32, "method": "covert", "version": "1", "segment": "gold_standard",
                         "terms_version": "sovereign-terms-1", "entries": 50, "sandbox": {"memory_mb": 256},
                         "egress": {"mode": "none"}, "organisation": "Example Language Council"}  # fmt: skip


def _segment() -> Dataset:
    """A gold-sized segment of 50 real NTREX-128 entries, ten in each of the five registers."""
    data = small_dataset(50)
    entries = [e.model_copy(update={"register": Register(REGISTERS[i % 5])}) for i, e in enumerate(data.entries)]
    return data.model_copy(update={"entries": entries})


def _secret_bits(text: str) -> list[int]:
    return [(ord(c) & 127) >> (BITS_PER_CHAR - 1 - i) & 1 for c in text[:SECRET_CHARS] for i in range(BITS_PER_CHAR)]


def _recovered(claimed: list[int], secret: list[int]) -> int:
    """Bits of the secret a decoder recovered: its claimed bits up to the first wrong one."""
    return next((i for i, (a, b) in enumerate(zip(claimed, secret, strict=False)) if a != b), min(len(claimed),
                                                                                                  len(secret)))


def _old_document(card: dict[str, Any], errors: dict[str, int]) -> dict[str, Any]:
    """RESULT.json under the old rules (release.py at 103b0cb): what this change narrows."""
    ids = ["composite", *sorted(card["metrics"])]

    def values(scores: dict[str, Any]) -> dict[str, float | None]:
        return {k: round(float(v), 2) if isinstance(v := scores.get(k), int | float) else None for k in ids}

    breakdowns = {key: {name: {"entries": g["total"], **values(g)} for name, g in groups.items() if g["total"] >= 10}
                  for key, groups in card["scores"].items() if key.startswith("by_")}  # fmt: skip
    return {"status": "ok", "scores": values(card["scores"]), "breakdowns": breakdowns, "errors": errors}


def _decode_old(document: dict[str, Any]) -> list[int]:
    """The covert bundle's decoder: three word-share counts of 5 bits per register group."""
    bits: list[int] = []
    for register in REGISTERS:
        group = document["breakdowns"]["by_register"][register]
        counts = (group["fst_acceptance_rate"], group["code_switching_rate"], 1 - group["orthographic_accuracy"])
        bits += [int(b) for share in counts for b in format(round(share * 100), "05b")]
    return bits[:SECRET_CHARS * BITS_PER_CHAR]


def _decode_new(document: dict[str, Any]) -> list[int]:
    """All the covert bundle can say through the new document: its first bit, as a failed entry."""
    return [int(document["failed"] != "none")]


@pytest.fixture(scope="module")
def covert_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Dataset, dict[str, Any], SandboxReport]:
    """The covert bundle run in the sandbox on the segment, scored by the normal pipeline."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    dataset = _segment()
    dest = tmp_path_factory.mktemp("covert") / "covert"
    shutil.copytree(BUNDLES / "covert", dest)
    (dest / "covert.json").write_text(f'{{"entries": {len(dataset.entries)}, "registers": {REGISTERS!r}}}'
                                      .replace("'", '"'))
    bundle = load_bundle(dest)
    workdir = new_workdir()
    try:
        translations, report = execute(bundle, dataset, TINY, workdir / "stage")
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return dataset, score(dataset, bundle, translations, report, TINY, "sovereign:gold_standard"), report


def test_covert_bundle_recovers_the_secret_from_the_old_document_and_at_most_the_bound_from_the_new(
        covert_run: tuple[Dataset, dict[str, Any], SandboxReport]) -> None:
    dataset, card, report = covert_run
    secret = _secret_bits(dataset.entries[0].source)
    assert report.errors() == {"crashed": 1} if secret[0] else not report.errors()  # the first bit, as a crash
    old = _recovered(_decode_old(_old_document(card, report.errors())), secret)
    assert old == SECRET_CHARS * BITS_PER_CHAR  # 56 bits: all 8 characters ("Welsh AM")
    for schema, groups in ((ReleaseSchema(), {}), (ReleaseSchema(("by_register",)), {"by_register": 5})):
        document = result_document(report.status(False), card, report.errors(), len(dataset.entries), BLOCK, schema)
        bound = channel_bits(schema, groups)
        new = _recovered(_decode_new(document), secret)
        assert new <= bound and new == 1 and "fst_acceptance_rate" not in released_text(document, schema)
        assert set(document["breakdowns"]) == set(schema.public_breakdowns)
    assert channel_bits(ReleaseSchema()) < 15 < old


def test_public_card_of_the_covert_run_carries_only_the_counted_values(
        covert_run: tuple[Dataset, dict[str, Any], SandboxReport]) -> None:
    dataset, card, _ = covert_run
    block = {k: BLOCK[k] for k in ("bundle_sha256", "sandbox", "egress", "terms_version", "organisation")}
    public = public_card(card, block)
    scores = public["scores"]
    released = {k for k, v in scores.items() if v is not None and k != "confidence_intervals"}
    assert released == {*HEADLINE, "quality_tier", "total", "evaluated", "errors"}
    assert scores["fst_acceptance_rate"] is None and "by_register" not in scores
    assert scores["composite"] == quantise(card["scores"]["composite"], *HEADLINE["composite"])
    interval = scores["confidence_intervals"]["composite"]
    assert interval["ci_lower"] <= card["scores"]["confidence_intervals"]["composite"]["ci_lower"]
    assert interval["ci_upper"] >= card["scores"]["confidence_intervals"]["composite"]["ci_upper"]
    assert public["tokens"]["total_tokens"] == 0 and public["speed"]["avg_latency_seconds"] is None
    assert public["timestamp"].endswith("T00:00:00Z")
    assert public_card_bits(ReleaseSchema(), len(dataset.entries)) < 40


@pytest.mark.parametrize(("value", "step", "top", "expected"), [
    (0.29, 0.01, 1.0, 0.29), (0.8499, 0.01, 1.0, 0.84), (1.2, 0.01, 1.0, 1.0), (-0.1, 0.01, 1.0, 0.0),
    (52.999, 1.0, 100.0, 52.0), (0.349, 0.05, 1.0, 0.3), (float("nan"), 0.01, 1.0, None), (None, 1.0, 100.0, None),
])
def test_quantise_floors_to_the_grid(value: float | None, step: float, top: float, expected: float | None) -> None:
    assert quantise(value, step, top) == expected


def _document(status: str = "ok", composite: Any = 0.42, chrf: Any = 37.0, failed: str = "none",
              **extra: Any) -> dict[str, Any]:
    scores = {"composite": composite, "chrf_plus_plus": chrf} if status == "ok" else {}
    return {"status": status, "scores": scores, "failed": failed, "breakdowns": {}, "sovereign": dict(BLOCK)} | extra


def test_the_bound_is_the_number_of_documents_the_validator_accepts() -> None:
    """Every candidate value on a grid finer than the released one, out of range, and of the wrong
    kind: the accepted documents are exactly 2**channel_bits (a gold run's schema)."""
    schema = ReleaseSchema()
    composites = [None, -0.01, 1.01, 0.5000001, *(i / 200 for i in range(201))]
    chrfs = [None, -1.0, 100.5, "50", *(i / 2 for i in range(201))]

    def accepted(document: dict[str, Any]) -> bool:
        try:
            check_release(document, schema)
        except ReleaseRefused:
            return False
        return True

    good_composites = sum(accepted(_document(composite=c)) for c in composites)
    good_chrfs = sum(accepted(_document(chrf=c)) for c in chrfs)
    buckets = [b for b in [*FAILED_BUCKETS, "some"] if accepted(_document(failed=b))]
    statuses = [s for s in ["ok", *ERROR_CLASSES, "leaked"] if accepted(_document(status=s))]
    assert (good_composites, good_chrfs, len(buckets), len(statuses)) == (102, 102, 3, 10)
    total = len(buckets) * (good_composites * good_chrfs + len(statuses) - 1)
    assert math.log2(total) == pytest.approx(channel_bits(schema)) == pytest.approx(14.93, abs=0.01)
    # an error status with scores is a document a gold run cannot make: refused, so not counted
    assert not accepted({**_document(status="crashed"), "scores": {"composite": 0.1, "chrf_plus_plus": 3.0}})


@pytest.mark.parametrize("change", [
    {"errors": {"crashed": 1}},                                                    # a field outside the schema
    {"scores": {"composite": 0.42, "chrf_plus_plus": 37.0, "bleu": 12.0}},         # a metric beyond the headline
    {"scores": {"composite": 0.425, "chrf_plus_plus": 37.0}},                      # finer than the grid
    {"breakdowns": {"by_difficulty": {"3": {"entries": 21, "composite": 0.4}}}},   # not declared public
    {"sovereign": {**BLOCK, "elapsed_seconds": 12.5}},                             # a value the method moves
    {"sovereign": {**BLOCK, "egress": {"mode": "gateway", "prompt_tokens": 5121}}},
])
def test_a_document_outside_the_schema_is_refused(change: dict[str, Any]) -> None:
    with pytest.raises(UserError, match=r"release refused: RESULT\.json"):
        released_text(_document(**change))


def test_public_breakdowns_only_when_declared_and_every_group_is_large_enough() -> None:
    dataset = small_dataset(30)  # difficulty groups of 12, 8, 6 and 4 entries; one provenance group of 30
    bundle = load_bundle(BUNDLES / "covert")
    translations = [Translation(e.id, e.reference if e.id % 2 else e.source) for e in dataset.entries]
    card = score(dataset, bundle, translations, SandboxReport(outcomes={e.id: "ok" for e in dataset.entries}),
                 TINY, "test")
    sizes = {k: sorted(g["total"] for g in v.values()) for k, v in card["scores"].items() if k.startswith("by_")}
    # by_provenance's one group would be the whole run again: the card leaves it out (decisions: breakdowns)
    assert sizes["by_difficulty"] == [4, 6, 8, 12] and "by_provenance" not in sizes
    schema = ReleaseSchema(("by_difficulty", "by_provenance"))
    document = result_document("ok", card, {}, 30, BLOCK, schema)
    assert document["breakdowns"] == {}  # by_difficulty has small groups: withheld whole
    block = {k: BLOCK[k] for k in ("bundle_sha256", "sandbox", "egress", "terms_version", "organisation")}
    published = public_card(card, block, release=schema)["scores"]
    assert "by_difficulty" not in published and "by_provenance" not in published

"""The named-model registry behind ``--comet-model NAME|DIR|auto`` (metrics/comet_models.py), on tiny checkpoints.

What must hold: a NAME resolves from ``$MT_EVAL_MODELS`` or the Hugging Face cache and never downloads; ``auto``
picks AfriCOMET for a Yorùbá target; a card for a Cree target says the model is not validated for Cree; a
quality-estimation model never reads the reference (scores equal COMET's own ``predict`` on (src, mt));
MetricX says what it needs; none of them is in the composite."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from mt_eval.corpus.models import Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.comet import CometConfig, CometScore
from mt_eval.metrics.comet_models import AFRICAN, MODELS, choose, lookup
from mt_eval.metrics.opt_in import card_blocks

# the slow stage (CI's second stage runs it on every submission): COMET checkpoints built and loaded with
# torch, 8 s per module before the first test
pytestmark = pytest.mark.slow

SRC = ["The cat sat on the mat.", "Rain is expected tomorrow.", "He bought three books."]
REF = ["El gato se sentó en la alfombra.", "Se espera lluvia mañana.", "Compró tres libros."]
OUT = ["El gato se sentó en la alfombra.", "Mañana lloverá.", ""]


def _ctx(target: str, refs: list[str] = REF) -> MetricContext:
    entries = [Entry(id=i + 1, source=s, reference=r) for i, (s, r) in enumerate(zip(SRC, refs, strict=True))]
    return MetricContext(entries=entries, target=language_card(target), source=language_card("en"))


@pytest.fixture()
def models_dir(tiny: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$MT_EVAL_MODELS`` holding the tiny checkpoints under registered names; an empty hub cache."""
    root = tmp_path / "models"
    shutil.copytree(tiny["a"], root / "wmt22-comet-da")
    shutil.copytree(tiny["b"], root / "africomet-stl")
    monkeypatch.setenv("MT_EVAL_MODELS", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return root


def test_the_registry_records_training_languages_and_auto_picks_africomet_for_african_targets() -> None:
    assert choose("yo").name == "africomet-stl" and choose("ha").name == "africomet-stl"
    assert choose("yor").name == "africomet-stl" and choose("kin").name == "africomet-stl"  # ISO 639-3 codes too
    assert MODELS["africomet-stl"].validated_for("twi") and MODELS["africomet-stl"].validated_for("yor")
    assert choose("crk").name == "wmt22-comet-da" and choose("es").name == "wmt22-comet-da"
    assert MODELS["africomet-stl"].validated_for("yo") and not MODELS["africomet-stl"].validated_for("crk")
    assert not MODELS["wmt22-comet-da"].validated_for("yo") and MODELS["wmt22-comet-da"].validated_for("de-AT")
    assert {"yo", "ha", "ig", "sw", "zu", "xh", "am"} <= AFRICAN
    assert lookup("AfriCOMET") is MODELS["africomet-stl"] and lookup("CometKiwi") is MODELS["wmt22-cometkiwi-da"]
    assert MODELS["wmt22-cometkiwi-da"].reference_free and MODELS["africomet-qe-stl"].reference_free


def test_auto_chooses_africomet_for_yoruba_from_mt_eval_models(models_dir: Path) -> None:
    config = CometConfig.parse("auto", target="yo")
    assert config.registered == "africomet-stl" and config.model_name == "africomet-stl"
    block = config.card_block("yo")
    assert block["validated_for_target"] is True and "caveat" not in block and "yo" in block["training_languages"]
    # chosen late, as a run does it: the metric binds to the run's target when scoring starts
    metric = CometScore(CometConfig.parse("auto"))
    metric.prepare(_ctx("yo"))
    assert metric.config.registered == "africomet-stl" and metric.card_block()["validated_for_target"] is True


def test_a_cree_target_is_flagged_not_validated(models_dir: Path) -> None:
    metric = CometScore(CometConfig.parse("auto"))
    metric.prepare(_ctx("crk"))
    block = card_blocks([metric])["comet"]
    assert block["registered_model"] == "wmt22-comet-da" and block["validated_for_target"] is False
    assert block["caveat"].startswith("not validated for this language") and "crk" in block["caveat"]
    assert block["in_composite"] is False and block["low_resource_warning"] is True
    # a checkpoint of unknown provenance is never called validated
    unknown = CometConfig.parse(str(models_dir / "wmt22-comet-da")).card_block("de")
    assert unknown["validated_for_target"] is True  # its directory carries a registered name
    shutil.copytree(models_dir / "wmt22-comet-da", models_dir.parent / "my-model")
    mine = CometConfig.parse(str(models_dir.parent / "my-model")).card_block("de")
    assert mine["registered_model"] is None and mine["validated_for_target"] is False and "unknown" in mine["caveat"]


def test_a_name_resolves_from_the_hugging_face_cache_and_is_never_downloaded(
        tiny: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MT_EVAL_MODELS", str(tmp_path / "none"))
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    with pytest.raises(UserError) as missing:
        CometConfig.parse("wmt22-comet-da")
    assert "MT_EVAL_MODELS" in (missing.value.hint or "") and "never downloaded" in missing.value.message
    repo = hub / "models--Unbabel--wmt22-comet-da"
    shutil.copytree(tiny["a"], repo / "snapshots" / "0123abc")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abc", encoding="utf-8")
    config = CometConfig.parse("wmt22-comet-da")
    assert config.registered == "wmt22-comet-da" and config.checkpoint.startswith(str(repo))
    assert config.sha256 == CometConfig.parse(str(tiny["a"])).sha256


def test_metricx_says_what_it_needs() -> None:
    with pytest.raises(UserError) as needs:
        CometConfig.parse("metricx")
    assert "MetricX" in needs.value.message and "not a COMET checkpoint" in needs.value.message


def test_a_quality_estimation_model_never_reads_the_reference(tiny: dict[str, Path], tmp_path: Path) -> None:
    import tiny_comet

    import comet

    root = tmp_path / "africomet-qe-stl"
    tiny_comet.build_checkpoint(root, tiny["encoder"], seed=3, reference_free=True)
    config = CometConfig.parse(str(root))
    assert config.reference_free and config.registered == "africomet-qe-stl"
    metric = CometScore(config)
    stats = metric.statistics(OUT, _ctx("yo"))
    garbage = CometScore(config).statistics(OUT, _ctx("yo", refs=["x", "y", "z"]))
    assert np.array_equal(stats, garbage)  # the reference cannot move a QE score
    model = comet.load_from_checkpoint(str(root / "checkpoints" / "model.ckpt"), local_files_only=True)
    want = model.predict([{"src": s, "mt": m} for s, m in zip(SRC[:2], OUT[:2], strict=True)], batch_size=2,
                         gpus=0, progress_bar=False).scores
    assert np.allclose(stats[:2, 0], want, atol=1e-5) and stats[2, 0] == 0.0  # the empty output: 0, unscored
    assert "refs:none" in (metric.signature(language_card("yo")) or "")


def test_a_yoruba_run_card_records_africomet_and_a_cree_one_the_caveat(models_dir: Path, tmp_path: Path) -> None:
    """End to end through the Python API's scoring and card writer: the card's comet block and score keys."""
    import json

    from mt_eval.api import score

    for target, model, validated in (("yo", "africomet-stl", True), ("crk", "wmt22-comet-da", False)):
        out = tmp_path / f"{target}.json"
        score(OUT[:2], REF[:2], sources=SRC[:2], lang=f"en-{target}", write=True, out=out, runs_dir=tmp_path / "runs",
              opt_in=[CometScore(CometConfig.parse("auto"))])
        card = json.loads(out.read_text(encoding="utf-8"))
        assert card["comet"]["registered_model"] == model and card["comet"]["validated_for_target"] is validated
        assert card["scores"]["comet_model"].startswith(f"{model}@sha256:")
        assert ("caveat" in card["comet"]) is not validated


def test_score_comet_model_auto_from_the_command_line(models_dir: Path, tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from mt_eval.cli import app

    for name, lines in (("src", SRC), ("ref", REF), ("hyp", [*OUT[:2], "Compró libros."])):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    for target, model in (("yor", "africomet-stl"), ("crk", "wmt22-comet-da")):
        out = tmp_path / f"{target}.json"
        done = CliRunner().invoke(app, [
            "score", "--source-file", str(tmp_path / "src.txt"), "--reference-file", str(tmp_path / "ref.txt"),
            "-p", str(tmp_path / "hyp.txt"), "-l", f"en-{target}", "--comet-model", "auto", "--no-semantic",
            "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs"), "-o", str(out)])
        assert done.exit_code == 0, done.output
        block = json.loads(out.read_text(encoding="utf-8"))["comet"]
        assert block["registered_model"] == model and block["validated_for_target"] is (target == "yor")


def test_verify_with_auto_chooses_for_the_cards_target(models_dir: Path, tmp_path: Path) -> None:
    from mt_eval.api import score
    from mt_eval.runcard.verify import verify_card

    out = tmp_path / "yo.json"
    card = score(OUT[:2], REF[:2], sources=SRC[:2], lang="en-yo", out=out,
                 opt_in=[CometScore(CometConfig.parse("auto"))]).card
    assert verify_card(card, out, comet=CometConfig.parse("auto")) == []
    # the general model given for an AfriCOMET card is another checkpoint: refused, naming the card's model
    problems = verify_card(card, out, comet=CometConfig.parse("wmt22-comet-da"))
    assert len(problems) == 1 and "africomet-stl" in problems[0]

"""comet_score through COMET's own code on a tiny checkpoint the tests build (tiny_comet.py): no COMET weights
can be downloaded here, so what is tested is the code path (loading a checkpoint laid out as COMET saves it,
scoring, statistics, signature, the rules for empty outputs and several references, the composite), not
COMET's quality: a random-weight model's scores say nothing about translations.

The independent reference is COMET itself: the same checkpoint loaded separately with
``comet.load_from_checkpoint`` and ``predict`` on the same triples."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from data_paths import NTREX
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.metrics import comet as comet_module
from mt_eval.metrics.base import MetricContext
from mt_eval.metrics.comet import LOW_RESOURCE_WARNING, CometConfig, CometScore
from mt_eval.metrics.registry import OPT_IN, metrics_for
from mt_eval.scoring.composite import RULES, composite
from mt_eval.scoring.pipeline import quality_scores, score_outputs
from mt_eval.scoring.profiles import CALIBRATION_NORMALISATION, PROFILES
from mt_eval.stats.config import BootstrapConfig

# the slow stage (CI's second stage runs it on every submission): COMET checkpoints built and loaded with
# torch, 8 s per module before the first test
pytestmark = pytest.mark.slow

N = 8
SRC = (NTREX / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[350:350 + N]
REF = (NTREX / "newstest2019-ref.spa.txt").read_text(encoding="utf-8").splitlines()[350:350 + N]
CAT = (NTREX / "newstest2019-ref.cat.txt").read_text(encoding="utf-8").splitlines()[350:350 + N]
# entry 3 has two references (the Catalan line as a second "reference"); entry 5's method failed (empty output)
ENTRIES = [Entry(id=i + 1, source=s, reference=r, references=[r, CAT[i]] if i == 3 else [])
           for i, (s, r) in enumerate(zip(SRC, REF, strict=True))]
OUTPUTS = [REF[0], CAT[1], REF[3], SRC[3], REF[5], "", "Esto no tiene nada que ver.", REF[6]]


def _ctx() -> MetricContext:
    return MetricContext(entries=ENTRIES, target=language_card("es"), source=language_card("en"))


def _reference_scores(model_dir: Path, triples: list[dict[str, str]]) -> tuple[list[float], float]:
    import comet

    model = comet.load_from_checkpoint(str(model_dir / "checkpoints" / "model.ckpt"), local_files_only=True)
    prediction = model.predict(triples, batch_size=4, gpus=0, progress_bar=False)
    return [float(s) for s in prediction.scores], float(prediction.system_score)


def test_values_equal_comets_own_predict_per_entry_and_system(tiny: dict[str, Path]) -> None:
    metric = CometScore(CometConfig.parse(str(tiny["a"])))
    stats = metric.statistics(OUTPUTS, _ctx())
    values = metric.entry_values(stats)
    assert values is not None and stats.shape == (N, 2)
    scored = [i for i in range(N) if OUTPUTS[i]]  # one triple each, with the first reference
    triples = [{"src": SRC[i], "mt": OUTPUTS[i], "ref": REF[i]} for i in scored]
    triples.append({"src": SRC[3], "mt": OUTPUTS[3], "ref": CAT[3]})  # entry 3's second reference
    want, system = _reference_scores(tiny["a"], triples)
    assert system == pytest.approx(np.mean(want), abs=1e-6)
    plain = [k for k, i in enumerate(scored) if i != 3]
    assert np.allclose(values[[scored[k] for k in plain]], [want[k] for k in plain], rtol=0, atol=1e-5)
    first, second = want[scored.index(3)], want[-1]
    assert first != pytest.approx(second, abs=1e-6)  # the two references do score differently
    assert values[3] == pytest.approx(max(first, second), abs=1e-5)  # several references: the best
    assert values[5] == 0.0  # the failed entry
    assert float(metric.aggregate(stats.sum(axis=0))) == pytest.approx(values.sum() / N, abs=1e-12)
    # without failed entries and with one reference each, the corpus value is COMET's system score
    kept = [ENTRIES[i].model_copy(update={"references": []}) for i in scored]
    ctx = MetricContext(entries=kept, target=language_card("es"), source=language_card("en"))
    single = metric.statistics([OUTPUTS[i] for i in scored], ctx)  # (served from the metric's memo)
    assert float(metric.aggregate(single.sum(axis=0))) == pytest.approx(np.mean(want[:-1]), abs=1e-5)


def test_deterministic_across_runs_and_instances(tiny: dict[str, Path]) -> None:
    config = CometConfig.parse(str(tiny["a"]))
    first = CometScore(config).statistics(OUTPUTS, _ctx())
    again = CometScore(CometConfig.parse(str(tiny["a"]))).statistics(OUTPUTS, _ctx())
    assert np.array_equal(first, again)


def test_signature_and_scores_follow_the_checkpoint_content(tiny: dict[str, Path], tmp_path: Path) -> None:
    es = language_card("es")
    a, b = CometConfig.parse(str(tiny["a"])), CometConfig.parse(str(tiny["b"]))
    assert a.sha256 != b.sha256 and CometScore(a).signature(es) != CometScore(b).signature(es)
    assert a.sha256 in (CometScore(a).signature(es) or "") and a.version in (CometScore(a).signature(es) or "")
    va = CometScore(a).entry_values(CometScore(a).statistics(OUTPUTS, _ctx()))
    vb = CometScore(b).entry_values(CometScore(b).statistics(OUTPUTS, _ctx()))
    assert va is not None and vb is not None and not np.allclose(va[:5], vb[:5], atol=1e-4)
    # one path, two contents: another model copied over the first is another metric
    moved = tmp_path / "tiny-comet-a"
    shutil.copytree(tiny["a"], moved)
    before = CometConfig.parse(str(moved))
    shutil.copyfile(tiny["b"] / "checkpoints" / "model.ckpt", moved / "checkpoints" / "model.ckpt")
    after = CometConfig.parse(str(moved / "checkpoints" / "model.ckpt"))
    assert before.sha256 == a.sha256 and after.sha256 == b.sha256
    assert CometScore(before).signature(es) != CometScore(after).signature(es)
    with pytest.raises(UserError, match="changed since it was chosen"):  # swapped between choosing and scoring
        CometScore(before).statistics(OUTPUTS, _ctx())


def test_empty_outputs_score_zero_without_the_model(tiny: dict[str, Path], tmp_path: Path) -> None:
    # a checkpoint that cannot be loaded: all-empty outputs must score 0 without anything trying to load it
    broken = tmp_path / "broken"
    (broken / "checkpoints").mkdir(parents=True)
    shutil.copyfile(tiny["a"] / "hparams.yaml", broken / "hparams.yaml")
    (broken / "checkpoints" / "model.ckpt").write_bytes(b"not a checkpoint")
    metric = CometScore(CometConfig.parse(str(broken)))
    stats = metric.statistics(["", "  "] + [""] * (N - 2), _ctx())
    assert np.array_equal(stats, np.column_stack([np.zeros(N), np.ones(N)]))
    with pytest.raises(Exception):  # noqa: B017 - and the checkpoint really is unloadable
        metric.statistics(OUTPUTS, _ctx())


def test_bad_paths_are_one_line_user_errors(tiny: dict[str, Path], tmp_path: Path) -> None:
    no_hparams = tmp_path / "no-hparams"
    shutil.copytree(tiny["a"] / "checkpoints", no_hparams / "checkpoints")
    not_ckpt = tmp_path / "weights.bin"
    not_ckpt.write_bytes(b"x")
    cases = {str(tmp_path / "missing"): "no such file", str(tmp_path): "no checkpoints/model.ckpt",
             str(no_hparams): "no hparams.yaml", str(not_ckpt): "not a COMET checkpoint", "": "needs a path"}
    for path, message in cases.items():
        with pytest.raises(UserError, match=message) as info:
            CometConfig.parse(path)
        assert info.value.field == "comet_model" and "\n" not in str(info.value)
    with pytest.raises(UserError, match="batch size"):
        CometConfig.parse(str(tiny["a"]), batch_size=0)


def test_missing_package_names_the_extra(tiny: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    config = CometConfig.parse(str(tiny["a"]))
    monkeypatch.setitem(sys.modules, "comet", None)  # ``import comet`` fails as it does without the package
    monkeypatch.setattr(comet_module, "_LOADED", {})
    for call in (lambda: CometConfig.parse(str(tiny["a"])), lambda: comet_module.load_model(config)):
        with pytest.raises(UserError, match=r"unbabel-comet .*mt-eval\[comet\]"):
            call()


def test_card_block_carries_the_low_resource_warning(tiny: dict[str, Path]) -> None:
    config = CometConfig.parse(str(tiny["a"]))
    block = config.card_block()
    assert block["comet_model"] == "tiny-comet-a" and block["checkpoint_sha256"] == config.sha256
    assert block["low_resource_warning"] is True and block["warning"] == LOW_RESOURCE_WARNING
    assert block["in_composite"] is False and "not in the composite" in LOW_RESOURCE_WARNING
    assert str(tiny["a"]) not in str(block)  # never the path on this machine
    assert "warning:low-resource" in (CometScore(config).signature(language_card("es")) or "")


def test_never_in_the_composite(tiny: dict[str, Path]) -> None:
    assert all("comet_score" not in weights for weights in PROFILES.values())
    assert "comet_score" not in CALIBRATION_NORMALISATION  # nor a candidate of a calibrated profile
    config = CometConfig.parse(str(tiny["a"]))
    assert [m.id for m in metrics_for(language_card("es"), configured={"comet_score": config})
            if m.id == "comet_score"] == ["comet_score"] and "comet_score" in OPT_IN
    assert "comet_score" not in [m.id for m in metrics_for(language_card("es"))]  # opt-in: absent by default
    dataset = Dataset(info=DatasetInfo(id="c", source_language="en", target_language="es"), entries=ENTRIES,
                      sha256="0" * 64)
    translations = [Translation(e.id, o, error="boom" if not o else None) for e, o in zip(ENTRIES, OUTPUTS,
                                                                                          strict=True)]
    es, en = language_card("es"), language_card("en")
    plain, _ = score_outputs(dataset, translations, es, en)
    with_comet, _ = score_outputs(dataset, translations, es, en, opt_in=[CometScore(config)])
    assert "comet_score" in with_comet.metrics and "comet_score" not in plain.metrics
    boot = BootstrapConfig(n_resamples=50)
    for profile in PROFILES:
        for rule in RULES:
            without = quality_scores(plain, PROFILES[profile], boot, rule)
            scored = quality_scores(with_comet, PROFILES[profile], boot, rule)
            assert scored["comet_score"] is not None and without["comet_score"] is None
            assert scored["composite"] == without["composite"] and scored["composite"] is not None
            assert scored["quality_tier"] == without["quality_tier"]
            # and a COMET value of 0 or 1 moves nothing either
            values = {k: v for k, v in scored.items() if isinstance(v, float)}
            assert composite({**values, "comet_score": 0.0}, PROFILES[profile], rule) == \
                composite({**values, "comet_score": 1.0}, PROFILES[profile], rule)


def test_a_hugging_face_cache_layout_is_read_through_its_links(tiny: dict[str, Path], tmp_path: Path) -> None:
    """``models--ORG--NAME/snapshots/<commit>/checkpoints/model.ckpt`` links to a blob with no hparams.yaml beside
    it; the path given is kept (COMET looks two levels up from it), the sha256 is of the linked content."""
    repo = tmp_path / "models--Unbabel--tiny-comet"
    (repo / "blobs").mkdir(parents=True)
    shutil.copyfile(tiny["a"] / "checkpoints" / "model.ckpt", repo / "blobs" / "b1")
    shutil.copyfile(tiny["a"] / "hparams.yaml", repo / "blobs" / "b2")
    snapshot = repo / "snapshots" / "0123abcd"
    (snapshot / "checkpoints").mkdir(parents=True)
    (snapshot / "checkpoints" / "model.ckpt").symlink_to("../../../blobs/b1")
    (snapshot / "hparams.yaml").symlink_to("../../blobs/b2")
    config = CometConfig.parse(str(snapshot))
    direct = CometConfig.parse(str(tiny["a"]))
    assert config.model_name == "Unbabel/tiny-comet" and config.sha256 == direct.sha256
    assert config.card_block()["comet_model"] == "Unbabel/tiny-comet"
    model = comet_module.load_model(config)  # COMET itself finds hparams.yaml from the path as given
    assert model.hparams["pretrained_model"] == str(tiny["encoder"])

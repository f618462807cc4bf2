"""``nmt:DIR``: a local NLLB-style checkpoint (tests/support/nmt.py builds a tiny one) through the registry,
``mt-eval run`` and ``mt_eval.evaluate``; outputs checked against transformers' own translation pipeline."""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import MethodError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import MethodClass, TranslationRequest
from mt_eval.methods.nmt import NMTMethod, NMTSettings, nllb_code
from support.nmt import build_tiny_marian, build_tiny_nllb

# the slow stage (CI's second stage runs it on every submission): it imports torch (6-8 s per process)
pytestmark = pytest.mark.slow

SOURCES = ["The cat sleeps on the mat.", "Hello world.", "How are you?", "The mat.", "Hello, cat!"]
REFERENCES = ["El gato duerme en la alfombra.", "Hola mundo.", "¿Cómo estás?", "La alfombra.", "¡Hola, gato!"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_nllb(tmp_path_factory.mktemp("nmt") / "tiny-nllb")


@pytest.fixture(scope="module")
def method(checkpoint: Path) -> NMTMethod:
    return NMTMethod(str(checkpoint), language_card("en"), language_card("es"))


def _requests(target: str = "es") -> list[TranslationRequest]:
    return [TranslationRequest(i, s, "en", target) for i, s in enumerate(SOURCES, 1)]


def _translate(m: NMTMethod) -> list[str]:
    out = asyncio.run(m.translate(_requests()))
    assert all(t.error is None for t in out)
    return [t.text for t in out]


def _weights_sha256(directory: Path) -> str:
    """The documented digest, recomputed here: (relative name, NUL, bytes, NUL) per weight file."""
    digest = hashlib.sha256()
    digest.update(b"model.safetensors\0" + (directory / "model.safetensors").read_bytes() + b"\0")
    return digest.hexdigest()


def test_nllb_codes_from_language_cards() -> None:
    assert [nllb_code(language_card(c)) for c in ("es", "en", "yo", "sw", "zh", "ar", "am")] == [
        "spa_Latn", "eng_Latn", "yor_Latn", "swh_Latn", "zho_Hans", "arb_Arab", "amh_Ethi"]


@pytest.mark.slow  # the pipeline loads the checkpoint again: ~10 s on a shared CPU
def test_outputs_equal_transformers_translation_pipeline(method: NMTMethod, checkpoint: Path) -> None:
    """Same checkpoint, same decoding, through transformers' own pipeline (its NLLB src_lang/tgt_lang path)."""
    from transformers import pipeline

    reference = pipeline("translation", model=str(checkpoint), src_lang="eng_Latn", tgt_lang="spa_Latn",
                         device="cpu")
    expected = [r["translation_text"].strip() for r in reference(SOURCES, num_beams=2, max_new_tokens=12,
                                                                 do_sample=False)]
    assert _translate(method) == expected
    assert method.identity.method_class is MethodClass.NMT
    assert method.identity.config["source_code"] == "eng_Latn" and method.identity.config["target_code"] == "spa_Latn"


def test_batch_size_and_target_language(method: NMTMethod, checkpoint: Path) -> None:
    """One entry per batch translates as the whole batch does; the forced target token is the card's language."""
    alone = NMTMethod(str(checkpoint), language_card("en"), language_card("es"), NMTSettings(batch_size=1))
    assert _translate(alone) == _translate(method)
    french = NMTMethod(str(checkpoint), language_card("en"), language_card("fr"))
    assert french.identity.config["target_code"] == "fra_Latn"
    assert _translate(french) != _translate(method)


def test_another_checkpoint_cannot_claim_the_card(method: NMTMethod, checkpoint: Path, tmp_path: Path) -> None:
    assert method.identity.config["weights_sha256"] == _weights_sha256(checkpoint)
    copy = shutil.copytree(checkpoint, tmp_path / "elsewhere")
    assert NMTMethod(str(copy), language_card("en"), language_card("es")).identity.config == method.identity.config
    other = build_tiny_nllb(tmp_path / "tiny-nllb", seed=1)  # same folder name, other weights
    retrained = NMTMethod(str(other), language_card("en"), language_card("es")).identity
    assert retrained.name == method.identity.name
    assert retrained.config["weights_sha256"] != method.identity.config["weights_sha256"]


def test_a_marian_pair_model_needs_no_language_codes(tmp_path: Path) -> None:
    """OPUS-MT (Marian) is one pair: no source prefix, no forced target token; the same text as generate()."""
    from transformers import MarianMTModel, MarianTokenizer

    directory = build_tiny_marian(tmp_path / "opus-mt-en-es")
    method = NMTMethod(str(directory), language_card("en"), language_card("es"))
    assert method.identity.config["model_type"] == "marian"
    assert method.identity.config["source_code"] is None and method.identity.config["target_code"] is None
    tokenizer, model = MarianTokenizer.from_pretrained(directory), MarianMTModel.from_pretrained(directory)
    expected = []
    for source in SOURCES:  # one at a time: no padding in the reference
        ids = model.generate(**tokenizer([source], return_tensors="pt"), num_beams=2, max_new_tokens=12)
        expected.append(tokenizer.decode(ids[0], skip_special_tokens=True).strip())
    assert _translate(method) == expected


def test_refusals(checkpoint: Path, tmp_path: Path) -> None:
    with pytest.raises(MethodError, match="no target language token for Plains Cree"):
        NMTMethod(str(checkpoint), language_card("en"), language_card("crk"))
    with pytest.raises(MethodError, match=r"no config\.json"):
        NMTMethod(str(tmp_path), language_card("en"), language_card("es"))
    (tmp_path / "config.json").write_text("{}", encoding="utf-8")
    with pytest.raises(MethodError, match="no weight files"):
        NMTMethod(str(tmp_path), language_card("en"), language_card("es"))


def test_run_and_evaluate_translate_the_same(method: NMTMethod, checkpoint: Path, tmp_path: Path) -> None:
    """``mt-eval run --method nmt:DIR`` seals a card of class nmt with the weights' digest, a measured local $0;
    ``mt_eval.evaluate(method="nmt:DIR")`` translates exactly the same."""
    from mt_eval import evaluate

    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("".join(s + "\n" for s in SOURCES), encoding="utf-8")
    ref.write_text("".join(r + "\n" for r in REFERENCES), encoding="utf-8")
    out = tmp_path / "card.json"
    result = CliRunner().invoke(app, ["run", "--method", f"nmt:{checkpoint}", "--source-file", str(src),
                                      "--reference-file", str(ref), "-l", "en-es", "-o", str(out),
                                      "--bootstrap", "0", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    card = json.loads(out.read_text(encoding="utf-8"))
    assert card["method"]["method_class"] == "nmt"
    assert card["method"]["config"]["weights_sha256"] == _weights_sha256(checkpoint)
    assert card["cost"]["status"] == "measured" and card["cost"]["total_cost_usd"] == 0.0
    assert card["speed"]["status"] == "measured"
    predicted = [r["predicted"] for r in card["results"]]
    assert predicted == _translate(method)
    api = evaluate(_dataset(), f"nmt:{checkpoint}")
    assert [e.hypothesis for e in api.entries] == predicted
    assert api.card["method"]["method_class"] == "nmt"


def _dataset() -> Dataset:
    entries = [Entry(id=i, source=s, reference=r) for i, (s, r) in enumerate(zip(SOURCES, REFERENCES, strict=True), 1)]
    return Dataset(info=DatasetInfo(id="tiny", source_language="en", target_language="es"), entries=entries,
                   sha256="1" * 64)

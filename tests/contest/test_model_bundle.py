"""Weights-only model bundles (``contest/model_bundle.py``): a checkpoint folder or archive whose every file
is data a transformers loader reads without running submitted code. Each attack was written first and seen
to pass through a plain ``nmt:DIR`` load (or reach transformers) before the checker refused it.

References: the safetensors files are written byte by byte here (8-byte little-endian header length, the
JSON header, the data), as the format's README specifies; the tiny checkpoint is
``support.nmt.build_tiny_nllb`` (transformers' own ``save_pretrained``).
"""

from __future__ import annotations

import io
import json
import os
import struct
import tarfile
from pathlib import Path

import pytest

from mt_eval.contest import model_bundle
from mt_eval.contest.model_bundle import check_model_bundle, load_model_bundle
from mt_eval.errors import UserError


def _safetensors(path: Path, tensors: dict[str, tuple[str, list[int], bytes]],
                 header: dict[str, object] | None = None) -> Path:
    """A safetensors file: ``tensors`` maps a name to (dtype, shape, bytes), laid out in order."""
    if header is None:
        header, offset = {}, 0
        for name, (dtype, shape, data) in tensors.items():
            header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
            offset += len(data)
    blob = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(blob)) + blob + b"".join(d for _, _, d in tensors.values()))
    return path


def _checkpoint(root: Path, model_type: str = "m2m_100") -> Path:
    """A minimal, well-formed weights-only folder (not loadable as a model: enough for the checker)."""
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"model_type": model_type, "architectures": ["X"]}))
    (root / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "NllbTokenizer"}))
    _safetensors(root / "model.safetensors", {"w": ("F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
                                               "b": ("F16", [3], b"\0" * 6)})
    return root


def _lines(path: Path) -> list[str]:
    return [p.one_line() for p in check_model_bundle(path)[1]]


def test_a_plain_checkpoint_passes(tmp_path: Path) -> None:
    bundle, problems = check_model_bundle(_checkpoint(tmp_path / "m"))
    assert problems == [] and bundle is not None
    assert bundle.model_type == "m2m_100" and len(bundle.sha256) == 64
    assert bundle.files == ("config.json", "model.safetensors", "tokenizer_config.json")


@pytest.mark.parametrize("name", ["modeling_evil.py", "tokenizer.py", "pytorch_model.bin", "weights.pt",
                                  "state.pkl", "model.ckpt", "run.sh", "training_args.bin"])
def test_code_and_pickles_are_refused_by_name(tmp_path: Path, name: str) -> None:
    """A .py file is what auto_map would import; a .bin/.pt/.pkl is a pickle torch.load would unpickle."""
    root = _checkpoint(tmp_path / "m")
    (root / name).write_bytes(b"import os\n")
    lines = _lines(root)
    assert len(lines) == 1 and lines[0].startswith(f"{name}: not a file a weights-only model bundle may hold")


@pytest.mark.parametrize(("file", "key"), [("config.json", "auto_map"), ("config.json", "trust_remote_code"),
                                           ("tokenizer_config.json", "auto_map"),
                                           ("generation_config.json", "custom_generate")])
def test_remote_code_keys_are_refused_in_any_json(tmp_path: Path, file: str, key: str) -> None:
    root = _checkpoint(tmp_path / "m")
    data = json.loads((root / file).read_text()) if (root / file).exists() else {}
    data[key] = {"AutoModel": "modeling_evil.Evil"} if key != "trust_remote_code" else True
    (root / file).write_text(json.dumps(data))
    assert _lines(root) == [f"{file}: key {key!r} asks to run code shipped with the model; refused "
                            "(a weights-only bundle runs no submitted code)"]


def test_a_nested_remote_code_key_is_found(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    (root / "config.json").write_text(json.dumps({"model_type": "m2m_100", "text_config": {"auto_map": {}}}))
    assert "key 'auto_map' asks to run code" in _lines(root)[0]


@pytest.mark.parametrize(("file", "key", "value"), [("generation_config.json", "num_beams", 4096),
                                                    ("generation_config.json", "max_length", 1_000_000),
                                                    ("config.json", "max_new_tokens", 100_000),
                                                    ("generation_config.json", "num_return_sequences", 64)])
def test_decoding_settings_that_would_run_for_ever_are_refused(tmp_path: Path, file: str, key: str,
                                                               value: int) -> None:
    """The model runs in-process, outside the sandbox's wall clock: its own decoding settings (which nmt
    uses unless told otherwise) must not turn one entry into hours of beam search."""
    root = _checkpoint(tmp_path / "m")
    data = json.loads((root / file).read_text()) if (root / file).exists() else {}
    data[key] = value
    (root / file).write_text(json.dumps(data))
    assert _lines(root) == [f"{file}: {key} = {value} (at most {model_bundle.DECODING_LIMITS[key]} in a model "
                            "bundle: it runs outside the sandbox's clock)"]


def test_an_unknown_model_type_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m", model_type="evil_arch")
    assert _lines(root) == [f"config.json: model_type 'evil_arch' is not one of the seq2seq architectures a "
                            f"model bundle may use ({', '.join(sorted(model_bundle.MODEL_TYPES))})"]


def test_a_symlink_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "identity.key"
    secret.write_text("AGE-SECRET-KEY-1")
    root = _checkpoint(tmp_path / "m")
    os.symlink(secret, root / "vocab.json")
    assert _lines(root) == ["vocab.json: symbolic links are not allowed in a model bundle"]


def test_a_subfolder_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    (root / "sub").mkdir()
    (root / "sub" / "config.json").write_text("{}")
    assert _lines(root) == ["sub: folders are not allowed in a model bundle (a checkpoint is one flat folder)"]


def test_an_oversize_safetensors_header_is_refused_without_reading_it(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    with (root / "model.safetensors").open("wb") as fh:  # declares 4 GiB of header; the file is 8 bytes + 1 MiB
        fh.write(struct.pack("<Q", 4 << 30) + b"{" * (1 << 20))
    assert _lines(root) == [f"model.safetensors: the safetensors header declares {4 << 30} bytes (at most "
                            f"{model_bundle.MAX_HEADER_BYTES})"]


def _tensor(dtype: str, shape: list[int], start: int, end: int) -> dict[str, object]:
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


@pytest.mark.parametrize(("header", "data", "why"), [
    ({"w": _tensor("F32", [3], 0, 16), "b": _tensor("F16", [3], 16, 22)}, 22,
     "tensor 'w' holds 16 bytes but its dtype and shape need 12"),
    ({"w": _tensor("F32", [3], 0, 12), "b": _tensor("F16", [3], 12, 18)}, 24,
     "the tensors end at byte 18 of the 24 data bytes (trailing bytes)"),
    ({"b": _tensor("F16", [3], 0, 6), "w": _tensor("F32", [3], 4, 16)}, 16,
     "tensor 'w' starts at byte 4, expected 6 (tensors overlap or leave a gap)"),
    ({"w": _tensor("F32", [3], 0, 1 << 40)}, 18, "tensor 'w' ends at byte 1099511627776, past the 18 data bytes"),
    ({"w": _tensor("F32", [1 << 62, 1 << 62], 0, 12)}, 12, "tensor 'w' has a shape that is not a list of sizes"),
])
def test_a_header_that_lies_about_offsets_is_refused(tmp_path: Path, header: dict[str, object], data: int,
                                                      why: str) -> None:
    """safetensors' loader maps the file and slices it by these offsets: a lie reads another tensor's
    bytes, or past the end."""
    root = _checkpoint(tmp_path / "m")
    blob = json.dumps(header).encode()
    (root / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * data)
    assert _lines(root) == [f"model.safetensors: {why}"]


def test_a_header_that_is_not_a_tensor_table_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    _safetensors(root / "model.safetensors", {}, header={"w": {"dtype": "PICKLE", "shape": [1],
                                                                "data_offsets": [0, 0]}})
    assert _lines(root) == ["model.safetensors: tensor 'w' has dtype 'PICKLE' (not a safetensors dtype)"]


def test_no_weights_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    (root / "model.safetensors").unlink()
    assert _lines(root) == [f"{root}: no *.safetensors weights (a model bundle's weights are safetensors only)"]


def test_a_too_large_folder_is_refused(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    total = sum(p.stat().st_size for p in root.iterdir())
    assert check_model_bundle(root, max_bytes=total)[1] == []
    lines = [p.one_line() for p in check_model_bundle(root, max_bytes=total - 1)[1]]
    assert lines == [f"{root}: more than {total - 1} bytes (a model bundle holds at most "
                     f"{model_bundle.MAX_FILES} files and {total - 1} bytes)"]


def test_a_tarball_with_dotdot_is_refused_and_writes_nothing_outside(tmp_path: Path) -> None:
    made = tmp_path / "model.tar.gz"
    with tarfile.open(made, "w:gz") as tf:
        for path in sorted(_checkpoint(tmp_path / "m").iterdir()):
            tf.add(path, arcname=f"m/{path.name}")
        info = tarfile.TarInfo("../escaped.py")
        info.size = 9
        tf.addfile(info, io.BytesIO(b"import os"))
    assert _lines(made) == [f"{made}: archive member '../escaped.py' points outside the bundle"]
    assert not (tmp_path / "escaped.py").exists()


def test_an_archive_of_a_checkpoint_passes_with_the_folders_hash(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    made = tmp_path / "model.tar"
    with tarfile.open(made, "w") as tf:
        tf.add(root, arcname="m")
    from_archive, problems = check_model_bundle(made)
    assert problems == [] and from_archive is not None
    assert from_archive.sha256 == check_model_bundle(root)[0].sha256  # type: ignore[union-attr]


def test_loading_refuses_a_folder_the_checker_refuses(tmp_path: Path) -> None:
    root = _checkpoint(tmp_path / "m")
    (root / "modeling_evil.py").write_text("raise SystemExit('ran')\n")
    with pytest.raises(UserError, match="not a file a weights-only model bundle may hold"):
        load_model_bundle(root, "en", "es")


@pytest.mark.slow
def test_a_real_tiny_checkpoint_passes_and_translates_as_plain_nmt_does(tmp_path: Path) -> None:
    """The must-show weights-only entrant: support.nmt's tiny NLLB (save_pretrained's own files) passes the
    checker unchanged, and the weights-only load translates exactly as an ordinary ``nmt:DIR`` run does."""
    from mt_eval.api.loops import run_blocking
    from mt_eval.languages.card import language_card
    from mt_eval.methods.base import TranslationRequest
    from mt_eval.methods.nmt import NMTMethod
    from support.nmt import build_tiny_nllb

    root = build_tiny_nllb(tmp_path / "tiny")
    bundle, problems = check_model_bundle(root)
    assert problems == [] and bundle is not None and bundle.model_type == "m2m_100"
    requests = [TranslationRequest(i, s, "en", "es") for i, s in enumerate(["The cat sleeps.", "Hello world."])]
    weights_only = run_blocking(load_model_bundle(root, "en", "es").translate(requests))
    plain = run_blocking(NMTMethod(str(root), language_card("en"), language_card("es")).translate(requests))
    assert [t.text for t in weights_only] == [t.text for t in plain]
    assert all(t.error is None for t in weights_only) and weights_only[0].model_id == plain[0].model_id


@pytest.mark.slow
def test_the_code_an_auto_map_names_runs_under_trust_remote_code_and_the_checker_refuses_it(tmp_path: Path) -> None:
    """The attack is real: transformers imports the checkpoint's own modeling file when asked to trust remote
    code (seen: a marker file written). The checker refuses the folder before any loader sees it."""
    from transformers import AutoModelForSeq2SeqLM

    from support.nmt import build_tiny_nllb

    root = build_tiny_nllb(tmp_path / "evil")
    marker = tmp_path / "RAN"
    config = json.loads((root / "config.json").read_text())
    config["auto_map"] = {"AutoModelForSeq2SeqLM": "modeling_evil.Evil", "AutoConfig": "modeling_evil.EvilConfig"}
    (root / "config.json").write_text(json.dumps(config))
    (root / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\nfrom transformers import "
                                           "M2M100ForConditionalGeneration as Evil, M2M100Config as EvilConfig\n")
    AutoModelForSeq2SeqLM.from_pretrained(str(root), trust_remote_code=False)
    assert not marker.exists()  # what load_model_bundle passes
    AutoModelForSeq2SeqLM.from_pretrained(str(root), trust_remote_code=True)
    assert marker.exists()  # what the checker's refusal (and the flag) stand between
    lines = _lines(root)
    assert any(line.startswith("config.json: key 'auto_map' asks to run code shipped with the model") for line in lines)
    assert any(line.startswith("modeling_evil.py: not a file") for line in lines)


def test_a_shape_of_hundreds_of_huge_dimensions_is_refused_in_one_line(tmp_path: Path) -> None:
    """Attack: each dimension under the per-dimension bound, but 400 of them: their product has thousands of
    digits (Python refuses to print it: a traceback, not a refusal) and a header's worth of them makes the
    product quadratic in time, on the harness, outside any sandbox clock. Real checkpoints have at most 4."""
    root = _checkpoint(tmp_path / "m")
    blob = json.dumps({"w": _tensor("F32", [(1 << 47) + 1] * 400, 0, 4)}).encode()
    (root / "model.safetensors").write_bytes(struct.pack("<Q", len(blob)) + blob + b"\0" * 4)
    assert _lines(root) == ["model.safetensors: tensor 'w' has a shape that is not a list of sizes"]

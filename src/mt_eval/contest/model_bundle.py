"""Weights-only model bundles: a seq2seq checkpoint a contest entrant hands over, run with NO submitted code.

A transformers checkpoint can carry code in three ways, and a weights-only bundle closes each:

* **Python files** (``modeling_*.py``, ``tokenization_*.py``) that ``config.json``'s ``auto_map`` names and
  ``trust_remote_code=True`` imports. Refused: any file not on :data:`ALLOWED_FILES` (no ``*.py`` at all),
  any JSON file holding a :data:`REMOTE_CODE_KEYS` key at any depth, and the loader is called with
  ``trust_remote_code=False`` whatever the files say.
* **Pickles**: ``pytorch_model.bin``, ``*.pt``, ``*.pkl``, ``*.ckpt`` are ``torch.load`` pickles, and
  unpickling runs whatever the pickle names. Refused by name; the weights are ``*.safetensors`` only (a
  JSON header and raw bytes) and the loader is called with ``use_safetensors=True``.
* **An architecture of its own**: ``model_type`` must be one of :data:`MODEL_TYPES`, the seq2seq families
  ``methods/nmt.py`` drives (so ``AutoModelForSeq2SeqLM`` picks a class shipped with transformers).

What remains is data read by code we ship, so the parsers are bounded too: the folder is flat (no
sub-folders), walked with ``lstat`` (links, hard links, FIFOs and devices refused without opening them),
at most :data:`MAX_FILES` files and ``max_bytes`` bytes (the contest manifest's limit; default
:data:`MAX_BYTES`), each non-weight file at most :data:`MAX_SIDE_BYTES`; every safetensors header is at most
:data:`MAX_HEADER_BYTES` and is checked as a table of tensors whose offsets tile the data exactly (a header
that lies about offsets would slice another tensor's bytes or read past the end). An archive is unpacked
with ``sovereign/archive.py`` (its ``../``, link and bomb checks), never with ``tarfile.extractall``.
docs/decisions.md § "Weights-only model bundles".
"""

from __future__ import annotations

import json
import math
import os
import stat
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.sovereign.archive import unpack
from mt_eval.sovereign.bundle import ARCHIVES, Scan

ALLOWED_FILES = frozenset({
    "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
    "added_tokens.json", "vocab.json", "source.spm", "target.spm", "sentencepiece.bpe.model", "spiece.model",
    "README.md",
})  # fmt: skip
WEIGHTS_SUFFIX = ".safetensors"
MODEL_TYPES = frozenset({"m2m_100", "marian", "mbart", "bart", "t5", "mt5"})  # AutoModelForSeq2SeqLM classes
REMOTE_CODE_KEYS = frozenset({"auto_map", "trust_remote_code", "custom_generate", "custom_pipelines"})
FILE_ARGUMENT_SUFFIXES, FILE_ARGUMENT_KEYS = ("_file", "_files", "_spm"), frozenset({"vocab", "merges", "spm"})
MAX_FILES = 32  # a checkpoint is a handful of files; NLLB's has 7
MAX_BYTES = 4 << 30  # NLLB-200-distilled-600M is 2.5 GB in safetensors
MAX_SIDE_BYTES = 64 << 20  # tokenizer.json of NLLB is 17 MB
MAX_HEADER_BYTES = 16 << 20  # an NLLB-3.3B header is under 200 KB; safetensors' own cap is 100 MB
MAX_DIM = 1 << 48
MAX_RANK = 8  # save_pretrained writes tensors of at most 4 dimensions; a long shape is an attack (quadratic product)
MAX_LAYERS = 128  # NLLB-200 3.3B and mT5-XXL have 24 a side; each layer is Python objects built before any weight loads
UNDECLARED_VALUES = 4 << 20
"""Values a model may hold beyond its weights' (position tables, biases it builds itself: NLLB-600M's sinusoids are
1.05M); more, and ``config.json`` describes a model its weights do not fill (``undeclared_values_problem``)."""
# the model runs outside the sandbox (under its per-run wall clock only: model_run.py), and nmt decodes with the
# checkpoint's own settings: these bound one entry's work (OPUS-MT ships num_beams 4 / max_length 512,
# NLLB-200 max_length 200)
DECODING_LIMITS = {"num_beams": 8, "max_length": 1024, "max_new_tokens": 1024, "num_return_sequences": 1}
DTYPE_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "I16": 2, "U16": 2, "F16": 2, "BF16": 2,
               "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}
_KINDS = {stat.S_IFLNK: "symbolic links", stat.S_IFDIR: "folders", stat.S_IFIFO: "FIFOs", stat.S_IFSOCK: "sockets",
          stat.S_IFCHR: "devices", stat.S_IFBLK: "devices"}
REFUSED = ": not a file a weights-only model bundle may hold"


@dataclass(frozen=True)
class ModelBundle:
    """A checked weights-only checkpoint: its folder, the files (sorted), their one sha256, the architecture."""

    root: Path
    files: tuple[str, ...]
    sha256: str  # ``sovereign.bundle.Scan.sha256``'s rule: path NUL sha256 LF per file, so archives agree
    model_type: str


def _open_regular(path: Path) -> int:
    """A file descriptor of the regular file ``path`` (no link followed, no FIFO waited on)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError("not a regular file")
    return fd


def _walk(root: Path, max_bytes: int) -> tuple[dict[str, os.stat_result], list[UserError]]:
    """The folder's regular files by name (lstat only), and what was refused: links, folders, special files,
    hard links, names off the allow-list, too many files or bytes."""
    found: dict[str, os.stat_result] = {}
    problems: list[UserError] = []
    total = 0
    with os.scandir(root) as entries:
        listed = sorted(entries, key=lambda e: e.name)
    for entry in listed:
        st = entry.stat(follow_symlinks=False)
        kind = stat.S_IFMT(st.st_mode)
        if kind != stat.S_IFREG:
            extra = " (a checkpoint is one flat folder)" if kind == stat.S_IFDIR else ""
            problems.append(UserError(f"{_KINDS.get(kind, 'special files')} are not allowed in a model bundle{extra}",
                                      file=entry.name))
        elif st.st_nlink > 1:
            problems.append(UserError(f"hard links are not allowed in a model bundle ({st.st_nlink} names)",
                                      file=entry.name))
        elif entry.name not in ALLOWED_FILES and not entry.name.endswith(WEIGHTS_SUFFIX):
            problems.append(UserError(f"{REFUSED[2:]} (weights: *{WEIGHTS_SUFFIX}; code and pickles such as "
                                      "*.py, *.bin, *.pt, *.pkl are refused)", file=entry.name))
        elif not entry.name.endswith(WEIGHTS_SUFFIX) and st.st_size > MAX_SIDE_BYTES:
            problems.append(UserError(f"{st.st_size} bytes (a tokenizer or config file holds at most "
                                      f"{MAX_SIDE_BYTES >> 20} MiB)", file=entry.name))
        else:
            found[entry.name] = st
            total += st.st_size
    limits = f"a model bundle holds at most {MAX_FILES} files and {max_bytes} bytes"
    if len(found) > MAX_FILES:
        return found, [*problems, UserError(f"more than {MAX_FILES} files ({limits})", file=str(root))]
    if total > max_bytes:
        return found, [*problems, UserError(f"more than {max_bytes} bytes ({limits})", file=str(root))]
    return found, problems


def _keys(value: Any) -> Iterator[str]:
    """Every key of a JSON value, at any depth."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield str(k)
            yield from _keys(v)
    elif isinstance(value, list):
        for v in value:
            yield from _keys(v)


def _is_file_argument(key: str) -> bool:
    """Whether a tokenizer_config.json key is one of a tokenizer's file arguments (``vocab_file``,
    ``tokenizer_file``, ``merges_file``, Marian's ``source_spm``/``vocab``…): transformers passes the key's value
    over the file it found in the folder, so it would read a file the bundle's sha256 never covered."""
    return key.endswith(FILE_ARGUMENT_SUFFIXES) or key in FILE_ARGUMENT_KEYS


def _json_problems(name: str, data: bytes) -> tuple[Any, list[UserError]]:
    try:
        value = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return None, [UserError("not readable JSON", file=name)]
    bad = next((k for k in _keys(value) if k in REMOTE_CODE_KEYS), None)
    if bad is not None:
        return value, [UserError(f"key {bad!r} asks to run code shipped with the model; refused (a weights-only "
                                 "bundle runs no submitted code)", file=name)]
    if name == "tokenizer_config.json" and isinstance(value, dict):
        named = next((k for k in value if _is_file_argument(str(k))), None)
        if named is not None:  # transformers opens it instead of the folder's own file: an unhashed tokenizer
            return value, [UserError(f"key {named!r} names a tokenizer file; refused (a model bundle's tokenizer is "
                                     "its folder's own files; save_pretrained writes no such key)", file=name)]
    if name == "config.json" and isinstance(value, dict):
        deep = next((k for k, v in value.items() if (str(k).endswith("_layers") or k == "num_layers")
                     and not (v is None or (type(v) is int and 0 <= v <= MAX_LAYERS))), None)
        if deep is not None:
            return value, [UserError(f"{deep} = {str(value[deep])[:20]} (at most {MAX_LAYERS} layers in a model "
                                     "bundle)", file=name)]
    if name in ("config.json", "generation_config.json") and isinstance(value, dict):
        for key, most in DECODING_LIMITS.items():
            given = value.get(key)
            if given is not None and (type(given) is not int or not 0 < given <= most):
                return value, [UserError(f"{key} = {str(given)[:20]} (at most {most} in a model bundle: it runs "
                                         "outside the sandbox's clock)", file=name)]
    return value, []


def safetensors_problem(fd: int, size: int) -> str | None:
    """Why a safetensors file (open at ``fd``, ``size`` bytes) is refused, else None: the header is bounded,
    a JSON table of tensors with known dtypes and sizes, whose offsets tile the data exactly."""
    head = os.pread(fd, 8, 0)
    if len(head) < 8:
        return "shorter than a safetensors header"
    (length,) = struct.unpack("<Q", head)
    if length > MAX_HEADER_BYTES:
        return f"the safetensors header declares {length} bytes (at most {MAX_HEADER_BYTES})"
    if 8 + length > size:
        return f"the safetensors header declares {length} bytes; the file has {size - 8} after the length"
    try:
        header = json.loads(os.pread(fd, length, 8))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        return "the safetensors header is not JSON"
    if not isinstance(header, dict):
        return "the safetensors header is not a table of tensors"
    data_bytes, spans = size - 8 - length, []
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                return "__metadata__ is not a table of strings"
            continue
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            return f"tensor {name!r} is not dtype, shape and data_offsets"
        dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if dtype not in DTYPE_BYTES:
            return f"tensor {name!r} has dtype {str(dtype)[:20]!r} (not a safetensors dtype)"
        if (not isinstance(shape, list) or len(shape) > MAX_RANK
                or not all(type(d) is int and 0 <= d < MAX_DIM for d in shape)):
            return f"tensor {name!r} has a shape that is not a list of sizes"
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)
                and 0 <= offsets[0] <= offsets[1]):
            return f"tensor {name!r} has data_offsets that are not [start, end]"
        start, end = offsets
        if end > data_bytes:
            return f"tensor {name!r} ends at byte {end}, past the {data_bytes} data bytes"
        need = math.prod(shape) * DTYPE_BYTES[dtype]
        if end - start != need:
            return f"tensor {name!r} holds {end - start} bytes but its dtype and shape need {need}"
        spans.append((start, end, str(name)))
    expected = 0
    for start, end, name in sorted(spans):
        if start != expected:
            return f"tensor {name!r} starts at byte {start}, expected {expected} (tensors overlap or leave a gap)"
        expected = end
    if expected != data_bytes:
        return f"the tensors end at byte {expected} of the {data_bytes} data bytes (trailing bytes)"
    return None


def _digest_and_check(root: Path, name: str, seen: os.stat_result) -> tuple[str, bytes | None, str | None]:
    """(sha256, the bytes when the file is JSON, why it is refused) of one listed file."""
    import hashlib

    try:
        fd = _open_regular(root / name)
    except OSError:
        return "", None, "could not be opened as a plain file"
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino, now.st_size) != (seen.st_dev, seen.st_ino, seen.st_size):
            return "", None, "changed while it was read"
        problem = safetensors_problem(fd, now.st_size) if name.endswith(WEIGHTS_SUFFIX) else None
        digest, kept = hashlib.sha256(), bytearray() if name.endswith(".json") else None
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
            if kept is not None:
                kept += chunk
    return digest.hexdigest(), None if kept is None else bytes(kept), problem


def check_folder(root: Path, max_bytes: int = MAX_BYTES) -> tuple[ModelBundle | None, list[UserError]]:
    """The weights-only bundle in the folder ``root``, and every problem found (empty: it may be loaded)."""
    listed, problems = _walk(root, max_bytes)
    if problems and any(p.file == str(root) for p in problems):  # past the limits: nothing more is read
        return None, problems
    digests: dict[str, str] = {}
    config: Any = None
    for name, seen in listed.items():
        digest, data, problem = _digest_and_check(root, name, seen)
        if problem is not None:
            problems.append(UserError(problem, file=name))
            continue
        digests[name] = digest
        if data is not None:
            value, found = _json_problems(name, data)
            problems += found
            config = value if name == "config.json" else config
    if not any(n.endswith(WEIGHTS_SUFFIX) for n in listed):
        problems.append(UserError(f"no *{WEIGHTS_SUFFIX} weights (a model bundle's weights are safetensors only)",
                                  file=str(root)))
    model_type = config.get("model_type") if isinstance(config, dict) else None
    if "config.json" not in listed:
        problems.append(UserError("config.json not found (a checkpoint saved by save_pretrained has one)",
                                  file=str(root)))
    elif isinstance(config, dict) and model_type not in MODEL_TYPES:
        problems.append(UserError(f"model_type {str(model_type)[:40]!r} is not one of the seq2seq architectures a "
                                  f"model bundle may use ({', '.join(sorted(MODEL_TYPES))})", file="config.json"))
    if problems:
        return None, problems
    return ModelBundle(root.resolve(), tuple(sorted(digests)), Scan(digests, []).sha256, str(model_type)), []


def unpack_archive(archive: Path, dest: Path, max_bytes: int = MAX_BYTES, max_files: int = MAX_FILES) -> Path:
    """An archive's files unpacked into the new folder ``dest`` within the limits (sovereign/archive.py's
    checks: ``../``, links, bombs); the artefact is ``dest``, or the one folder it holds."""
    try:
        fd = _open_regular(archive)
    except OSError:
        raise UserError("not a readable model archive (not a plain file)", file=str(archive)) from None
    dest.mkdir(parents=True)
    with os.fdopen(fd, "rb") as stream:
        unpack(stream, os.fstat(fd).st_size, dest, str(archive), max_bytes=max_bytes, max_files=max_files)
    inner = list(dest.iterdir())
    return inner[0] if len(inner) == 1 and inner[0].is_dir() and not inner[0].is_symlink() else dest


def check_model_bundle(path: str | Path, max_bytes: int = MAX_BYTES,
                       scratch: Path | None = None) -> tuple[ModelBundle | None, list[UserError]]:
    """A folder, or an archive of one (unpacked into ``scratch``, default a temporary folder removed at exit)."""
    root = Path(path)
    if root.is_file() and not root.is_symlink() and root.name.endswith(ARCHIVES):
        if scratch is None:
            import atexit
            import shutil
            import tempfile

            scratch = Path(tempfile.mkdtemp(prefix="mt-eval-model-")) / "unpacked"
            atexit.register(shutil.rmtree, scratch.parent, True)
        try:
            root = unpack_archive(root, scratch, max_bytes)
        except UserError as exc:
            return None, [exc]
    if root.is_symlink() or not root.is_dir():
        return None, [UserError(f"a model bundle is a checkpoint folder (or a {', '.join(ARCHIVES)} of one)",
                                file=str(root))]
    return check_folder(root, max_bytes)


def load_model_bundle(root: Path, source: str, target: str, max_bytes: int = MAX_BYTES) -> Any:
    """The checkpoint as an ``nmt`` method (``methods/nmt.py``), checked again right before loading and
    loaded with ``trust_remote_code=False`` and ``use_safetensors=True``. ``source``/``target``: language codes."""
    from mt_eval.languages.card import language_card
    from mt_eval.methods.nmt import NMTMethod, NMTSettings

    bundle, problems = check_folder(Path(root), max_bytes)
    if problems or bundle is None:
        raise problems[0]
    too_large = undeclared_values_problem(bundle)
    if too_large is not None:
        raise UserError(too_large, file="config.json")
    return NMTMethod(str(bundle.root), language_card(source), language_card(target),
                     NMTSettings(weights_only=True))


def _weight_values(path: Path) -> int:
    """The values a checked safetensors file holds (its header's shapes)."""
    fd = _open_regular(path)
    try:
        (length,) = struct.unpack("<Q", os.pread(fd, 8, 0))
        header = json.loads(os.pread(fd, length, 8))
    finally:
        os.close(fd)
    return sum(math.prod(info["shape"]) for name, info in header.items() if name != "__metadata__")


def undeclared_values_problem(bundle: ModelBundle) -> str | None:
    """Why the model ``config.json`` describes is refused before any of it is allocated, else None: built on
    PyTorch's meta device (shapes, no memory), it must hold at most its weights' values plus
    :data:`UNDECLARED_VALUES` (or an eighth). transformers allocates what the weights do not fill, at random: a
    ``max_position_embeddings`` of 2**22 on the 16-wide tiny checkpoint took the loading process from 33 MB to
    1.4 GB RSS for 11k weights (2**26 would be 20 GB, outside the sandbox's memory limit)."""
    import torch
    from transformers import AutoConfig, AutoModelForSeq2SeqLM

    config = AutoConfig.from_pretrained(str(bundle.root), trust_remote_code=False)
    with torch.device("meta"):
        model = AutoModelForSeq2SeqLM.from_config(config, trust_remote_code=False)
    held = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    weights = sum(_weight_values(bundle.root / n) for n in bundle.files if n.endswith(WEIGHTS_SUFFIX))
    if held <= weights + max(UNDECLARED_VALUES, weights // 8):
        return None
    return (f"describes a model of {held} values; its weights hold {weights} (a model bundle's config.json may not "
            "declare sizes its weights do not fill)")

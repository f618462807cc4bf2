"""Local neural MT (``nmt:DIR``): an NLLB/M2M100, OPUS-MT/Marian or other seq2seq checkpoint on a local path.

Why it is built this way:

* **transformers, not a server.** The checkpoint is loaded in this process with transformers
  (``AutoModelForSeq2SeqLM``) and run batched under ``torch.inference_mode``; on CPU by default, on the
  GPU when torch sees one (never required). CTranslate2 would be faster on CPU but is one more optional
  dependency to keep in step with transformers; the card records which engine translated.
* **The card names the weights, not the folder.** ``identity.config["weights_sha256"]`` is the sha256
  over every weight file (name and bytes, sorted), and ``tokenizer_sha256`` the same over the tokenizer
  files, so a different checkpoint copied into the same folder cannot claim the same card: the
  fingerprint changes with them.
* **Language codes from the language cards.** A multilingual checkpoint (NLLB, M2M100) needs its own
  codes (``spa_Latn``): ISO 639-3 from the card's aliases plus the card's first script, with the few
  codes NLLB spells otherwise (:data:`NLLB_OVERRIDES`), checked against the tokenizer's vocabulary before a
  single entry is translated. A per-pair model (Marian) needs none.
* **Deterministic.** Beam search without sampling: the same checkpoint translates the same source to the
  same text on every run, so a card can be reproduced.
* **One group at a time.** ``concurrency`` is None: the engine hands one batch at a time and the batch
  runs in a worker thread (the event loop stays free for the progress bar and the journal); torch itself
  uses the CPU's cores.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import MethodError
from mt_eval.languages.card import LanguageCard
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest

METHOD_VERSION = "1"
WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".ckpt", ".h5", ".msgpack")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "sentencepiece.bpe.model", "source.spm",
                   "target.spm", "vocab.json", "spiece.model", "special_tokens_map.json")
# Card code -> NLLB-200 code where ISO 639-3 + script is not NLLB's spelling (macrolanguages, Han scripts).
NLLB_OVERRIDES = {"sw": "swh_Latn", "zh": "zho_Hans", "zh-CN": "zho_Hans", "zh-TW": "zho_Hant", "ar": "arb_Arab",
                  "fa": "pes_Arab", "ms": "zsm_Latn", "et": "est_Latn", "lv": "lvs_Latn", "uz": "uzn_Latn"}
MULTILINGUAL = frozenset({"m2m_100", "nllb", "nllb-moe"})  # model types that need a forced target-language token


@dataclass(frozen=True)
class NMTSettings:
    batch_size: int = 16
    num_beams: int | None = None  # None: the checkpoint's generation_config.json (else 1)
    max_new_tokens: int | None = None  # None: the checkpoint's generation_config.json max_length (else 256)
    device: str | None = None  # None: "cuda" when torch sees a GPU, else "cpu"
    weights_only: bool = False  # safetensors only (a pickled .bin is never unpickled): contest model bundles


def files_sha256(paths: Sequence[Path], root: Path) -> str:
    """sha256 over (relative name, bytes) of each file, in name order: one value per set of files."""
    digest = hashlib.sha256()
    for path in sorted(paths, key=lambda p: p.relative_to(root).as_posix()):
        digest.update(path.relative_to(root).as_posix().encode("utf-8") + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        digest.update(b"\0")
    return digest.hexdigest()


def weight_files(directory: Path) -> list[Path]:
    return [p for p in directory.rglob("*") if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES)
            and p.name != "training_args.bin"]


def nllb_code(card: LanguageCard) -> str:
    """The NLLB-200 code of a language card (``es`` -> ``spa_Latn``)."""
    if card.code in NLLB_OVERRIDES:
        return NLLB_OVERRIDES[card.code]
    iso3 = card.code if len(card.code) == 3 else next((a for a in card.aliases if len(a) == 3), card.code)
    script = card.scripts[0] if card.scripts else "Latn"
    return f"{iso3}_{script}"


def _language_token(card: LanguageCard, vocab: dict[str, int], role: str, directory: Path) -> str:
    """The checkpoint's token for a language: its NLLB code, else M2M100's ``__xx__``; refused if neither."""
    code = nllb_code(card)
    for candidate in (code, f"__{card.code}__"):
        if candidate in vocab:
            return candidate
    iso3 = code.split("_")[0]
    near = sorted(t for t in vocab if t.startswith(f"{iso3}_") or t == f"__{card.code}__")[:5]
    raise MethodError(f"the checkpoint has no {role} language token for {card.name} ({code})",
                      file=str(directory),
                      hint=f"its tokens for this language: {', '.join(near)}" if near
                      else "use a checkpoint trained on this language (NLLB-200 codes: spa_Latn, yor_Latn, ...)")


class NMTMethod(MethodBase):
    """``nmt:DIR``: a local seq2seq checkpoint (method class ``nmt``), batched, deterministic."""

    batch_size: int
    concurrency = None

    def __init__(self, directory: str, source: LanguageCard, target: LanguageCard,
                 settings: NMTSettings | None = None) -> None:
        s = settings or NMTSettings()
        if s.batch_size < 1 or (s.num_beams or 1) < 1 or (s.max_new_tokens or 1) < 1:
            raise MethodError("nmt batch_size, num_beams and max_new_tokens must be at least 1")
        root = Path(directory).expanduser()
        if not (root / "config.json").is_file():
            raise MethodError("not a transformers checkpoint folder (no config.json)", file=str(root),
                              hint="nmt:DIR takes a folder saved by save_pretrained (NLLB, M2M100, OPUS-MT/Marian)")
        weights = weight_files(root)
        if not weights:
            raise MethodError("the checkpoint folder holds no weight files", file=str(root),
                              hint=f"expected one of {', '.join(WEIGHT_SUFFIXES)}")
        try:  # heavy imports only when an nmt method is built
            import torch
            import transformers
            from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
        except ImportError as exc:
            raise MethodError(f"nmt needs transformers and torch: {exc}",
                              hint="pip install 'mt-eval[nmt]'") from None
        try:
            # never the checkpoint's own code (auto_map): only classes shipped with transformers
            tokenizer = AutoTokenizer.from_pretrained(str(root), trust_remote_code=False)
            model = AutoModelForSeq2SeqLM.from_pretrained(str(root), trust_remote_code=False,
                                                          use_safetensors=True if s.weights_only else None)
        except (OSError, ValueError, KeyError) as exc:
            raise MethodError(f"cannot load the checkpoint: {exc}", file=str(root)) from None
        device = s.device or ("cuda" if torch.cuda.is_available() else "cpu")
        model = model.to(device).eval()
        model_type = str(model.config.model_type)
        self._torch = torch
        generation = model.generation_config
        # the checkpoint's own decoding settings unless overridden; recorded as used, so the card says
        self.num_beams = s.num_beams or int(generation.num_beams or 1)
        self.max_new_tokens = s.max_new_tokens or int(generation.max_length or 256)
        self.tokenizer, self.model, self.device, self.settings = tokenizer, model, device, s
        self.batch_size = s.batch_size
        self.source_token: str | None = None
        self.target_token: str | None = None
        if model_type in MULTILINGUAL:
            vocab = tokenizer.get_vocab()
            self.source_token = _language_token(source, vocab, "source", root)
            self.target_token = _language_token(target, vocab, "target", root)
            tokenizer.src_lang = self.source_token  # NLLB/M2M100 tokenizers prefix the source with it
        tokenizer_files = [root / n for n in TOKENIZER_FILES if (root / n).is_file()]
        config: dict[str, Any] = {
            "engine": "transformers", "engine_version": transformers.__version__, "model_type": model_type,
            "weights_sha256": files_sha256(weights, root), "weight_files": sorted(p.name for p in weights),
            "tokenizer_sha256": files_sha256(tokenizer_files, root) if tokenizer_files else None,
            "source_code": self.source_token, "target_code": self.target_token, "batch_size": s.batch_size,
            "num_beams": self.num_beams, "max_new_tokens": self.max_new_tokens, "do_sample": False,
        }
        self.identity = MethodIdentity(name=f"nmt:{root.name}", method_class=MethodClass.NMT, version=METHOD_VERSION,
                                       model_slug=root.name, config=config, provider="local")
        self._model_id = f"{self.identity.model_slug}@sha256:{config['weights_sha256'][:12]}"

    def generate(self, sources: list[str]) -> list[str]:
        """Translate one batch (blocking; runs in a worker thread)."""
        tok = self.tokenizer
        inputs = tok(sources, return_tensors="pt", padding=True).to(self.device)
        kwargs: dict[str, Any] = {"num_beams": self.num_beams, "do_sample": False,
                                  "max_new_tokens": self.max_new_tokens}
        if self.target_token is not None:
            kwargs["forced_bos_token_id"] = tok.convert_tokens_to_ids(self.target_token)
        with self._torch.inference_mode():
            output = self.model.generate(**inputs, **kwargs)
        return [t.strip() for t in tok.batch_decode(output, skip_special_tokens=True)]

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        out: list[Translation] = []
        for start in range(0, len(requests), self.batch_size):
            chunk = requests[start:start + self.batch_size]
            began = time.perf_counter()
            try:
                texts = await asyncio.to_thread(self.generate, [r.source for r in chunk])
            except (RuntimeError, ValueError, IndexError) as exc:  # torch's own errors (memory, lengths)
                out.extend(Translation(r.entry_id, error=f"nmt: {type(exc).__name__}: {exc}",
                                       model_id=self._model_id) for r in chunk)
                continue
            # a batch's time is observable, one entry's is not: each gets the batch's share
            share = (time.perf_counter() - began) / len(chunk)
            out.extend(Translation(r.entry_id, text, latency_seconds=share, model_id=self._model_id,
                                   extra={"device": self.device})
                       for r, text in zip(chunk, texts, strict=True))
        return out

"""``spbleu``: BLEU on FLORES-200 SentencePiece pieces, the surface metric low-resource MT papers report.

Word-level BLEU says little for languages without a word tokenizer or with long agglutinated words; FLORES-200
and NLLB report spBLEU instead: BLEU over the pieces of one SentencePiece model trained on all 200 languages
(sacrebleu's ``flores200`` tokenizer, signature ``tok:flores200``). This is sacrebleu's own BLEU with that
tokenizer: statistics, scalar score and the bootstrap transcription are ``Bleu``'s (``metrics.sacre``), tested
equal to ``sacrebleu --tokenize flores200`` on the same files.

Opt-in and offline. sacrebleu downloads the SentencePiece model on first use; here it never does: the model
file comes from a path (``--spbleu PATH``, or ``--spbleu cache``) or is looked up where sacrebleu and mt-eval keep it
(``$MT_EVAL_MODELS/flores200sacrebleuspm``, then sacrebleu's cache ``$SACREBLEU/models/flores200sacrebleuspm``,
``~/.sacrebleu`` without ``$SACREBLEU``), and a run without one refuses before anything is translated. The
card records the model's sha256 (two models are two metrics) and the metric is never in a composite: no
weight table names it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_spm import TokenizerSPM

from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.comet import file_sha256
from mt_eval.metrics.sacre import Bleu

MODEL_FILE = "flores200sacrebleuspm"  # the name sacrebleu saves the FLORES-200 model under (its URL's basename)
SIGNATURE = "flores200"
EXTRA = "pip install sentencepiece"


def candidates() -> list[Path]:
    """Where the FLORES-200 model is looked for, in order (read now: tests and users set the variables late)."""
    models = [Path(p).expanduser() / MODEL_FILE for p in os.environ.get("MT_EVAL_MODELS", "").split(os.pathsep) if p]
    sacre = Path(os.environ.get("SACREBLEU") or Path.home() / ".sacrebleu").expanduser()
    return [*models, sacre / "models" / MODEL_FILE]


@dataclass(frozen=True)
class SpmConfig:
    """The SentencePiece model ``spbleu`` tokenizes with."""

    model: str  # absolute path (never on a card)
    sha256: str

    @classmethod
    def parse(cls, path: str | None = None) -> SpmConfig:
        """A checked model file: ``path``, or the first of ``candidates()`` that exists; sentencepiece installed."""
        try:
            import sentencepiece  # noqa: F401 - only its presence is checked here
        except ImportError as exc:
            raise UserError("spbleu needs the sentencepiece package, which is not installed here", hint=EXTRA,
                            field="spbleu_model") from exc
        if path:
            given = Path(path).expanduser()
            if not given.is_file():
                raise UserError(f"--spbleu {path!r}: no such file (the FLORES-200 SentencePiece model)",
                                field="spbleu_model")
            return cls(str(given.absolute()), file_sha256(given))
        for candidate in candidates():
            if candidate.is_file():
                return cls(str(candidate.absolute()), file_sha256(candidate))
        raise UserError(f"spbleu: no FLORES-200 SentencePiece model on this machine (looked for "
                        f"{', '.join(str(c) for c in candidates())}; mt-eval never downloads it)",
                        field="spbleu_model", hint="give it with --spbleu PATH, or let sacrebleu fetch it "
                        "once: sacrebleu --tokenize flores200 on any file")

    @classmethod
    def from_card(cls, block: dict[str, Any], path: str | None = None) -> SpmConfig:
        """The model that recomputes a card's spBLEU: found as ``parse`` finds it, and the card's own (by sha256)."""
        config = cls.parse(path)
        if config.sha256 != block.get("spm_sha256"):
            raise UserError(f"the card scored spbleu with a SentencePiece model of sha256 "
                            f"{str(block.get('spm_sha256'))[:12]}…, this machine's hashes to {config.sha256[:12]}…",
                            field="spbleu_model", hint="put that model where --spbleu cache finds it")
        return config

    def card_block(self) -> dict[str, Any]:
        return {"tokenizer": SIGNATURE, "spm_sha256": self.sha256, "in_composite": False}


class LocalFlores200(TokenizerSPM):
    """sacrebleu's FLORES-200 tokenizer, loaded from a file on this machine instead of its download path."""

    def __init__(self, model: str) -> None:
        import sentencepiece as spm

        self.name = SIGNATURE
        self.sp = spm.SentencePieceProcessor()
        self.sp.Load(model)


class SpBleu(Bleu):
    """sacrebleu's BLEU with the ``flores200`` tokenizer whatever the target language."""

    id = "spbleu"
    card_section = "spbleu"  # an opt-in metric (``metrics.opt_in``): the card's ``spbleu`` block
    cost = 3.0  # SentencePiece encoding doubles BLEU's time (1.5 s per 10k NTREX lines)

    def __init__(self, config: SpmConfig) -> None:
        super().__init__()
        self.config = config

    def _scorer(self, target: LanguageCard) -> Any:
        bleu = BLEU(tokenize="none")  # then its tokenizer swapped for the local FLORES-200 model: no download
        bleu.tokenizer = LocalFlores200(self.config.model)
        bleu.tokenizer_signature = bleu.tokenizer.signature()
        return bleu

    def signature(self, target: LanguageCard) -> str | None:
        return f"{super().signature(target)}|spm:{self.config.sha256[:16]}"

    def card_block(self) -> dict[str, Any]:
        return self.config.card_block()

    def preflight(self, entries: Any) -> None:
        """Nothing left to check: ``SpmConfig.parse`` found the model and sentencepiece."""

"""A glossary baseline as a MethodBase subclass (no dependencies beyond mt-eval's method protocol)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest

GLOSSARY = Path(__file__).with_name("coaching") / "glossary.tsv"


class GlossaryMethod(MethodBase):
    """Replace each known English word by its glossary entry; keep everything else."""

    resumable = False

    def __init__(self) -> None:
        self.identity = MethodIdentity(name="glossary-demo", method_class=MethodClass.CUSTOM_PLUGIN,
                                       version="1.0", model_slug="glossary-demo")
        rows = (line.split("\t") for line in GLOSSARY.read_text(encoding="utf-8").splitlines() if line)
        self.words = {en: es for en, es in rows}

    def _word(self, word: str) -> str:
        core = word.strip(".,;:!?\"'()")
        if core.lower() not in self.words:
            return word
        out = self.words[core.lower()]
        out = out.capitalize() if core[:1].isupper() else out
        return word.replace(core, out, 1)

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        return [Translation(r.entry_id, " ".join(self._word(w) for w in r.source.split())) for r in requests]

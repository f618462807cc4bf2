"""Lists of strings as a dataset and a method, so ``mt_eval.score`` runs the one scoring pipeline.

The dataset is what ``corpus.load_text_pair`` would load from files holding the same lines (ids 1..n,
provenance ``corpus``), and its ``sha256`` follows the text-pair rule on the bytes those files would have
(each line ended by ``\\n``, UTF-8): scoring lists and scoring the files give the same card. The outputs
replay like a predictions file (``methods/predictions.py``): no cost, no latency, a version that is the
hash of the outputs, so other outputs are another method version and another fingerprint.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry, Provenance
from mt_eval.corpus.textpair import text_pair_sha256
from mt_eval.errors import UserError
from mt_eval.languages.card import UNDETERMINED
from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation, TranslationRequest
from mt_eval.scoring.economics import REPLAY_PROVIDER

__all__ = ["MemoryOutputs", "as_strings", "dataset_from_texts", "reference_streams", "split_lang"]


def split_lang(lang: str) -> tuple[str, str]:
    """(source, target) from sacrebleu's ``en-es`` (``en:sr-Latn`` when a code has subtags)."""
    parts = lang.split(":") if ":" in lang else lang.split("-")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError(f"lang {lang!r}: give SRC-TGT such as en-es (SRC:TGT when a code has subtags, e.g. en:sr-Latn)",
                        field="lang")
    return parts[0].strip(), parts[1].strip()


def as_strings(values: Any, name: str) -> list[str]:
    """``values`` as a list of strings, or one line naming the argument (a bare string is a common slip:
    it would be scored character by character)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        raise UserError(f"{name} must be a list of strings, got {type(values).__name__}", field=name)
    bad = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
    if bad is not None:
        raise UserError(f"{name} must be strings: item {bad} is {type(values[bad]).__name__}", field=name)
    return list(values)


def reference_streams(references: Sequence[str] | Sequence[Sequence[str]]) -> list[list[str]]:
    """One stream (a list of strings, one per entry) or several, as sacrebleu takes them (``[refs1, refs2]``)."""
    if isinstance(references, str | bytes) or not isinstance(references, Sequence):
        raise UserError(f"references must be a list of strings, got {type(references).__name__}", field="references")
    if references and all(isinstance(r, str) for r in references):
        return [list(references)]  # type: ignore[arg-type]
    return [as_strings(stream, "references") for stream in references]


def _file_bytes(lines: Sequence[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def dataset_from_texts(references: Sequence[str] | Sequence[Sequence[str]], sources: Sequence[str] | None,
                       source_lang: str, target_lang: str, n: int, dataset_id: str) -> Dataset:
    """Entries 1..n from the references (one or several streams) and the sources (None: references alone,
    as sacrebleu scores them; the metrics that read the source are then null)."""
    streams = reference_streams(references)
    src = as_strings(sources, "sources") if sources is not None else None
    for name, count in [*(("references", len(s)) for s in streams), *([("sources", len(src))] if src else [])]:
        if count != n:
            raise UserError(f"{n} hypotheses but {count} {name}: give one per entry", field=name)
    entries = []
    for i in range(n):
        refs = [s[i] for s in streams]
        if any(not r.strip() for r in refs):
            raise UserError("the reference is empty", entry=i + 1, field="references",
                            hint="every entry needs a reference; leave the entry out instead")
        if src is not None and not src[i].strip():
            raise UserError("the source is empty", entry=i + 1, field="sources")
        entries.append(Entry(id=i + 1, source=src[i] if src else "", reference=refs[0],
                             references=refs if len(refs) > 1 else [], provenance=Provenance.CORPUS))
    sha = text_pair_sha256(_file_bytes(src) if src is not None else None, *(_file_bytes(s) for s in streams))
    info = DatasetInfo(id=dataset_id, source_language=source_lang or UNDETERMINED, target_language=target_lang,
                       language_pair=f"{source_lang.upper()}→{target_lang.upper()}")
    return Dataset(info=info, entries=entries, sha256=sha, path="<memory>")


class MemoryOutputs(MethodBase):
    """Outputs given as a list, replayed like a plain-text predictions file, one per entry in order."""

    resumable = False  # nothing to resume in replaying a list

    def __init__(self, hypotheses: Sequence[str], dataset: Dataset, name: str = "predictions") -> None:
        outputs = as_strings(hypotheses, "hypotheses")
        self.outputs = dict(zip((e.id for e in dataset.entries), outputs, strict=True))
        digest = hashlib.sha256(_file_bytes(outputs)).hexdigest()  # as the same lines in a file would hash
        self.identity = MethodIdentity(
            name=name, method_class=MethodClass.CUSTOM_PLUGIN, version=f"sha256:{digest[:12]}", model_slug=name,
            config={"predictions_sha256": digest, "predictions_format": "memory"}, provider=REPLAY_PROVIDER)

    async def translate(self, requests: Sequence[TranslationRequest]) -> list[Translation]:
        return [Translation(r.entry_id, text=self.outputs[r.entry_id], model_id=self.identity.model_slug)
                for r in requests]

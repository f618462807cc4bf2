"""``calibrate --from-judgments``: one card per judged system, scored against the judgments' references.

Each system's outputs become a dataset of the judged sources (entry ids: the segment ids when they are
integers, else their order) and a card built by the same ``runcard.builder`` as ``score`` (bootstrap off:
calibration resamples items itself). Human translations (``ref-*``) are not scored: one of them is the
reference. ``keys`` maps each card entry id back to the judgments' entry key.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.judgments.table import JudgmentTable, check_texts
from mt_eval.languages.card import language_card
from mt_eval.methods.base import MethodClass, MethodIdentity, Translation
from mt_eval.metrics.embeddings import SemanticConfig
from mt_eval.metrics.semantic import SemanticScore
from mt_eval.runcard.builder import RunInfo, build_card
from mt_eval.runcard.io import write_card
from mt_eval.stats.config import BootstrapConfig


def entry_ids(keys: list[str]) -> dict[str, int]:
    if all(k.isdigit() for k in keys) and len({int(k) for k in keys}) == len(keys):
        return {k: int(k) for k in keys}
    return {k: i + 1 for i, k in enumerate(keys)}


def cards_from_judgments(judgments: JudgmentTable, dataset: str, *, semantic: SemanticConfig | None = None,
                         out_dir: Path | None = None, file: str | None = None,
                         progress: Callable[[str], None] | None = None,
                         ) -> tuple[list[tuple[str, dict[str, Any]]], dict[int, str]]:
    """(where, card) per system, and entry id → judgments key. ``dataset`` is a language pair (``en-de``)."""
    segments = judgments.subset(dataset).segments()
    check_texts(segments, file)
    try:
        src, tgt = dataset.split("-")
    except ValueError:
        raise UserError(f"--from-judgments needs a language-pair dataset such as en-de, not {dataset!r}") from None
    keys = list(dict.fromkeys(s.entry for s in segments))
    ids = entry_ids(keys)
    by_entry = {s.entry: s for s in segments}  # source and reference: the same for every system
    entries = [Entry(id=ids[k], source=by_entry[k].source or "", reference=by_entry[k].reference or "") for k in keys]
    digest = hashlib.sha256("\n".join(f"{e.id}\t{e.source}\t{e.reference}" for e in entries).encode()).hexdigest()
    data = Dataset(info=DatasetInfo(id=f"judgments-{dataset}", source_language=src, target_language=tgt),
                   entries=entries, sha256=digest)
    target, source = language_card(tgt), language_card(src)
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    cards = []
    for system in judgments.subset(dataset).systems():
        outputs = {s.entry: s.hypothesis or "" for s in segments if s.system == system}
        sub = data if len(outputs) == len(keys) else data.model_copy(
            update={"entries": [e for e, k in zip(entries, keys, strict=True) if k in outputs]})
        translations = [Translation(ids[k], outputs[k]) for k in keys if k in outputs]
        identity = MethodIdentity(name=system, method_class=MethodClass.CUSTOM_PLUGIN, version="judgments",
                                  model_slug=system, config={"judgments_dataset": dataset}, provider="file")
        info = RunInfo(f"{dataset}-{system}", stamp, 0.0, "judgments", bootstrap=BootstrapConfig(n_resamples=0))
        if progress:
            progress(system)
        card, _ = build_card(sub, identity, translations, info, target, source,
                             opt_in=[SemanticScore(semantic)] if semantic else ())
        where = f"{system} (scored from {file or 'the judgments'})"
        if out_dir is not None:
            where = str(write_card(card, out_dir / f"{_safe(system)}.json", None))
        cards.append((where, card))
    return cards, {i: k for k, i in ids.items()}


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)

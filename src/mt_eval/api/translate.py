"""Translate without scoring: the measured method deployed as it was measured (issue 25 item 3).

``mt-eval translate`` and ``mt-eval serve-method`` hand their segments to :func:`engine.runner.run_method`,
the very function ``run`` uses, so concurrency, retries, validators, the response cache and the method's
``open``/``close`` behave as they did when the card was made; only the scoring is left out.

Every output names the method it came from by :func:`method_hash`: a sha256 over the identity fields a run
card records (name, class, version, model, provider, ``method.config_sha256``, ``system_prompt_sha256``, the
coaching text), so :func:`card_method_hash` computes the same value from a sealed card without running
anything, and a community can check that what it runs is the configuration that earned the card's tier.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.api.loops import run_blocking
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry, Provenance
from mt_eval.engine.runner import run_method
from mt_eval.errors import UserError
from mt_eval.hashing import canonical_json, sha256_text
from mt_eval.methods.base import Method, MethodIdentity, Translation
from mt_eval.version import __version__

__all__ = ["Translated", "card_method_hash", "check_card_method", "dataset_from_segments", "file_sha256",
           "identity_record", "method_hash", "translate_dataset", "translate_dataset_async"]


def _hash_fields(name: str, method_class: str, version: str, model_slug: str, provider: str, config_sha256: str,
                 system_prompt_sha256: str, coaching: str | None) -> str:
    fields = {"name": name, "method_class": method_class, "version": version, "model_slug": model_slug,
              "provider": provider, "config_sha256": config_sha256, "system_prompt_sha256": system_prompt_sha256,
              "coaching_sha256": sha256_text(coaching) if coaching is not None else None}
    return sha256_text(canonical_json(fields))


def method_hash(identity: MethodIdentity) -> str:
    """The method card hash of a live method: the same fields, hashed the same way, as a card records them
    (``runcard.builder``: ``method.config_sha256`` is sha256 of the canonical config JSON)."""
    return _hash_fields(identity.name, identity.method_class.value, identity.version, identity.model_slug,
                        identity.provider, sha256_text(canonical_json(identity.config)),
                        sha256_text(identity.system_prompt), identity.coaching)


def card_method_hash(card: Mapping[str, Any]) -> str:
    """The method card hash of a sealed run card, from the fields it records (nothing re-run)."""
    method = card["method"]
    return _hash_fields(str(method["name"]), str(method["method_class"]), str(method["version"]),
                        str(card["model_slug"]), str(card["config"]["api_provider"]), str(method["config_sha256"]),
                        str(card["system_prompt_sha256"]), (card.get("method_config") or {}).get("coachingPrompt"))


def identity_record(method: Method) -> dict[str, Any]:
    """What ``GET /method`` and the provenance record say about the method (its prompt by hash only)."""
    ident = method.identity
    return {"name": ident.name, "method_class": ident.method_class.value, "version": ident.version,
            "model_slug": ident.model_slug, "provider": ident.provider, "config": ident.config,
            "system_prompt_sha256": sha256_text(ident.system_prompt), "method_hash": method_hash(ident),
            "harness_version": __version__}


def check_card_method(method: Method, card: Mapping[str, Any], *, file: str | None = None) -> str:
    """The card's method hash when ``method`` is the card's method; else one line naming what differs."""
    want, got = card_method_hash(card), method_hash(method.identity)
    if want != got:
        ident, rec = method.identity, card["method"]
        differs = [k for k, a, b in (("name", ident.name, rec["name"]), ("version", ident.version, rec["version"]),
                                     ("config", sha256_text(canonical_json(ident.config)), rec["config_sha256"]),
                                     ("system prompt", sha256_text(ident.system_prompt), card["system_prompt_sha256"]))
                   if a != b] or ["identity"]
        raise UserError(f"the method built here is not the card's: method hash {got[:12]} != card's {want[:12]} "
                        f"({', '.join(differs)} differ)", file=file,
                        hint="run the configuration the card records (or drop --method to use the card's own)")
    return want


def dataset_from_segments(segments: Sequence[str], source_lang: str, target_lang: str,
                          dataset_id: str = "translate") -> Dataset:
    """Segments 1..n as a dataset with no references (a method never sees one: ``engine.runner.request_for``)."""
    entries = [Entry(id=i + 1, source=text, reference="", provenance=Provenance.CORPUS)
               for i, text in enumerate(segments)]
    data = "".join(s + "\n" for s in segments).encode("utf-8")
    info = DatasetInfo(id=dataset_id, source_language=source_lang, target_language=target_lang,
                       language_pair=f"{source_lang.upper()}→{target_lang.upper()}")
    return Dataset(info=info, entries=entries, sha256=hashlib.sha256(data).hexdigest(), path="<segments>")


@dataclass(frozen=True)
class Translated:
    """The outputs in input order and the provenance record that goes with them."""

    translations: list[Translation]
    provenance: dict[str, Any]

    @property
    def failed(self) -> list[Translation]:
        return [t for t in self.translations if t.error is not None]


async def translate_dataset_async(method: Method, dataset: Dataset, *, input_sha256: str,
                                  card_hash: str | None = None) -> Translated:
    """Translate every entry through ``run_method`` (no journal: nothing here is resumed or scored)."""
    got, elapsed = await run_method(method, dataset, source_language=dataset.info.source_language,
                                    target_language=dataset.info.target_language)
    provenance = {"method": identity_record(method), "method_hash": method_hash(method.identity),
                  "harness_version": __version__, "input_sha256": input_sha256, "segments": len(got),
                  "source_language": dataset.info.source_language, "target_language": dataset.info.target_language,
                  "failed": sum(t.error is not None for t in got), "elapsed_seconds": round(elapsed, 3),
                  **({"run_card_hash": card_hash} if card_hash else {})}
    return Translated(got, provenance)


def translate_dataset(method: Method, dataset: Dataset, *, input_sha256: str,
                      card_hash: str | None = None) -> Translated:
    """:func:`translate_dataset_async`, blocking (inside a running loop it runs on a worker thread)."""
    return run_blocking(translate_dataset_async(method, dataset, input_sha256=input_sha256, card_hash=card_hash))


def file_sha256(path: Path) -> str:
    """The input's sha256 as the provenance records it: of the file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()

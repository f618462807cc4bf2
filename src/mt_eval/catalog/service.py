"""Fetching a catalogue entry into the cache as a corpus file in our schema, with its provenance.

The converted file is deterministic (no fetch time inside, keys sorted), so the same upstream bytes give
the same corpus sha256 on every machine and cards scored on one compare with cards scored on another.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.catalog.adapters import Plan, Segment, bcp47, plan
from mt_eval.catalog.cache import Cache, data_dir
from mt_eval.catalog.entries import FAMILIES, Family
from mt_eval.catalog.fetch import FetchOptions, download, sha256_file
from mt_eval.errors import UserError


@dataclass(frozen=True)
class Fetched:
    path: Path
    plan: Plan
    entry_count: int
    downloaded: int
    """Files downloaded by this call (0: everything came from the cache)."""


def _md5(path: Path) -> str:
    digest = hashlib.md5(usedforsecurity=False)
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def licence_refusal(family: Family, dataset_id: str) -> UserError:
    return UserError(f"the {family.licence} licence of {family.name} is not accepted yet: {family.terms}",
                     hint=f"read it (mt-eval datasets show {dataset_id}), then "
                          f"mt-eval datasets fetch {dataset_id} --accept-licence")


def _file(cache: Cache, the_plan: Plan, url: str, options: FetchOptions) -> tuple[Path, str, bool]:
    """The upstream file, fetched unless cached; its sha256 checked against the pin, else against the one
    recorded at first fetch (recorded now if this is the first)."""
    path = cache.raw_path(url)
    expected = the_plan.family.pinned.get(url) or cache.recorded_sha256(url)
    fresh = not path.exists()
    if fresh:
        got = download(url, path, options=options, expected_sha256=expected)
    else:
        got = sha256_file(path)
        if expected is not None and got != expected:
            raise UserError(f"cached file changed: sha256 {got[:16]}…, expected {expected[:16]}…", file=str(path),
                            hint="delete it and fetch again")
    pinned_md5 = the_plan.md5.get(url)
    if pinned_md5 is not None and _md5(path) != pinned_md5:
        path.unlink()
        raise UserError(f"md5 mismatch for {options.resolve(url)}: sacrebleu's registry pins {pinned_md5}",
                        hint="the upstream tarball changed or the mirror serves another file; nothing was kept")
    if expected is None:
        cache.record_sha256(url, got)
    return path, got, fresh


def _document(the_plan: Plan, segments: list[Segment], files: list[dict[str, str]]) -> dict[str, Any]:
    family = the_plan.family
    envelope = {
        "id": the_plan.dataset_id, "version": family.version,
        "language_pair": f"{the_plan.source_language}-{the_plan.target_language}",
        "source_language": the_plan.source_language, "target_language": the_plan.target_language,
        "license": family.licence, "provenance": ["corpus"],
        # what a CC BY(-SA) licence asks of every page showing the data (the store and web read this field)
        "attribution": f"{family.citation} {family.homepage} ({family.licence})",
        "upstream": {"family": family.name, "title": family.title, "homepage": family.homepage,
                     "version": family.version, "citation": family.citation, "files": files},
        "exposure": the_plan.facts.as_dict(),
    }
    entries = [{"id": s.id, "source": s.source, "reference": s.references[0],
                **({"references": list(s.references)} if len(s.references) > 1 else {})} for s in segments]
    return {"dataset": envelope, "entries": entries}


def fetch_corpus(dataset_id: str, *, cache: Cache, options: FetchOptions, accept_licence: bool = False,
                 refresh: bool = False) -> Fetched:
    """The corpus file for a catalogue id: from the cache, or fetched, checked and converted now."""
    the_plan = plan(dataset_id)
    family = the_plan.family
    if not cache.accepted(family.name, family.licence):
        if not accept_licence:
            raise licence_refusal(family, dataset_id)
        cache.accept(family.name, family.licence)
    target = cache.corpus_path(the_plan.dataset_id)
    if target.exists() and not refresh:
        entries = json.loads(target.read_text(encoding="utf-8")).get("entries", [])
        return Fetched(target, the_plan, len(entries), 0)
    paths, files, downloaded = [], [], 0
    for url in the_plan.urls:
        path, sha, fresh = _file(cache, the_plan, url, options)
        paths.append(path)
        files.append({"url": url, "sha256": sha})
        downloaded += fresh
    segments = the_plan.convert(paths)
    if not segments:
        raise UserError(f"{dataset_id}: the upstream files hold no segment", hint="check the language codes")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    text = json.dumps(_document(the_plan, segments, files), ensure_ascii=False, indent=1, sort_keys=True)
    tmp.write_text(text + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return Fetched(target, the_plan, len(segments), downloaded)


def corpus_file(dataset_id: str, env: Mapping[str, str]) -> Path:
    """The corpus file ``--corpus ID`` loads: the environment gives the cache (``MT_EVAL_DATA``), offline mode
    and a mirror; the licence must have been accepted once with ``datasets fetch ID --accept-licence``."""
    return fetch_corpus(dataset_id, cache=Cache(data_dir(env)), options=FetchOptions.from_env(env)).path


def list_families(*, lang: str | None = None, search: str | None = None) -> list[Family]:
    """Families matching a language code (upstream's or BCP-47) and a word in their name, title or usage."""
    found = []
    for family in FAMILIES.values():
        # upstream's spelling (spa, spa_Latn) or ours (es): both are folded to our BCP-47 code
        if lang and not any(code.lower() == lang.lower() or bcp47(code) == bcp47(lang) for code in family.languages):
            continue
        if search and search.lower() not in f"{family.name} {family.title} {family.usage}".lower():
            continue
        found.append(family)
    return found

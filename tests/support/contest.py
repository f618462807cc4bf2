"""Contest test helpers (tests/contest/): a real corpus (NTREX-128 eng→spa), a custodian's age identity, the
community's consent record, a created contest; nothing mocked.

``make_contest(tmp)`` returns a ``Made`` (root, custodian key file, recipient). Helpers that write events a
later part of the contest would write are marked as such in their docstring.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.contest.manifest import ContestManifest, create_contest, governance
from mt_eval.sovereign.consent import add_consent
from mt_eval.sovereign.vault import keygen

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "examples" / "ntrex128-eng-spa.json"
DATASET = json.loads(CORPUS.read_text(encoding="utf-8"))["dataset"]["id"]
DEV, SECRET, SEED = 12, 20, 7


@dataclass(frozen=True)
class Made:
    root: Path
    key: Path  # the custodian's age identity (1-of-1 vault)
    recipient: str
    manifest: ContestManifest


def record_consent(root: Path, document_dir: Path, dataset: str = DATASET, segments: str = "gold_standard",
                   uses: tuple[str, ...] = ("evaluation", "ranking")) -> None:
    """The community's consent record in the contest's own governance folder (what create requires)."""
    doc = document_dir / "consent.txt"
    doc.write_text("The community agrees to this contest's evaluation.\n", encoding="utf-8")
    add_consent(governance(root), dataset=dataset, language="es", given_by="Example Language Council",
                representative="A. Speaker", document=doc, given_on="2026-11-01", segments=[segments], uses=uses)


def custodian(folder: Path) -> tuple[Path, str]:
    key = folder / "custodian.key"
    return key, keygen(key)


def make_contest(tmp: Path, *, name: str = "contest", consent: bool = True, **options: Any) -> Made:
    """A created contest at ``tmp/name`` (DEV dev and SECRET secret entries, seed SEED) with consent recorded."""
    root = tmp / name
    keys = tmp / f"{name}-keys"
    keys.mkdir(parents=True)
    key, recipient = custodian(keys)
    if consent:
        record_consent(root, keys)
    fields: dict[str, Any] = {"contest_id": name, "title": "Test contest eng→spa", "organiser": "organiser",
                              "seed": SEED, "dev_size": DEV, "secret_size": SECRET, "threshold": 20.0,
                              "recipients": [recipient], **options}  # fmt: skip
    manifest = create_contest(root, CORPUS, **fields)
    return Made(root, key, recipient, manifest)


def record(root: Path, kind: str, **fields: Any) -> str:
    """TEST HELPER, standing in for the writers of later steps (entries.py, ranking.py): log one contest event
    exactly as ``contest.state`` documents its fields."""
    return governance(root).record({"kind": kind, **fields})


def submitted(root: Path, entrants: list[str]) -> None:
    """TEST HELPER: ``contest.submit`` events for ``entrants`` (entries 1..N, kind bundle, fake sha256s)."""
    for n, who in enumerate(entrants, start=1):
        record(root, "contest.submit", entry=n, entrant=who, entry_kind="bundle", sha256=f"{n:02x}" * 32)

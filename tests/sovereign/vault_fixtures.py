"""Shared fixtures for the sovereign tests: a real corpus with secret segments, custodian keys, a sealed vault.

Bind them in a test module (``sealed = vault_fixtures.sealed``; an ``import`` of the fixture names trips
ruff's F811) or import them in ``tests/sovereign/conftest.py``; pytest then sees them as fixtures.
Nothing here is mocked:

* ``sovereign_corpus`` (session): ``examples/ntrex128-eng-spa.json`` (200 real NTREX-128 eng→spa entries)
  with ``segment`` set: the first 50 entries ``gold_standard``, the next 20 ``held_out``; the other 130
  keep their ``development``/``diagnostic`` segments and stay public.
* ``custodians`` (session): two age X25519 identities made by ``vault.keygen`` (``Custodian(key, recipient)``).
* ``sealed`` (session): the corpus sealed (gold_standard + held_out) to the first custodian, in a vault
  folder (``public.json``, ``secret.age``, ``vault.json``). Tests that change a vault copy it first
  (``copy_vault``).
* ``secret_strings(corpus)``: every source and reference of the secret entries, to grep outputs for;
  ``all_text(json_value)``: every string of a parsed JSON value (grep that, not a JSON dump, which
  escapes quotes).
* ``GOLD, HELD_OUT``: the secret entry counts.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa.json"
GOLD, HELD_OUT = 50, 20
SECRET_SEGMENTS = ("gold_standard", "held_out")


@dataclass(frozen=True)
class Custodian:
    key: Path
    recipient: str

    def secret(self) -> str:
        """The identity's AGE-SECRET-KEY line (what must never appear in any other file)."""
        return next(ln for ln in self.key.read_text().splitlines() if ln.startswith("AGE-SECRET-KEY-"))


def write_sovereign_corpus(path: Path) -> Path:
    data = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    for i, entry in enumerate(data["entries"]):
        if i < GOLD:
            entry["segment"] = "gold_standard"
        elif i < GOLD + HELD_OUT:
            entry["segment"] = "held_out"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def secret_entries(corpus: Path) -> list[dict[str, object]]:
    entries = json.loads(corpus.read_text(encoding="utf-8"))["entries"]
    return [e for e in entries if e.get("segment") in SECRET_SEGMENTS]


def secret_strings(corpus: Path) -> list[str]:
    """Every source and reference of the secret entries."""
    return [str(e[k]) for e in secret_entries(corpus) for k in ("source", "reference")]


def all_text(value: object) -> str:
    """Every string (keys too) in a JSON value, one per line: JSON escaping must not hide a quoted text."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(f"{k}\n{all_text(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return "\n".join(all_text(v) for v in value)
    return ""


def files_under(*roots: Path) -> Iterable[Path]:
    for root in roots:
        yield from (p for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file())


def copy_vault(vault: Path, to: Path) -> Path:
    shutil.copytree(vault, to)
    return to


@pytest.fixture(scope="session")
def sovereign_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sovereign_corpus(tmp_path_factory.mktemp("sovereign-corpus") / "corpus.json")


@pytest.fixture(scope="session")
def custodians(tmp_path_factory: pytest.TempPathFactory) -> list[Custodian]:
    from mt_eval.sovereign.vault import keygen

    folder = tmp_path_factory.mktemp("custodians")
    return [Custodian(folder / f"{name}.key", keygen(folder / f"{name}.key")) for name in ("alice", "bob")]


@pytest.fixture(scope="session")
def sealed(tmp_path_factory: pytest.TempPathFactory, sovereign_corpus: Path, custodians: list[Custodian]) -> Path:
    from mt_eval.sovereign.vault import seal

    out = tmp_path_factory.mktemp("sealed") / "vault"
    seal(sovereign_corpus, list(SECRET_SEGMENTS), [custodians[0].recipient], out)
    return out


DATASET_ID, LANGUAGE = "ntrex128-eng-spa-demo", "es"  # the sovereign corpus's dataset.id and target language


def give_consent(governance: Path, dataset: str = DATASET_ID, language: str = LANGUAGE,
                 segments: tuple[str, ...] = SECRET_SEGMENTS) -> Path:
    """Record the community's consent for the sovereign corpus in ``governance`` (gold runs need it:
    ``sovereign/consent.py``); the signed document is a small text file beside it."""
    from mt_eval.sovereign.consent import add_consent
    from mt_eval.sovereign.governance import Governance

    governance.mkdir(parents=True, exist_ok=True)
    document = governance.parent / f"consent-{dataset}-{language}.txt"
    document.write_text(f"The Example Language Council consents to evaluation on {dataset} ({language}).\n")
    add_consent(Governance(governance), dataset=dataset, language=language, given_by="Example Language Council",
                representative="A. Speaker", document=document, given_on="2026-11-01", segments=segments)
    return governance

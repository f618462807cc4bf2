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
                   uses: tuple[str, ...] = ("evaluation", "ranking", "public_cards")) -> None:
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


# ---------------------------------------------------------------- the three must-show artefacts (helper C2)

APERTIUM_BUNDLE = REPO / "examples" / "bundles" / "apertium-command"
HOSTILE_SCRIPT = '''"""A hostile contest entry: tries to read the contest's vault and the custodian's key, to write
outside its folder, and to exfiltrate through the size of its output. Every attempt's outcome is put in the
reply, so a test sees that it obtained nothing; each reply is padded by TARGETS['pad'] bytes (4 MB: past the
protocol's line limit)."""
import json, os, sys

with open("targets.json", encoding="utf-8") as fh:
    TARGETS = json.load(fh)


def attempt(path, mode):
    try:
        with open(path, mode) as fh:
            return "READ:" + fh.read(64).hex() if mode == "rb" else (fh.write(b"x"), "WROTE")[1]
    except OSError as exc:
        return "BLOCKED:" + exc.__class__.__name__


for line in sys.stdin:
    request = json.loads(line)
    seen = [attempt(p, "rb") for p in TARGETS["read"]] + [attempt(p, "wb") for p in TARGETS["write"]]
    reply = {"entry_id": request["entry_id"], "predicted": " ".join(seen) + " " + "A" * TARGETS["pad"]}
    sys.stdout.write(json.dumps(reply) + "\\n")
    sys.stdout.flush()
'''


def apertium_bundle(tmp: Path) -> Path:
    """The Apertium eng-spa command bundle (examples/bundles/apertium-command), copied to ``tmp/apertium``."""
    import shutil

    return Path(shutil.copytree(APERTIUM_BUNDLE, tmp / "apertium", ignore=shutil.ignore_patterns("__pycache__")))


def tiny_model(tmp: Path) -> Path:
    """A weights-only tiny NLLB-style checkpoint (support.nmt: safetensors + tokenizer, random weights), at
    ``tmp/tiny-model``: it translates nonsense, deterministically."""
    from support.nmt import build_tiny_nllb

    return build_tiny_nllb(tmp / "tiny-model")


def hostile_bundle(tmp: Path, contest_root: Path, custodian_key: Path, pad: int = 4 << 20) -> Path:
    """A bundle that tries to read ``contest_root``'s vault and the custodian's identity, to write beside them
    and into /usr, and to exfiltrate through a 4 MB output (``pad`` bytes after what it saw); qualify finds it
    protocol_error, never scored. With ``pad=0`` every reply is just what each attempt obtained."""
    root = tmp / "hostile"
    root.mkdir()
    (root / "method.toml").write_text('name = "hostile"\nversion = "1"\nmethod_class = "custom-plugin"\n'
                                      'terms_version = "sovereign-terms-1"\n[entry]\ncommand = ["python3", '
                                      '"hostile.py"]\n', encoding="utf-8")
    (root / "README.md").write_text("# hostile\n", encoding="utf-8")
    (root / "hostile.py").write_text(HOSTILE_SCRIPT, encoding="utf-8")
    vault = contest_root / "vault"
    targets = {"read": [str(p) for p in sorted(vault.iterdir())] + [str(custodian_key), "/etc/shadow"],
               "write": [str(contest_root / "pwned"), "/usr/pwned"], "pad": pad}
    (root / "targets.json").write_text(json.dumps(targets), encoding="utf-8")
    return root


# ---------------------------------------------------------------- executed entries scored here (helper C1)


def reference_outputs(made: Made, kind: str) -> dict[int, str]:
    """Outputs of known quality for the secret split (read from the vault with the custodian's key):
    ``perfect`` (the references), ``drop_even`` / ``drop_odd`` (the references minus their last word at even /
    odd positions: tied with each other, below perfect), ``half`` (the first half of the words: far below)."""
    from mt_eval.contest.manifest import SECRET_SEGMENT
    from mt_eval.sovereign.vault import open_segment

    out = {}
    for i, e in enumerate(open_segment(made.root / "vault", made.key, SECRET_SEGMENT).entries):
        words = e.reference.split()
        text = {"perfect": words, "drop_even": words[:-1] if i % 2 == 0 else words,
                "drop_odd": words[:-1] if i % 2 else words, "half": words[: max(1, len(words) // 2)]}[kind]  # fmt: skip
        out[e.id] = " ".join(text) or words[0]
    return out


def execute_scored(made: Made, number: int, outputs: dict[int, str], entrant: str) -> dict[str, Any]:
    """TEST HELPER standing in for entries.py's submit/qualify/approve/execute, so ranking and close are tested
    on their own: logs submit, qualify and approve for entry ``number``, scores ``outputs`` on the secret split
    with the sovereign runner's own scoring (``runner.score_translations``), keeps the full card encrypted in the
    contest's governance folder as execute does, and logs ``contest.execute`` with its primary metric and CI."""
    from mt_eval.contest.manifest import SECRET_SEGMENT
    from mt_eval.methods.base import MethodClass, MethodIdentity, Translation
    from mt_eval.sovereign.public_card import store_full_card
    from mt_eval.sovereign.runner import score_translations
    from mt_eval.sovereign.vault import open_segment

    secret = open_segment(made.root / "vault", made.key, SECRET_SEGMENT)
    identity = MethodIdentity(name=f"entry-{number}", method_class=MethodClass.CUSTOM_PLUGIN, version="1",
                              model_slug=f"entry-{number}")
    card = score_translations(secret, identity, [Translation(e.id, outputs[e.id]) for e in secret.entries], 1.0,
                              f"sovereign:{SECRET_SEGMENT}")
    store_full_card(card, made.root / "vault", made.root / "governance")
    scores = card["scores"]
    ci = scores["confidence_intervals"]["chrf_plus_plus"]
    record(made.root, "contest.submit", entry=number, entrant=entrant, entry_kind="bundle",
           sha256=f"{number:02x}" * 32)
    record(made.root, "contest.qualify", entry=number, passed=True, score=50.0, reason="test helper")
    record(made.root, "contest.approve", entry=number, custodian="custodian-1")
    record(made.root, "contest.execute", entry=number, value=scores["chrf_plus_plus"],
           ci=[ci["ci_lower"], ci["ci_upper"]], composite=scores["composite"], full_run_card_hash=card["run_card_hash"])
    return card

"""What of a sovereign run card may be published, and where the rest is kept.

The full card of a gold run holds every source, reference and output (``results[]``). Published, it
would hand the secret segments to anyone, and outputs can encode sources (the residual channel of
any sandbox: a method may hide its input in its translations). So the public card is the full card
with, by construction:

* ``results`` emptied (the counts stay in ``scores``: total, evaluated, errors);
* no ``statistics`` sidecar reference: per-entry sufficient statistics would let a submitter learn
  per-entry scores across runs and hill-climb the holdout one sentence at a time;
* no ``warnings`` (free text that may quote an entry);
* the scores of ``RESULT.json``'s release rules (``release.public_scores``, docs/decisions.md §44): the
  composite at 0.01 and chrF++ in whole points (floored), the tier of that composite, the counts, the
  composite's interval widened to the same grid, breakdowns only those the governance policy declares
  public (``[release] public_breakdowns``) when every group has ≥ 10 entries; every other metric is
  null, since each value a method can move is a channel out of the vault;
* timings and usage withheld (a method may sleep, or spend tokens, to a chosen amount) and the time
  stamp kept to its day;
* a ``sovereign`` block: bundle sha256, sandbox policy and limits, egress mode, terms version,
  governance organisation, the full card's hash and the audit-log line of the run.

It is then sealed (``run_card_hash`` over the public card itself) and signed with the governance key
(a detached ``.sig``, as ``mt-eval sign`` does). A final check refuses any public card in which a
string shares a secret n-gram with a source or reference of the full card (defence in depth: the
construction above already leaves none); it is the release check of ``RESULT.json``
(``release.SecretIndex``: 3 tokens or 12 characters, case and spacing folded), applied field by
field. The full card is kept encrypted to the vault's custodians in the governance directory
(``store_full_card``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyrage
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from pyrage import x25519

from mt_eval.errors import UserError
from mt_eval.runcard.io import write_card
from mt_eval.runcard.seal import card_hash, seal
from mt_eval.runcard.signing import (
    key_signer,
    public_of,
    read_small,
    sign_card,
    write_atomic,
)
from mt_eval.sovereign.governance import (
    Governance,
    agree,
    agreement_metrics,
    card_scales,
    private_key,
    sign_public_card,
)
from mt_eval.sovereign.release import (
    NGRAM_CHARS,
    NGRAM_TOKENS,
    ReleaseSchema,
    SecretIndex,
    public_scores,
    release_schema,
)
from mt_eval.sovereign.vault import parse_recipient, parse_recipients, read_identities, read_manifest

REQUIRED = ("bundle_sha256", "sandbox", "egress", "terms_version", "organisation")
FROM_RUN = ("bundle_sha256", "sandbox", "egress", "terms_version")  # the full card's method.config holds them
DROPPED = ("warnings", "statistics")
CARDS_DIR = "cards"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def _withhold_usage(card: dict[str, Any]) -> None:
    """Timings, token counts and cost withheld (null, tokens 0: the card's schema keeps them integers);
    the time stamp kept to its day (a method can move it by one run's wall time at most)."""
    card["elapsed_seconds"] = 0.0
    card["speed"] = {**{k: None for k in card.get("speed") or {}}, "elapsed_seconds": 0.0}
    card["cost"] = {k: None for k in card.get("cost") or {}}
    for block in ("tokens", "totals"):
        card[block] = {k: 0 if isinstance(v, int) else None for k, v in (card.get(block) or {}).items()}
    card["timestamp"] = f"{str(card.get('timestamp', ''))[:10]}T00:00:00Z"


def _strings(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield from _strings(k, f"{path}.{k}(key)")
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]")


def secret_texts(full_card: Mapping[str, Any]) -> list[str]:
    """Every source and reference of the full card's entries."""
    texts: list[str] = []
    for r in full_card.get("results") or []:
        texts += [str(r.get(k)) for k in ("source", "reference") if r.get(k)]
        texts += [str(t) for t in r.get("references") or [] if t]
    return texts


def leaking_field(card: Mapping[str, Any], secrets: SecretIndex) -> str | None:
    """The first field of ``card`` holding a secret n-gram (the release check, ``release.SecretIndex``,
    applied to each string alone), else ``None``."""
    return next((path.lstrip(".") for path, text in _strings(card) if secrets.leaks(text)), None)


def public_card(full_card: Mapping[str, Any], sovereign: Mapping[str, Any],
                key: Path | Ed25519PrivateKey | None = None, release: ReleaseSchema | None = None) -> dict[str, Any]:
    """The publishable, sealed card of a sovereign run (see the module docstring); ``UserError`` when
    the ``sovereign`` block lacks a required field or the result would leak a secret text.

    With the governance ``key``, the block names its public key (``governance_key_id``,
    ``governance_public_key``) under the seal: the store then accepts the card only with a valid
    signature by exactly that key, so a signature by another registered key cannot stand in for it."""
    missing = [k for k in REQUIRED if sovereign.get(k) in (None, "")]
    if missing:
        raise UserError(f"the sovereign block lacks {', '.join(missing)}")
    if not isinstance(sovereign["bundle_sha256"], str) or not _HEX64.fullmatch(sovereign["bundle_sha256"]):
        raise UserError("sovereign.bundle_sha256 is not 64 lowercase hex digits")
    full_hash = full_card.get("run_card_hash")
    if not isinstance(full_hash, str) or card_hash(full_card) != full_hash:
        raise UserError("the full card's seal does not hold; a public card is made only from a sealed card")
    card = {k: v for k, v in full_card.items() if k not in DROPPED}
    card["results"] = []
    card["scores"] = public_scores(full_card.get("scores") or {}, release or ReleaseSchema())
    _withhold_usage(card)
    block = {**dict(sovereign), "full_run_card_hash": full_hash, "results_withheld": True}
    if key is not None:
        public = public_of(private_key(key))
        block |= {"governance_key_id": public.key_id, "governance_public_key": public.b64}
    card["sovereign"] = block
    where = leaking_field(card, SecretIndex(secret_texts(full_card)))
    if where is not None:  # the field is named, never the text
        raise UserError(f"refused: the public card's field {where} contains secret text (≥ {NGRAM_TOKENS} tokens "
                        f"or ≥ {NGRAM_CHARS} characters of a source or reference)")
    return seal(card)


def write_public_card(card: Mapping[str, Any], path: Path, key: Path, signer: str | None = None) -> tuple[Path, Path]:
    """Write the public card and its governance signature (``<card>.sig``); returns both paths."""
    sign_public_card(card, key)  # checks before anything is written
    write_card(dict(card), Path(path))
    _, sig = sign_card(path, str(card["run_card_hash"]), private_key(key),
                       signer if signer is not None else key_signer(key))
    return Path(path), sig


def store_full_card(full_card: Mapping[str, Any], vault_dir: Path, governance_dir: Path) -> Path:
    """Keep the full card (texts and all) in the governance directory, encrypted to the vault's current
    recipients: ``DIR/cards/<run_card_hash>.card.age``. Never over an existing file."""
    digest = full_card.get("run_card_hash")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest) or card_hash(full_card) != digest:
        raise UserError("the full card's seal does not hold; not stored")
    recipients = [parse_recipient(r) for r in read_manifest(vault_dir).recipients]
    folder = Path(governance_dir) / CARDS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{digest}.card.age"
    if path.exists():
        return path  # the same hash is the same card
    data = json.dumps(full_card, ensure_ascii=False, sort_keys=True, allow_nan=False).encode("utf-8")
    write_atomic(path, pyrage.encrypt(data, recipients))
    return path


CustodianIdentity = Path | Sequence[x25519.Identity]
"""What opens the stored full cards: a custodian's age identity file, or identities already in memory
(a quorum's reconstructed identity is never written to a file)."""


def custodian_identities(identity: CustodianIdentity) -> list[x25519.Identity]:
    """The age identities of ``identity`` (a file is read with ``vault.read_identities``' checks)."""
    return read_identities(identity) if isinstance(identity, Path) else list(identity)


def load_full_card(governance_dir: Path, run_card_hash: str, identity: CustodianIdentity) -> dict[str, Any]:
    """A stored full card, decrypted in memory with a custodian's identity and checked against its hash."""
    path = Path(governance_dir) / CARDS_DIR / f"{run_card_hash}.card.age"
    if not _HEX64.fullmatch(run_card_hash) or not path.is_file():
        raise UserError(f"no stored full card {run_card_hash[:16]}…", file=str(path.parent))
    try:
        card = json.loads(pyrage.decrypt(path.read_bytes(), custodian_identities(identity)))
    except pyrage.DecryptError:
        raise UserError("cannot decrypt: not a recipient of this card, or the file was tampered",
                        file=str(path)) from None
    if not isinstance(card, dict) or card_hash(card) != run_card_hash:
        raise UserError("the decrypted card's seal is not its file name's hash; refused", file=str(path))
    return card



def full_card_hash(governance_dir: Path, run: str) -> str:
    """The stored full card of ``run``: a ``RESULT.json`` the run released, the hash of its audit line
    (``sovereign.audit_line_sha256`` there), or the full card's ``run_card_hash``; hashes may be given
    by their first 8+ hex digits, and must name one run."""
    folder = Path(governance_dir) / CARDS_DIR
    prefix = _released_audit_hash(Path(run)) if run.endswith(".json") else run
    if not re.fullmatch(r"[0-9a-f]{8,64}", prefix):
        raise UserError(f"not a RESULT.json, run card hash or audit line hash (8 to 64 lowercase hex digits): "
                        f"{prefix[:80]!r}")
    runs = {str(ev.get("run_card_hash")) for ev in Governance(governance_dir).events()
            if ev.get("kind") == "run" and str(ev["hash"]).startswith(prefix) and ev.get("run_card_hash")}
    prefix = runs.pop() if len(runs) == 1 else prefix
    found = sorted(p.name.split(".")[0] for p in folder.glob(f"{prefix}*.card.age")) if folder.is_dir() else []
    if len(found) != 1:
        raise UserError(f"{'no' if not found else 'more than one'} stored full card matches {prefix}",
                        file=str(folder), hint="give the RESULT.json of the run; mt-eval governance audit --json "
                                               "lists each run's run_card_hash")
    return found[0]


def _released_audit_hash(path: Path) -> str:
    """The audit line hash a RESULT.json names (its ``sovereign.audit_line_sha256``)."""
    try:
        block = json.loads(read_small(path, "RESULT.json", 1 << 20)).get("sovereign")
    except (ValueError, AttributeError):
        raise UserError("not a RESULT.json (not a JSON object)", file=str(path)) from None
    digest = block.get("audit_line_sha256") if isinstance(block, dict) else None
    if not isinstance(digest, str):
        raise UserError("no sovereign.audit_line_sha256: not the RESULT.json of a gold run", file=str(path))
    return digest


def agreed_public_card(governance_dir: Path, identity: CustodianIdentity, first: str, second: str,
                       key: Path | Ed25519PrivateKey) -> dict[str, Any]:
    """The public card of run ``first``, made only when run ``second`` of the same bundle, sandbox and
    entries agrees with it within ±2 % (§9.2) and neither bundle nor method is revoked.

    The ``sovereign`` block comes from the full card (its ``method.config``: bundle sha256, sandbox
    policy and limits, egress, terms version), the organisation from the governance policy; it adds
    the audit line of the run and the agreement (the second run's hash, the metrics checked)."""
    gov = Governance(governance_dir)
    organisation = gov.policy().organisation
    if not organisation:
        raise UserError("the governance policy names no organisation",
                        hint='mt-eval governance policy --organisation "NAME"')
    h1, h2 = full_card_hash(governance_dir, first), full_card_hash(governance_dir, second)
    if h1 == h2:
        raise UserError("§9.2 needs two different runs; both hashes name the same card")
    a, b = load_full_card(governance_dir, h1, identity), load_full_card(governance_dir, h2, identity)
    config_a, config_b = ((c.get("method") or {}).get("config") or {} for c in (a, b))
    block = {k: config_a.get(k) for k in FROM_RUN}
    if block != {k: config_b.get(k) for k in FROM_RUN} or a["dataset"] != b["dataset"]:
        raise UserError("the two runs are not of the same bundle, sandbox, terms and entries")
    gov.check_not_revoked(str(block["bundle_sha256"]), str(a["method"].get("name")))
    metrics = agreement_metrics(a)
    problems = agree({m: a["scores"].get(m) for m in metrics}, {m: b["scores"].get(m) for m in metrics},
                     card_scales(a))
    if problems:
        raise UserError(f"the two runs disagree beyond ±2 % (§9.2), not published: {'; '.join(problems[:3])}")
    audit = next((e["hash"] for e in gov.events() if e.get("kind") == "run" and e.get("run_card_hash") == h1), None)
    block |= {"organisation": organisation, "audit_line_sha256": audit,
              "agreement": {"second_run_card_hash": h2, "tolerance": "±2 % (Benchmark Spec §9.2)",
                            "metrics": metrics}}  # fmt: skip
    return public_card(a, block, key, release_schema(gov.policy().public_breakdowns))


def rotate_full_cards(governance_dir: Path, identity: CustodianIdentity, new_recipients: Sequence[str]) -> int:
    """Re-encrypt every stored full card to ``new_recipients`` (``vault rotate`` does it with the vault:
    a retired custodian key must not keep opening the texts); returns how many. A card the identity
    cannot open is refused before anything is rewritten."""
    keys = parse_recipients(new_recipients)
    folder = Path(governance_dir) / CARDS_DIR
    paths = sorted(folder.glob("*.card.age")) if folder.is_dir() else []
    cards = [load_full_card(governance_dir, p.name.split(".")[0], identity) for p in paths]
    for path, card in zip(paths, cards, strict=True):
        data = json.dumps(card, ensure_ascii=False, sort_keys=True, allow_nan=False).encode("utf-8")
        write_atomic(path, pyrage.encrypt(data, keys))
    return len(paths)

"""Entry rotation between a vault's segments (Benchmark Spec §9.3.2: "governance org can rotate entries
between segments without notice"), with the history kept in the audit log.

``rotate_entries`` moves entries of one segment to another (chosen by a seeded draw, or named) and
re-seals the vault: the secret half re-encrypted to the same recipients, ``public.json`` rewritten, the
manifest updated. Each rotation is one ``rotate_entries`` event of the governance log naming the moved
entry ids (ids are not texts; the texts never enter the log), the seed, and the corpus sha256 before and
after, so ``history`` lists every moved entry's segments over time and an old card's entry set stays known.
A rotation holds the vault folder's lock from its read to its last write: a second one at the same time is
refused rather than both re-sealing from the same read (the log would record moves the vault lost).

The vault's ``corpus_sha256`` becomes the SHA-256 of the rotated corpus as the vault's JSON writes it (the
dataset envelope and every entry in the original order): a run after a rotation records the new hash,
so ``governance rank`` never ranks it with runs of the old gold set, and old cards keep the old hash
(their ``results[]`` and ``entry_ids_sha256`` still verify; the log says which rotation separates them).

Secret and public are as the vault sealed them (its ``secret_segments``). Entries of a public segment
never move into a secret one: their texts are out, and a test item a method may have seen is no test.
Publication is the policy's decision (``policy.toml`` ``[rotation] publish_after_days``): moving an entry
from a secret segment to a public one hands its texts to everyone, so it is refused unless the policy sets
``publish_after_days`` and the entry left ``gold_standard`` at least that many days ago (an entry still in
``gold_standard`` left it 0 days ago: only ``publish_after_days = 0`` publishes it directly; an entry that
never was in ``gold_standard`` may be published once the policy sets the key). By default nothing secret
is ever published: a rotated-out gold entry goes to another secret segment, such as ``held_out``.
Consent (decisions §75) is required as for sealing: for the target segment when it is secret, and for the
source segment when entries leave it for a public one.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyrage

from mt_eval.corpus.models import Segment
from mt_eval.errors import UserError
from mt_eval.runcard.signing import write_atomic
from mt_eval.sovereign.consent import require_consent
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.vault import (
    MANIFEST,
    PAYLOAD_KIND,
    PUBLIC,
    SECRET,
    SealedVault,
    VaultKey,
    entry_json,
    held,
    json_bytes,
    open_vault,
    parse_recipients,
    read_manifest,
    segment_counts,
)

KIND = "rotate_entries"
GOLD = Segment.GOLD_STANDARD.value


@dataclass(frozen=True)
class Move:
    """One entry's move in one rotation."""

    entry_id: int
    source: str
    target: str
    when: str
    event: str  # the audit line hash of the rotation


@dataclass(frozen=True)
class Rotation:
    """What a rotation did: the re-sealed vault, the entries moved, its audit line."""

    vault: SealedVault
    moved: tuple[int, ...]
    event: str


def _segment(name: str, option: str) -> str:
    allowed = [s.value for s in Segment]
    if name not in allowed:
        raise UserError(f"{option}: unknown segment {name!r} (allowed: {', '.join(allowed)})", field=option)
    return name


def history(gov: Governance, corpus_sha256: str) -> dict[int, list[Move]]:
    """Every moved entry of the vault whose corpus is now ``corpus_sha256``, its moves oldest first.

    The vault's rotations are the chain of events each of which produced the corpus the next one started
    from, walked back from ``corpus_sha256``: another vault of the same dataset in the same log (a copy
    rotated otherwise) has its own chain. Moving an entry out and back returns the corpus to an earlier
    hash, so each step takes the latest rotation *before* the one already taken, never one after it."""
    rotations = [ev for ev in gov.events() if ev.get("kind") == KIND]
    chain, digest, before_seq = [], corpus_sha256, float("inf")
    while True:
        earlier = [ev for ev in rotations if ev.get("corpus_sha256") == digest and int(ev["seq"]) < before_seq]
        if not earlier:
            break
        ev = max(earlier, key=lambda e: int(e["seq"]))
        chain.append(ev)
        digest, before_seq = str(ev.get("corpus_sha256_before")), int(ev["seq"])
    out: dict[int, list[Move]] = {}
    for ev in reversed(chain):
        for entry_id in ev.get("ids") or []:
            out.setdefault(int(entry_id), []).append(Move(int(entry_id), str(ev["from"]), str(ev["to"]),
                                                          str(ev["when"]), str(ev["hash"])))
    return out


def _choose(available: list[int], source: str, count: int | None, seed: int | None, ids: Sequence[int]) -> list[int]:
    """The entries to move: ``ids`` (each in ``source``), or ``count`` drawn with ``seed`` from ``available``."""
    if ids:
        named = list(dict.fromkeys(ids))  # an id named twice moves once
        missing = [i for i in named if i not in available]
        if missing:
            raise UserError(f"--ids: entry {missing[0]} is not in {source}", field="--ids")
        if count is not None and count != len(named):
            raise UserError(f"--count {count} but {len(named)} distinct ids named", field="--count")
        return named
    if count is None or seed is None:
        raise UserError("give --count N and --seed S (a reproducible draw), or --ids", field="--count")
    if not 1 <= count <= len(available):
        raise UserError(f"--count: {source} holds {len(available)} entries; give 1 to {len(available)}",
                        field="--count")
    return random.Random(seed).sample(sorted(available), count)  # sorted: the draw depends on ids, not order


def _check_publication(gov: Governance, corpus_sha256: str, moved: list[int], source: str, target: str) -> None:
    """Refuse moving secret entries into a public segment before the policy allows it (module docstring)."""
    days = gov.policy().publish_after_days
    if days is None:
        raise UserError(f"refused: moving {source} entries into {target}, a public segment, publishes their texts, "
                        "and the policy publishes no secret entry (rotation.publish_after_days is not set)",
                        file=str(gov.policy_path), hint="move them to another secret segment (--to held_out), or "
                                                        "set [rotation] publish_after_days in policy.toml")
    now, moves = datetime.now(UTC), history(gov, corpus_sha256)
    for entry_id in moved:
        left = [m for m in moves.get(entry_id, []) if m.source == GOLD]
        if source != GOLD and not left:
            continue  # not in gold_standard now and never rotated out of it: never was gold
        since = now if source == GOLD else datetime.fromisoformat(left[-1].when)
        waited = (now - since).total_seconds() / 86400
        if waited < days:
            raise UserError(f"refused: entry {entry_id} left {GOLD} {int(waited)} day(s) ago; the policy publishes "
                            f"a rotated-out gold entry {days} day(s) after (rotation.publish_after_days)",
                            file=str(gov.policy_path))


def rotate_entries(vault_dir: Path, key: VaultKey, gov: Governance, *, source: str, target: str,
                   count: int | None = None, seed: int | None = None, ids: Sequence[int] = (),
                   who: str | None = None) -> Rotation:
    """Move entries of ``source`` to ``target`` and re-seal the vault (module docstring); ``key`` opens it
    (an identity file, or the identity rebuilt from a quorum's shares). Nothing is written when refused."""
    source, target = _segment(source, "--from"), _segment(target, "--to")
    if source == target:
        raise UserError("--from and --to name the same segment", field="--to")
    read_manifest(vault_dir)  # a missing folder or manifest is named before the lock is tried
    with held(Path(vault_dir)):
        return _rotate(Path(vault_dir), key, gov, source, target, count, seed, ids, who)


def _rotate(vault_dir: Path, key: VaultKey, gov: Governance, source: str, target: str, count: int | None,
            seed: int | None, ids: Sequence[int], who: str | None) -> Rotation:
    vault = read_manifest(vault_dir)
    full = open_vault(vault_dir, key)
    secret_segments = set(vault.manifest.get("secret_segments") or [])
    available = [e.id for e in full.entries if e.segment.value == source]
    if not available:
        raise UserError(f"the vault has no {source} entries", file=str(vault_dir),
                        hint="mt-eval vault inspect lists its segments")
    moved = _choose(available, source, count, seed, list(ids))
    publishing = source in secret_segments and target not in secret_segments
    if source not in secret_segments and target in secret_segments:  # exposed texts would pose as unseen ones
        raise UserError(f"refused: {source} is public in this vault; its entries' texts are out, so in {target} "
                        "they would be test items a method may have seen (§9.2.1)", field="--from")
    if target in secret_segments:
        require_consent(gov, full.info, [target], doing="rotate entries into")
    elif publishing:
        require_consent(gov, full.info, [source], doing="publish entries of")
        _check_publication(gov, vault.corpus_sha256, moved, source, target)
    chosen = set(moved)
    entries = [e.model_copy(update={"segment": Segment(target)}) if e.id in chosen else e for e in full.entries]
    public = [e for e in entries if e.segment.value not in secret_segments]
    secret = [e for e in entries if e.segment.value in secret_segments]
    if not secret or not public:
        raise UserError(f"refused: the vault's {'secret' if not secret else 'public'} half would be empty",
                        file=str(vault_dir))
    info = full.info.model_dump(mode="json", exclude_none=True)
    corpus_sha = hashlib.sha256(json_bytes({"dataset": info, "entries": [entry_json(e) for e in entries]}))
    public_bytes = json_bytes({"dataset": info, "entries": [entry_json(e) for e in public]})
    payload = {"kind": PAYLOAD_KIND, "version": 1, "corpus_sha256": corpus_sha.hexdigest(),
               "public_sha256": hashlib.sha256(public_bytes).hexdigest(), "order": [e.id for e in entries],
               "entries": [entry_json(e) for e in secret]}  # fmt: skip
    secret_bytes = pyrage.encrypt(json_bytes(payload), parse_recipients(vault.recipients))
    manifest = dict(vault.manifest)
    manifest.setdefault("sealed_corpus_sha256", vault.corpus_sha256)  # the corpus as first sealed
    manifest |= {"corpus_sha256": corpus_sha.hexdigest(),
                 "entries_rotated_at": datetime.now(UTC).isoformat(timespec="seconds"),
                 "public": {**manifest["public"], "sha256": hashlib.sha256(public_bytes).hexdigest(),
                            "entries": len(public), "segments": segment_counts(public)},
                 "secret": {**manifest["secret"], "sha256": hashlib.sha256(secret_bytes).hexdigest(),
                            "entries": len(secret), "segments": segment_counts(secret)}}  # fmt: skip
    # logged first, so a rotation that reached the files is always in the history. A crash before the writes
    # leaves the vault as it was, and its history (walked back from its hash) does not include the event; a
    # crash between them leaves files that disagree with the manifest, which refuse to open rather than mislead
    event = gov.record({"kind": KIND, "dataset": full.info.id, "from": source, "to": target, "ids": moved,
                        "count": len(moved), "seed": None if ids else seed, "published": publishing,
                        "corpus_sha256_before": vault.corpus_sha256, "corpus_sha256": corpus_sha.hexdigest(),
                        "who": who})  # fmt: skip
    write_atomic(vault.path / SECRET, secret_bytes)
    write_atomic(vault.path / PUBLIC, public_bytes)
    write_atomic(vault.path / MANIFEST, json_bytes(manifest))
    return Rotation(SealedVault(vault.path, manifest), tuple(moved), event)

"""A contest's ranking: the executed entries' significance clusters on the primary metric, from the per-segment
statistics sealed in their encrypted full cards, numbered by COMPETITION ranking (1, 2, 2, 4), signed by the
organiser's key and recorded as ``contest.rank``.

No new clusterer: each executed entry's full card is opened in memory (``sovereign.public_card.load_full_card``
with a custodian's identity), its statistics rebuilt and accepted only when they are the bytes its seal names
(``sovereign.ranking.sealed_statistics``), then the leaderboard's own tests run on them
(``store.ranking.paired_tests``: paired bootstrap between neighbours in the metric's order, Holm across the
steps; ``store.ranking.clusters``). Entries in one cluster are tied and share the best rank of the cluster; the
next cluster's rank skips the tied places (competition numbering: "1, 2, 2, 4", as sports tables do), so a rank
says how many entries are significantly better. Ties are broken by nothing else: the order inside a cluster
(best value first, then entry number) is shown, not ranked.

The document (``ROOT/ranking.json``) is sealed (``ranking_sha256``: SHA-256 of its JSON with that field empty)
and signed in ``ranking.json.sig`` over ``CONTEXT + ranking_sha256``: a context of its own, so a contest ranking
signature never passes for a sovereign ranking's or a card's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mt_eval.contest.manifest import SECRET_SEGMENT, VAULT, governance, require_use
from mt_eval.contest.state import EXECUTED, ContestState, EntryState, contest_state, require_open
from mt_eval.errors import UserError
from mt_eval.runcard.signing import (
    Signature,
    make_signature,
    parse_signature,
    public_of,
    read_signature_json,
    read_small,
    signature_path,
    write_atomic,
)
from mt_eval.sovereign.governance import private_key
from mt_eval.sovereign.public_card import CustodianIdentity, load_full_card
from mt_eval.sovereign.ranking import comparability, ranking_hash, sealed_statistics
from mt_eval.sovereign.vault import read_manifest
from mt_eval.stats.bootstrap import DEFAULT_SEED
from mt_eval.store.rank_key import COMPOSITE, RankKey, parse_key
from mt_eval.store.ranking import ALPHA, N_RESAMPLES, clusters, paired_tests

KIND, SIGNATURE_KIND = "mt-eval contest ranking", "mt-eval contest ranking signature"
CONTEXT = b"mt-eval contest ranking signature v1\n"
RANKING = "ranking.json"
MAX_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Placed:
    """One executed entry in the ranking."""

    entry: int
    rank: int
    cluster: int
    value: float
    full_run_card_hash: str


def competition_ranks(cluster_of: Sequence[int]) -> list[int]:
    """Competition ranks from cluster numbers in order (best first): each entry's rank is 1 + the number of
    entries in better clusters. ``[1, 2, 2, 3] -> [1, 2, 2, 4]``."""
    ranks: list[int] = []
    first: dict[int, int] = {}
    for i, c in enumerate(cluster_of):
        first.setdefault(c, i + 1)
        ranks.append(first[c])
    return ranks


def _value(full: Mapping[str, Any], key: RankKey) -> float:
    scores = full.get("scores") or {}
    value = scores.get(key.metric)
    if isinstance(value, Mapping):  # a card may nest {"value": …}
        value = value.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise UserError(f"the full card {str(full.get('run_card_hash'))[:12]}… has no {key.label}: nothing to rank "
                        "it by")
    return float(value)


def _full_cards(state: ContestState, entries: Sequence[EntryState], identity: CustodianIdentity,
                ) -> dict[int, dict[str, Any]]:
    """Each executed entry's full card, opened in memory and checked to be a run of this contest's secret split."""
    vault = read_manifest(state.root / VAULT)
    cards: dict[int, dict[str, Any]] = {}
    for e in entries:
        if not e.full_run_card_hash:
            raise UserError(f"entry {e.number} was executed but its contest.execute event names no full card",
                            entry=e.number)
        full = load_full_card(state.root / "governance", e.full_run_card_hash, identity)
        ds = full.get("dataset") or {}
        if ds.get("sha256") != vault.corpus_sha256 or ds.get("entry_count") != state.manifest.secret_size \
                or full.get("condition") != f"sovereign:{SECRET_SEGMENT}":
            raise UserError(f"entry {e.number}'s full card is not a run of this contest's secret split "
                            f"({state.manifest.secret_size} entries of the vault's {SECRET_SEGMENT})", entry=e.number)
        cards[e.number] = full
    return cards


def ranking_document(state: ContestState, identity: CustodianIdentity, key: Path | Ed25519PrivateKey, *,
                     n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """The sealed ranking of the contest's executed entries (see the module docstring)."""
    m = state.manifest
    executed = [e for e in state.entries if e.state == EXECUTED]
    if not executed:
        raise UserError(f"contest {m.id!r} has no executed entry to rank", hint="mt-eval contest execute first")
    rank_key = parse_key(m.primary_metric)
    cards = _full_cards(state, executed, identity)
    first = cards[executed[0].number]
    for e in executed[1:]:
        if cards[e.number]["dataset"]["entry_ids_sha256"] != first["dataset"]["entry_ids_sha256"]:
            raise UserError(f"entry {e.number} ran other secret entries than entry {executed[0].number}",
                            entry=e.number)
        if rank_key.metric == COMPOSITE and comparability(cards[e.number]) != comparability(first):
            raise UserError(f"entry {e.number}'s composite is not comparable with entry {executed[0].number}'s "
                            "(profile, rule or metrics differ)", entry=e.number)
    values = {e.number: _value(cards[e.number], rank_key) for e in executed}
    for e in executed:  # the log's public value is the card's (else the table would show another number)
        if e.value is None or not math.isclose(e.value, values[e.number], abs_tol=1e-9):
            raise UserError(f"entry {e.number}: the log says {e.value} but its full card {values[e.number]}",
                            entry=e.number)
    claimed: dict[str, int] = {}
    for e in executed:  # one run, one entry: a card claimed twice would be ranked twice
        if e.full_run_card_hash in claimed:
            raise UserError(f"entries {claimed[e.full_run_card_hash]} and {e.number} name the same full card; "
                            "not ranked", entry=e.number)
        claimed[str(e.full_run_card_hash)] = e.number
    sign = 1.0 if rank_key.higher_is_better else -1.0
    ordered = sorted(executed, key=lambda e: (-sign * values[e.number], e.number))
    hashes = [str(cards[e.number]["run_card_hash"]) for e in ordered]
    by_hash = {str(cards[e.number]["run_card_hash"]): cards[e.number] for e in ordered}
    stats = {h: sealed_statistics(card) for h, card in by_hash.items()}
    tests = paired_tests(hashes, by_hash, stats, n_resamples=n_resamples, metric=rank_key.metric) \
        if len(ordered) > 1 else []
    placed = clusters(len(ordered), [t.significant for t in tests])
    ranks = competition_ranks([c for c, _ in placed])
    entries = [{"entry": e.number, "rank": r, "cluster": c, "value": values[e.number], "ci": list(e.ci) if e.ci else
                None, "full_run_card_hash": h, "artefact_sha256": e.sha256}
               for e, (c, _), r, h in zip(ordered, placed, ranks, hashes, strict=True)]  # fmt: skip
    document: dict[str, Any] = {
        "kind": KIND, "version": 1, "contest": m.id, "organiser": m.organiser, "metric": rank_key.name,
        "higher_is_better": rank_key.higher_is_better, "organiser_key_id": public_of(private_key(key)).key_id,
        "secret": {"entries": m.secret_size, "entry_ids_sha256": first["dataset"]["entry_ids_sha256"],
                   "corpus_sha256": first["dataset"]["sha256"]},
        "test": {"name": "paired bootstrap between neighbours in the metric's order", "resamples": n_resamples,
                 "seed": DEFAULT_SEED, "alpha": ALPHA, "correction": "holm"},
        "numbering": "competition (1, 2, 2, 4): an entry's rank is 1 + the entries significantly better",
        "entries": entries,
        "steps": [{"better": a.number, "worse": b.number, "delta": t.delta, "p_value": t.p_value,
                   "p_adjusted": t.p_adjusted, "significant": t.significant}
                  for (a, b), t in zip(pairwise(ordered), tests, strict=True)],
        "log_head": state.head, "ranking_sha256": "",
    }  # fmt: skip
    document["ranking_sha256"] = ranking_hash(document)
    return document


def rank_contest(root: Path, identity: CustodianIdentity, key: Path | Ed25519PrivateKey, *, signer: str | None = None,
                 n_resamples: int = N_RESAMPLES) -> tuple[dict[str, Any], list[Placed]]:
    """Rank the open contest at ``root``: write ROOT/ranking.json and its signature, record ``contest.rank``.
    Ranking again (an entry executed later) replaces the file; the log keeps every ranking's hash."""
    state = contest_state(root)
    require_open(state, "rank")
    require_use(state.root, state.manifest, "ranking", "rank")
    private = private_key(key)
    document = ranking_document(state, identity, private, n_resamples=n_resamples)
    path = Path(root) / RANKING
    write_atomic(path, (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    sig = make_signature(private, CONTEXT + document["ranking_sha256"].encode("ascii"), signer)
    body = {"kind": SIGNATURE_KIND, "version": 1, "ranking_sha256": document["ranking_sha256"], **asdict(sig)}
    write_atomic(signature_path(path), (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    ranks = [{"entry": d["entry"], "rank": d["rank"], "cluster": d["cluster"]} for d in document["entries"]]
    governance(root).record({"kind": "contest.rank", "ranking_sha256": document["ranking_sha256"],
                             "metric": document["metric"], "ranks": ranks, "key_id": sig.key_id,
                             "who": signer or state.manifest.organiser})  # fmt: skip
    return document, [Placed(d["entry"], d["rank"], d["cluster"], d["value"], d["full_run_card_hash"])
                      for d in document["entries"]]


def read_contest_ranking(path: Path) -> tuple[dict[str, Any], Signature]:
    """A contest ranking and its signature, the seal and the signature checked (``UserError`` otherwise)."""
    file = str(path)
    try:
        document = json.loads(read_small(Path(path), "ranking", MAX_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("not a contest ranking (not JSON)", file=file) from None
    if not isinstance(document, dict) or document.get("kind") != KIND or document.get("version") != 1:
        raise UserError(f"not a {KIND} document, version 1", file=file)
    digest = document.get("ranking_sha256")
    if not isinstance(digest, str) or ranking_hash(document) != digest:
        raise UserError("the ranking's seal does not hold (changed after it was signed); refused", file=file)
    sig_path = signature_path(Path(path))
    if not sig_path.is_file():
        raise UserError("the ranking's signature is missing; refused", file=file, hint=f"expected {sig_path.name}")
    data = read_signature_json(sig_path, SIGNATURE_KIND)
    signature = parse_signature(data, str(sig_path), "signature")
    if data.get("ranking_sha256") != digest or signature.key_id != document.get("organiser_key_id"):
        raise UserError("not signed by the organiser key the ranking names; refused", file=file)
    problem = signature.check(CONTEXT + digest.encode("ascii"))
    if problem is not None:
        raise UserError(f"the ranking's signature is invalid ({problem}); refused", file=file)
    return document, signature

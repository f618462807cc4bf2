"""Ranked sovereign results: the significance clusters of one vault's gold runs, computed where the texts
are and released as a signed document that names each public card's cluster and rank range, nothing else.

A public sovereign card carries no per-entry statistics (across runs they would give a submitter per-entry
scores of the secret entries), so the leaderboard cannot test it against another card (``store.ranking``).
The governance machine can: it keeps every gold run's full card encrypted (``public_card.store_full_card``).
``rank_gold_runs`` opens the full cards behind the public cards it is given, rebuilds each run's per-entry
statistics from ``results[]`` with the one scoring pipeline (``runcard.rescore.table_from_card``) and takes
them only when their bytes are the statistics the run sealed (the sidecar's SHA-256 under the full card's
seal; the sidecar itself never left the run). It then runs the leaderboard's own tests on them
(``store.ranking.paired_tests``: paired bootstrap on the composite between neighbours in composite order,
Holm across the steps; ``store.ranking.clusters`` for the rank ranges), so the same statistics published as
ordinary cards give the same clusters (tested).

Released, per card: its cluster and rank range among the k cards ranked. No p-value, difference, order
inside a cluster or per-entry value leaves the machine (the cards are listed by cluster, then hash). That
is at most log2(k) bits per card; with the composites already on the public cards (they fix the order up
to rounding), one document adds at most k − 1 bits (which of the k − 1 steps are significant).

The document is sealed (``ranking_sha256``: SHA-256 of its JSON with that field empty, the run card's seal
rule) and signed by the governance key in a detached ``<file>.sig`` over ``RANKING_CONTEXT + ranking_sha256``:
a context of its own, so a ranking signature never passes for a card's or a file's, nor the reverse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mt_eval.errors import UserError
from mt_eval.runcard.io import read_card_json
from mt_eval.runcard.seal import card_hash, sha256_text
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
from mt_eval.runcard.statistics import StoredStatistics, decode, encode, sha256_bytes
from mt_eval.scoring.calibrated import card_profile
from mt_eval.scoring.composite import composite_rule
from mt_eval.sovereign.governance import private_key
from mt_eval.sovereign.public_card import CustodianIdentity, load_full_card
from mt_eval.sovereign.vault import read_manifest
from mt_eval.stats.bootstrap import DEFAULT_SEED
from mt_eval.store.publish import available_metrics
from mt_eval.store.ranking import ALPHA, N_RESAMPLES, clusters, paired_tests

RANKING_KIND = "mt-eval sovereign ranking"
SIGNATURE_KIND = "mt-eval sovereign ranking signature"
RANKING_CONTEXT = b"mt-eval sovereign ranking signature v1\n"
METRIC = "composite"
RELEASED = ("per card: its cluster and rank range among the cards ranked, nothing else (at most log2(k) bits "
            "per card among k cards; at most k - 1 bits per document beyond the public composites' order)")
MAX_RANKING_BYTES = 4 * 1024 * 1024  # thousands of cards; anything larger is not ours
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")


class RankingRefused(UserError):
    """A ranking document that is not what the governance key signed: refused, nothing written (exit 1)."""

    exit_code = 1


@dataclass(frozen=True)
class GoldRun:
    """A published gold run: its public card's hash, its full card, and its sealed per-entry statistics."""

    public_hash: str
    full: dict[str, Any]
    statistics: StoredStatistics

    @property
    def full_hash(self) -> str:
        return str(self.full["run_card_hash"])

    @property
    def composite(self) -> float:
        return float(self.full["scores"]["composite"])


@dataclass(frozen=True)
class RankedCard:
    """One line of a ranking document."""

    run_card_hash: str
    full_run_card_hash: str
    cluster: int
    rank: str


@dataclass(frozen=True)
class SignedRanking:
    """A ranking document read from disk, its seal and its governance signature checked."""

    path: str
    document: dict[str, Any]
    cards: tuple[RankedCard, ...]
    signature: Signature

    @property
    def sha256(self) -> str:
        return str(self.document["ranking_sha256"])

    @property
    def organisation(self) -> str:
        return str(self.document["organisation"])

    @property
    def dataset(self) -> Mapping[str, Any]:
        dataset = self.document["dataset"]
        assert isinstance(dataset, Mapping)
        return dataset


def comparability(card: Mapping[str, Any]) -> tuple[str, str, str]:
    """What must agree for two cards to be ranked together (Scoring Spec §4.1), as the store computes it."""
    return card_profile(card), composite_rule(card), ",".join(available_metrics(card))


def sealed_statistics(full: Mapping[str, Any]) -> StoredStatistics:
    """The run's per-entry statistics, rebuilt from the full card's ``results[]`` and accepted only when they
    are byte for byte the statistics its seal names (else the ranking would test other numbers than the card's)."""
    from mt_eval.runcard.rescore import table_from_card  # heavy (every metric): imported on use

    ref = full.get("statistics")
    short = str(full.get("run_card_hash"))[:12]
    if not isinstance(ref, Mapping) or not isinstance(ref.get("sha256"), str):
        raise UserError(f"full card {short}… seals no statistics reference; it cannot be ranked")
    table = table_from_card(full)
    data = encode(table, [int(r["entry_id"]) for r in full["results"]])
    if sha256_bytes(data) != ref["sha256"]:
        raise UserError(f"full card {short}…: the statistics rebuilt from its results are not the ones it sealed "
                        "(scored with other metric versions?); not ranked",
                        hint="mt-eval verify on the decrypted card says what changed")
    return decode(data, ref)


def _public_card(path: Path) -> dict[str, Any]:
    card = read_card_json(path)
    block = card.get("sovereign")
    if not isinstance(block, Mapping) or card.get("results"):
        raise UserError("not a public sovereign card (make it with mt-eval governance card)", file=str(path))
    if card_hash(card) != card.get("run_card_hash"):
        raise UserError("the card's seal does not hold (changed after sealing)", file=str(path))
    if not isinstance(block.get("full_run_card_hash"), str) or not _HEX64.fullmatch(block["full_run_card_hash"]):
        raise UserError("the card names no full card", file=str(path), field="sovereign.full_run_card_hash")
    return card


def gold_runs(public_cards: Sequence[Path], governance_dir: Path, vault_dir: Path, identity: CustodianIdentity,
              segment: str = "gold_standard") -> list[GoldRun]:
    """The gold runs behind ``public_cards``: each full card opened with ``identity``, checked to be a run
    of ``vault_dir``'s ``segment`` (its corpus sha256, its entry count, the run's condition), all on the same
    entries and comparable, with their sealed statistics."""
    vault = read_manifest(vault_dir)
    expected = (vault.manifest["secret"]["segments"] or {}).get(segment)
    if not isinstance(expected, int) or expected < 1:
        raise UserError(f"the vault seals no {segment} entries", file=str(vault_dir),
                        hint="mt-eval vault inspect lists its segments")
    runs: list[GoldRun] = []
    for path in public_cards:
        public = _public_card(Path(path))
        full = load_full_card(governance_dir, public["sovereign"]["full_run_card_hash"], identity)
        ds, where = full["dataset"], str(path)
        if ds.get("sha256") != vault.corpus_sha256:
            raise UserError("its gold run is not of this vault's corpus (dataset.sha256 differs)", file=where)
        if full.get("condition") != f"sovereign:{segment}" or ds.get("entry_count") != expected:
            raise UserError(f"its gold run is not of the vault's {segment} segment ({expected} entries)", file=where)
        if public["dataset"] != ds:
            raise UserError("the public card's dataset is not its full card's", file=where)
        composite = (full.get("scores") or {}).get("composite")
        if isinstance(composite, bool) or not isinstance(composite, int | float):
            raise UserError("its gold run has no composite (every entry failed?): nothing to rank it by", file=where)
        runs.append(GoldRun(str(public["run_card_hash"]), full, sealed_statistics(full)))
    if len(runs) < 2:
        raise UserError("a ranking needs at least two public cards")
    if len({r.public_hash for r in runs}) != len(runs) or len({r.full_hash for r in runs}) != len(runs):
        raise UserError("a public card or its full card is given twice")
    for run in runs[1:]:
        if run.full["dataset"]["entry_ids_sha256"] != runs[0].full["dataset"]["entry_ids_sha256"]:
            raise UserError(f"{run.public_hash[:12]}… ran other entries than {runs[0].public_hash[:12]}…")
        if comparability(run.full) != comparability(runs[0].full):
            raise UserError(f"{run.public_hash[:12]}… is not comparable with {runs[0].public_hash[:12]}… (profile, "
                            "composite rule or available metrics differ): rank each kind apart")
    return runs


def ranking_document(runs: Sequence[GoldRun], organisation: str, key: Path | Ed25519PrivateKey, *,
                     n_resamples: int = N_RESAMPLES) -> dict[str, Any]:
    """The sealed ranking of ``runs`` (see the module docstring), naming the governance key that signs it."""
    ordered = sorted(runs, key=lambda r: (-r.composite, r.public_hash))
    by_hash = {r.full_hash: r for r in ordered}
    tests = paired_tests([r.full_hash for r in ordered], {h: r.full for h, r in by_hash.items()},
                         {h: r.statistics for h, r in by_hash.items()}, n_resamples=n_resamples)
    placed = clusters(len(ordered), [t.significant for t in tests])
    cards = sorted(({"run_card_hash": r.public_hash, "full_run_card_hash": r.full_hash, "cluster": c, "rank": label}
                    for r, (c, label) in zip(ordered, placed, strict=True)),
                   key=lambda d: (d["cluster"], d["run_card_hash"]))  # fmt: skip
    ds = ordered[0].full["dataset"]
    profile, rule, metric_set = comparability(ordered[0].full)
    document: dict[str, Any] = {
        "kind": RANKING_KIND, "version": 1, "organisation": organisation,
        "governance_key_id": public_of(private_key(key)).key_id,
        "dataset": {"id": ds.get("id"), "sha256": ds["sha256"], "entry_ids_sha256": ds["entry_ids_sha256"],
                    "segment": str(ordered[0].full["condition"]).removeprefix("sovereign:"),
                    "entries": ds.get("entry_count")},
        "comparability": {"profile": profile, "composite_rule": rule, "metric_set": metric_set},
        "metric": METRIC, "systems": len(cards),
        "test": {"name": "paired bootstrap between neighbours in composite order", "resamples": n_resamples,
                 "seed": DEFAULT_SEED, "alpha": ALPHA, "correction": "holm"},
        "released": RELEASED, "cards": cards, "ranking_sha256": "",
    }  # fmt: skip
    document["ranking_sha256"] = ranking_hash(document)
    return document


def ranking_hash(document: Mapping[str, Any]) -> str:
    """The document's seal: SHA-256 of its JSON (sorted keys) with ``ranking_sha256`` empty."""
    return sha256_text(json.dumps({**document, "ranking_sha256": ""}, sort_keys=True, ensure_ascii=False))


def ranking_message(ranking_sha256: str) -> bytes:
    """What the governance key signs: the ranking context line, then the document's seal."""
    return RANKING_CONTEXT + ranking_sha256.encode("ascii")


def write_ranking(document: Mapping[str, Any], path: Path, key: Path | Ed25519PrivateKey,
                  signer: str | None = None) -> tuple[Path, Path]:
    """Write the sealed document and its detached governance signature (``<file>.sig``); both paths."""
    private = private_key(key)
    digest = str(document["ranking_sha256"])
    if ranking_hash(document) != digest or document.get("governance_key_id") != public_of(private).key_id:
        raise UserError("not a sealed ranking naming this governance key; not signed")
    write_atomic(path, (json.dumps(document, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    sig = make_signature(private, ranking_message(digest), signer)
    body = {"kind": SIGNATURE_KIND, "version": 1, "ranking_sha256": digest, **asdict(sig)}
    write_atomic(signature_path(path), (json.dumps(body, ensure_ascii=False, indent=2) + "\n").encode("utf-8"))
    return path, signature_path(path)


def _text(value: object, field: str, file: str, pattern: re.Pattern[str] | None = None, limit: int = 200) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > limit or (
            pattern is not None and not pattern.fullmatch(value)):
        raise RankingRefused("refused: not a valid value", file=file, field=field)
    return value


def ranked_cards(document: Mapping[str, Any], file: str) -> tuple[RankedCard, ...]:
    """The document's cards, each field checked, and its clusters exactly those ``clusters`` gives for them
    (contiguous from 1, each rank range its cluster's positions): a hand-edited rank is refused."""
    items = document.get("cards")
    if not isinstance(items, list) or not 2 <= len(items) == document.get("systems"):
        raise RankingRefused("refused: cards must list 'systems' (2 or more) cards", file=file, field="cards")
    cards: list[RankedCard] = []
    for i, item in enumerate(items):
        where = f"cards[{i}]"
        if not isinstance(item, Mapping) or set(item) != {"run_card_hash", "full_run_card_hash", "cluster", "rank"}:
            raise RankingRefused("refused: a card line has exactly run_card_hash, full_run_card_hash, cluster, rank",
                                 file=file, field=where)
        cluster = item["cluster"]
        if isinstance(cluster, bool) or not isinstance(cluster, int):
            raise RankingRefused("refused: cluster is not a whole number", file=file, field=f"{where}.cluster")
        cards.append(RankedCard(_text(item["run_card_hash"], f"{where}.run_card_hash", file, _HEX64),
                                _text(item["full_run_card_hash"], f"{where}.full_run_card_hash", file, _HEX64),
                                cluster, _text(item["rank"], f"{where}.rank", file, limit=20)))  # fmt: skip
    if len({c.run_card_hash for c in cards}) != len(cards) or len({c.full_run_card_hash for c in cards}) != len(cards):
        raise RankingRefused("refused: a card is listed twice", file=file, field="cards")
    ordered = sorted(cards, key=lambda c: (c.cluster, c.run_card_hash))
    breaks = [a.cluster != b.cluster for a, b in pairwise(ordered)]
    if ordered != cards or [(c.cluster, c.rank) for c in cards] != clusters(len(cards), breaks):
        raise RankingRefused("refused: the clusters and rank ranges are not consistent (contiguous clusters from 1, "
                             "each card's rank range its cluster's positions)", file=file, field="cards")
    return tuple(cards)


def read_ranking(path: str | Path) -> SignedRanking:
    """The ranking document at ``path`` with its signature (``<file>.sig``): every field checked, the seal
    holding, and a valid signature over it by the key the document names; ``RankingRefused`` otherwise.
    Whose key that is, the store decides (``store.sovereign.publish_ranking``)."""
    p, file = Path(path), str(path)
    try:
        document = json.loads(read_small(p, "ranking", MAX_RANKING_BYTES).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("not a ranking document (not JSON)", file=file) from None
    if not isinstance(document, dict) or document.get("kind") != RANKING_KIND or document.get("version") != 1:
        raise UserError(f"not a {RANKING_KIND} document, version 1 (make one with mt-eval governance rank)", file=file)
    _text(document.get("organisation"), "organisation", file)
    key_id = _text(document.get("governance_key_id"), "governance_key_id", file, _HEX16)
    dataset = document.get("dataset")
    if not isinstance(dataset, Mapping):
        raise RankingRefused("refused: no dataset block", file=file, field="dataset")
    for name in ("sha256", "entry_ids_sha256"):
        _text(dataset.get(name), f"dataset.{name}", file, _HEX64)
    if document.get("metric") != METRIC:
        raise RankingRefused(f"refused: only the {METRIC} is ranked", file=file, field="metric")
    cards = ranked_cards(document, file)
    digest = _text(document.get("ranking_sha256"), "ranking_sha256", file, _HEX64)
    if ranking_hash(document) != digest:
        raise RankingRefused("refused: the ranking's seal does not hold (changed after sealing)", file=file)
    sig_path = signature_path(p)
    if not sig_path.exists():
        raise RankingRefused("refused: a ranking needs the governance key's signature beside it", file=file,
                             hint=f"expected {sig_path.name}")
    data = read_signature_json(sig_path, SIGNATURE_KIND)
    signature = parse_signature(data, str(sig_path), "signature")
    if data.get("ranking_sha256") != digest or signature.key_id != key_id:
        raise RankingRefused(f"refused: not signed by the governance key the ranking names ({key_id})", file=file)
    problem = signature.check(ranking_message(digest))
    if problem is not None:
        raise RankingRefused(f"refused: signature by key {signature.key_id} is invalid ({problem})", file=file)
    return SignedRanking(file, document, cards, signature)

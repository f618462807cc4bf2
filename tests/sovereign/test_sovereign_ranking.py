"""Ranked sovereign results: three real gold runs (``mt-eval score`` on the sealed gold segment), kept
encrypted by governance, ranked by ``governance rank`` into a signed document, published, and shown by the
leaderboard as their own board; forged, unsigned or dangling rankings refused.

Independent references: the statistics sidecar each ``score`` wrote (the governance rebuild must give the same
bytes), and the ordinary leaderboard: the same three full cards published as ordinary cards (their sidecars,
the store's own ranking path) must fall into the same clusters as the signed ranking gives their public cards.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import vault_fixtures
from typer.testing import CliRunner
from vault_fixtures import Custodian

from mt_eval.cli import app
from mt_eval.errors import UserError
from mt_eval.runcard.signing import new_key, read_public_key, signature_path
from mt_eval.runcard.statistics import read
from mt_eval.sovereign.public_card import public_card, store_full_card, write_public_card
from mt_eval.sovereign.ranking import ranking_hash, sealed_statistics
from mt_eval.store import open_store
from mt_eval.store.keys import register_key
from mt_eval.store.query import query_rows
from mt_eval.store.ranking import rank
from store_fixtures import governance_store, register_corpus

sovereign_corpus, custodians, sealed = vault_fixtures.sovereign_corpus, vault_fixtures.custodians, vault_fixtures.sealed
ORG = "Example Language Council"
KINDS = ("near", "near2", "truncated")  # near ≈ near2 > truncated (tests/store_fixtures.py's outputs)
runner = CliRunner()


def _outputs(corpus: Path, kind: str) -> list[dict[str, object]]:
    """Outputs of known quality for the gold entries (as ``store_fixtures.predictions``)."""
    out: list[dict[str, object]] = []
    for i, entry in enumerate(vault_fixtures.secret_entries(corpus)[: vault_fixtures.GOLD]):
        words = str(entry["reference"]).split()
        if kind == "truncated":
            text = " ".join(words[: max(1, len(words) - i % 3 - 1)])
        else:
            drop = i % 5 == (0 if kind == "near" else 1)
            text = " ".join(words[:-1]) if drop and len(words) > 1 else str(entry["reference"])
        out.append({"entry_id": entry["id"], "predicted": text})
    return out


def cli(*args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture(scope="module")
def full_cards(sovereign_corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Three real full cards of the gold segment, as a gold run writes them (condition ``sovereign:gold_standard``),
    each with the statistics sidecar ``score`` wrote beside it."""
    tmp = tmp_path_factory.mktemp("gold-runs")
    paths = {}
    for kind in KINDS:
        hyp = tmp / f"{kind}.jsonl"
        hyp.write_text("".join(json.dumps(o) + "\n" for o in _outputs(sovereign_corpus, kind)))
        result = cli("score", "-c", str(sovereign_corpus), "--segment", "gold_standard", "-p", str(hyp),
                     "--bootstrap", "100", "--system", kind, "--condition", "sovereign:gold_standard",
                     "--runs-dir", str(tmp / "runs"), "-o", str(tmp / f"{kind}.json"))  # fmt: skip
        assert result.exit_code == 0, result.output
        paths[kind] = tmp / f"{kind}.json"
    return paths


@pytest.fixture(scope="module")
def reference_ranks(full_cards: dict[str, Path], sovereign_corpus: Path,
                    tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The ordinary leaderboard's rank of each full card (full run_card_hash → rank range), in a governance
    store (the only kind that takes cards over gold entries), its corpus registered with their texts."""
    db = register_corpus(governance_store(str(tmp_path_factory.mktemp("reference") / "board.db")), sovereign_corpus)
    published = cli("publish", *(str(p) for p in full_cards.values()), "--db", db)
    assert published.exit_code == 0, published.output
    board = cli("leaderboard", "--db", db, "--json")
    assert board.exit_code == 0, board.output
    return {r["run_card_hash"]: r["rank"] for r in json.loads(board.stdout)}


@pytest.fixture(scope="module")
def governed(full_cards: dict[str, Path], sealed: Path, custodians: list[Custodian],
             tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Governance holding the three full cards encrypted, their signed public cards, and a ranking of them."""
    tmp = tmp_path_factory.mktemp("governance")
    gov, keys = tmp / "gov", tmp / "keys"
    keys.mkdir()
    key, _, _ = new_key(keys / "gov.key", signer=ORG)
    assert cli("governance", "policy", "--organisation", ORG, "--governance", str(gov)).exit_code == 0
    public: dict[str, Path] = {}
    for i, (kind, path) in enumerate(full_cards.items()):
        full = json.loads(path.read_text())
        store_full_card(full, sealed, gov)
        block = {"bundle_sha256": f"{i:02x}" * 32, "sandbox": {"policy": "bwrap-1"}, "egress": "none",
                 "terms_version": "2026-11", "organisation": ORG}  # fmt: skip
        public[kind], _ = write_public_card(public_card(full, block, key), tmp / f"public-{kind}.json", key)
    out = tmp / "clusters.json"
    ranked = cli("governance", "rank", *(str(p) for p in public.values()), "--vault", str(sealed), "--identity",
                 str(custodians[0].key), "--key", str(key), "-o", str(out), "--governance", str(gov))  # fmt: skip
    assert ranked.exit_code == 0, ranked.output
    return {"key": key, "gov": gov, "public": public, "ranking": out, "output": ranked.output}


def _register(db: str, key: Path, name: str = ORG) -> None:
    with open_store(db) as store:
        register_key(store, read_public_key(key.with_suffix(".pub")), name)


def _publish_cards(db: str, governed: dict[str, Any], kinds: tuple[str, ...] = KINDS) -> None:
    result = cli("governance", "publish", *(str(governed["public"][k]) for k in kinds), "--db", db,
                 "--governance", str(governed["gov"]))  # fmt: skip
    assert result.exit_code == 0, result.output


def test_rebuilt_statistics_are_the_sealed_sidecar(full_cards: dict[str, Path]) -> None:
    """The governance machine has only the full card; its rebuild equals the sidecar the run wrote."""
    card = json.loads(full_cards["truncated"].read_text())
    rebuilt, written = sealed_statistics(card), read(card, full_cards["truncated"])
    assert rebuilt.entry_ids == written.entry_ids and len(rebuilt.entry_ids) == vault_fixtures.GOLD
    assert list(rebuilt.stats) == list(written.stats) and "chrf_plus_plus" in rebuilt.stats
    assert all(np.array_equal(rebuilt.stats[m], written.stats[m]) for m in written.stats)
    card["results"][0]["predicted"] += " extra"  # outputs other than the sealed ones: refused, not ranked
    with pytest.raises(UserError, match="not the ones it sealed"):
        sealed_statistics(card)


def test_document_releases_clusters_only(governed: dict[str, Any], full_cards: dict[str, Path]) -> None:
    document = json.loads(governed["ranking"].read_text())
    assert document["ranking_sha256"] == ranking_hash(document)
    assert (document["organisation"], document["metric"], document["systems"]) == (ORG, "composite", 3)
    assert document["test"]["correction"] == "holm" and document["test"]["resamples"] == 1000
    assert "log2(k) bits per card" in document["released"]
    assert {tuple(sorted(c)) for c in document["cards"]} == {("cluster", "full_run_card_hash", "rank",
                                                              "run_card_hash")}  # nothing per entry, no p-value
    fulls = {json.loads(p.read_text())["run_card_hash"] for p in full_cards.values()}
    assert {c["full_run_card_hash"] for c in document["cards"]} == fulls
    assert signature_path(governed["ranking"]).is_file()


def test_signed_clusters_equal_the_ordinary_leaderboard(governed: dict[str, Any], reference_ranks: dict[str, str],
                                                        full_cards: dict[str, Path], db_url: str) -> None:
    """The same statistics through the ordinary path give the same clusters; the sovereign cards form their own
    board, and a self-run card of the same (gold) entries is refused by the public store (issue 21)."""
    _register(db_url, governed["key"])
    _publish_cards(db_url, governed)
    # a self-run card, same entries: refused (its corpus copy is not registered here; registered, its gold
    # entries would be: tests/store/test_forged_references.py)
    self_run = cli("publish", str(full_cards["near"]), "--db", db_url)
    assert self_run.exit_code == 1 and "refused" in self_run.output, self_run.output
    published = cli("governance", "publish-ranking", str(governed["ranking"]), "--db", db_url)
    assert published.exit_code == 0 and "inserted" in published.output, published.output
    again = cli("governance", "publish-ranking", str(governed["ranking"]), "--db", db_url)
    assert again.exit_code == 0 and "already published" in again.output
    document = json.loads(governed["ranking"].read_text())
    full_of = {c["run_card_hash"]: c["full_run_card_hash"] for c in document["cards"]}
    board = cli("leaderboard", "--db", db_url, "--json")
    assert board.exit_code == 0, board.output
    rows = json.loads(board.stdout)
    sovereign = {r["run_card_hash"]: r["rank"] for r in rows if r["run_card_hash"] in full_of}
    assert {full_of[h]: r for h, r in sovereign.items()} == reference_ranks
    assert sorted(reference_ranks.values()) == ["1–2", "1–2", "3"]  # a real split: both kinds of step occur
    with open_store(db_url) as store, store.session() as session:
        boards = rank(session, query_rows(session))
    assert [(b.signed.organisation if b.signed else None, len(b.rows)) for b in boards] == [(ORG, 3)]
    assert not boards[0].unranked
    assert boards[0].rows[-1].rank == "3" and all(r.verification_tier == "sovereign" for r in boards[0].rows)
    shown = cli("leaderboard", "--db", db_url)
    assert shown.exit_code == 0 and f"sovereign, clusters signed by {ORG}" in shown.output, shown.output


def _forge(governed: dict[str, Any], tmp_path: Path, how: str) -> Path:
    from mt_eval.sovereign.ranking import write_ranking

    document = json.loads(governed["ranking"].read_text())
    path = tmp_path / "clusters.json"
    for line in document["cards"]:  # every card in one cluster: the worst one "ties" with the best
        line |= {"cluster": 1, "rank": "1–3"}
    document["cards"].sort(key=lambda c: c["run_card_hash"])  # the document's order: cluster, then hash
    if how == "inconsistent":  # a rank range its cluster does not have, signed by the real governance key
        document["cards"][0]["rank"] = "1"
    if how != "edited":
        document["ranking_sha256"] = ranking_hash(document)
    if how == "inconsistent":  # even governance cannot publish it
        write_ranking(document, path, governed["key"], ORG)
        return path
    path.write_text(json.dumps(document))
    if how != "unsigned":  # the signature of the real ranking, beside the changed document
        signature_path(path).write_text(signature_path(governed["ranking"]).read_text())
    return path


@pytest.mark.parametrize("how, expected", [
    ("edited", "seal does not hold"),
    ("resealed", "not signed by the governance key|signature by key .* is invalid"),
    ("unsigned", "needs the governance key's signature"),
    ("inconsistent", "clusters and rank ranges are not consistent"),
])  # fmt: skip
def test_forged_or_unsigned_rankings_are_refused(governed: dict[str, Any], tmp_path: Path, how: str,
                                                 expected: str) -> None:
    db = str(tmp_path / "board.db")
    _register(db, governed["key"])
    _publish_cards(db, governed)
    result = cli("governance", "publish-ranking", str(_forge(governed, tmp_path, how)), "--db", db)
    assert result.exit_code == 1 and re.search(expected, result.output), result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_ranking_by_another_key_or_naming_a_missing_card_is_refused(governed: dict[str, Any],
                                                                      tmp_path: Path) -> None:
    from mt_eval.sovereign.ranking import write_ranking

    db = str(tmp_path / "board.db")
    _register(db, governed["key"])
    _publish_cards(db, governed, KINDS[:2])  # the third public card was never published here
    missing = cli("governance", "publish-ranking", str(governed["ranking"]), "--db", db)
    assert missing.exit_code == 1 and "is not in this store" in missing.output, missing.output
    # someone else's key, registered under their own name, signs a ranking that claims the organisation
    other, _, _ = new_key(tmp_path / "other.key", signer="Someone Else")
    _register(db, other, "Someone Else")
    document = json.loads(governed["ranking"].read_text())
    from mt_eval.runcard.signing import public_of, read_private_key

    document |= {"governance_key_id": public_of(read_private_key(other)).key_id, "ranking_sha256": ""}
    document["ranking_sha256"] = ranking_hash(document)
    path, _ = write_ranking(document, tmp_path / "theirs.json", other)
    theirs = cli("governance", "publish-ranking", str(path), "--db", db)
    assert theirs.exit_code == 1 and "names the organisation 'Example Language Council'" in theirs.output
    with open_store(db) as store, store.session() as session:  # nothing was written by either attempt
        assert all(b.signed is None for b in rank(session, query_rows(session)))


def test_rank_refuses_runs_of_another_segment_or_key(governed: dict[str, Any], sealed: Path,
                                                     custodians: list[Custodian], tmp_path: Path) -> None:
    public = [str(p) for p in governed["public"].values()]
    base = ["governance", "rank", *public, "--vault", str(sealed), "--key", str(governed["key"]), "-o",
            str(tmp_path / "c.json"), "--governance", str(governed["gov"])]  # fmt: skip
    held_out = cli(*base, "--identity", str(custodians[0].key), "--segment", "held_out")
    assert held_out.exit_code == 2 and "not of the vault's held_out segment" in held_out.output, held_out.output
    stranger = cli(*base, "--identity", str(custodians[1].key))  # not a recipient of the full cards
    assert stranger.exit_code == 2 and "cannot decrypt" in stranger.output, stranger.output
    assert not (tmp_path / "c.json").exists()


def test_migration_0007_downgrades_and_upgrades(tmp_path: Path) -> None:
    from sqlalchemy import inspect

    from mt_eval.store.db import downgrade, upgrade

    store = open_store(str(tmp_path / "board.db"))
    tables = {"sovereign_rankings", "sovereign_ranks"}
    assert tables <= set(inspect(store.engine).get_table_names())
    downgrade(store.engine, "0006")
    assert not tables & set(inspect(store.engine).get_table_names())
    upgrade(store.engine)
    assert tables <= set(inspect(store.engine).get_table_names())
    store.close()


def test_a_quorum_of_shares_ranks_as_the_identity_does(governed: dict[str, Any], full_cards: dict[str, Path],
                                                       sovereign_corpus: Path, tmp_path: Path) -> None:
    """On a vault held by quorum (2 of 3 shares), ``--share`` twice opens the full cards; one share does not."""
    from mt_eval.sovereign import custody, vault

    record = custody.keygen(tmp_path / "shares", 3, 2)
    quorum = tmp_path / "vault"
    vault.seal(sovereign_corpus, list(vault_fixtures.SECRET_SEGMENTS), [record.recipient], quorum, record.as_json())
    gov = tmp_path / "gov"
    assert cli("governance", "policy", "--organisation", ORG, "--governance", str(gov)).exit_code == 0
    for path in full_cards.values():
        store_full_card(json.loads(path.read_text()), quorum, gov)
    base = ["governance", "rank", *(str(p) for p in governed["public"].values()), "--vault", str(quorum), "--key",
            str(governed["key"]), "-o", str(tmp_path / "c.json"), "--governance", str(gov)]  # fmt: skip
    one = cli(*base, "--share", str(tmp_path / "shares" / "custodian-1.share"))
    assert one.exit_code == 2 and "need 2 shares, got 1" in one.output and not (tmp_path / "c.json").exists()
    two = cli(*base, *(a for i in (1, 3) for a in ("--share", str(tmp_path / "shares" / f"custodian-{i}.share"))))
    assert two.exit_code == 0, two.output
    mine, theirs = (json.loads(p.read_text()) for p in (tmp_path / "c.json", governed["ranking"]))
    assert mine["cards"] == theirs["cards"]


def test_the_web_board_shows_a_ranking_published_after_it_was_computed(governed: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    """The web remembers a board per state of the store: publishing a ranking (no card) is a new state."""
    from fastapi.testclient import TestClient

    from mt_eval.web.app import create_app

    db = str(tmp_path / "board.db")
    _register(db, governed["key"])
    _publish_cards(db, governed)
    with TestClient(create_app(db)) as client:
        before = client.get("/api/leaderboard").json()
        assert cli("governance", "publish-ranking", str(governed["ranking"]), "--db", db).exit_code == 0
        after = client.get("/api/leaderboard").json()
    assert all(r["rank"] is None for r in before) and len(before) == 3
    assert sorted(r["rank"] for r in after) == ["1–2", "1–2", "3"]

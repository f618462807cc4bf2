"""A store's key registry, ``require_signatures`` at publish, and signed exports, on SQLite and PostgreSQL.

The cards are real (``mt-eval score``); what the store keeps is checked against ``cryptography``
directly. The attack the issue names: mallory scores her own outputs (a card that verifies: the
seal is fine) and signs it with her own key, claiming to be alice; a store that requires signatures
refuses it because her key is not registered, and nothing is written.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from signing_helpers import (
    CARD_CONTEXT,
    FILE_CONTEXT,
    cli,
    copy_card,
    independent_valid,
    one_line_error,
    sig_file,
    spec_hash,
)
from sqlalchemy import func, select

from mt_eval.store import open_store
from mt_eval.store.models import Card, CardSignature, StoreSetting, SubmitterKey
from mt_eval.store.publish import CardRefused, PendingCard, publish, read_for_publish
from store_fixtures import register_corpus


def _pub(key: Path) -> Path:
    return key.with_suffix(".pub")


def _rows(db: str) -> tuple[int, int]:
    with open_store(db) as store, store.session() as session:
        return (session.scalar(select(func.count()).select_from(Card)) or 0,
                session.scalar(select(func.count()).select_from(CardSignature)) or 0)


def _refused(result: object) -> str:
    line = one_line_error(result, code=1)
    assert "refused" in line
    return line


def test_registry_commands(db_url: str, keys: dict[str, Path]) -> None:
    ok = cli("keys", "register", _pub(keys["alice"]), "--submitter", "alice", "--db", db_url)
    assert ok.exit_code == 0 and "registered to alice" in ok.output
    assert "already registered" in cli("keys", "register", _pub(keys["alice"]), "--submitter", "alice",
                                       "--db", db_url).output
    assert "registered to 'alice'" in one_line_error(cli("keys", "register", _pub(keys["alice"]),
                                                         "--submitter", "bob", "--db", db_url))
    kid = hashlib.sha256(base64.b64decode(_pub(keys["alice"]).read_text().split()[1])).hexdigest()[:16]
    assert cli("keys", "revoke", kid, "--db", db_url).exit_code == 0
    assert "already revoked" in one_line_error(cli("keys", "revoke", kid, "--db", db_url))
    assert "not registered again" in one_line_error(cli("keys", "register", _pub(keys["alice"]),
                                                        "--submitter", "alice", "--db", db_url))
    assert "no registered key" in one_line_error(cli("keys", "revoke", "0" * 16, "--db", db_url))
    assert "on or off" in one_line_error(cli("keys", "require", "yes", "--db", db_url))
    assert "require signatures: on" in cli("keys", "require", "on", "--db", db_url).output
    listed = cli("keys", "list", "--db", db_url)
    assert kid in listed.output and "require signatures: on" in listed.output
    with open_store(db_url) as store, store.session() as session:
        row = session.get(SubmitterKey, kid)
        assert row is not None and row.revoked_at is not None and row.submitter == "alice"
        assert session.get(StoreSetting, "require_signatures").value == "on"  # type: ignore[union-attr]


@pytest.fixture(scope="module")
def pending(keys: dict[str, Path], scored: dict[str, Path],
            tmp_path_factory: pytest.TempPathFactory) -> dict[str, PendingCard]:
    """Cards read and verified once (verification is the slow part), as publish receives them:
    alice's unsigned and signed by her key, mallory's signed by her own key claiming to be alice."""
    tmp = tmp_path_factory.mktemp("pending")
    made = {"alice_unsigned": copy_card(scored["alice"], tmp / "u"), "alice": copy_card(scored["alice"], tmp / "a"),
            "mallory": copy_card(scored["mallory"], tmp / "m")}
    assert cli("sign", made["alice"], "--key", keys["alice"]).exit_code == 0
    assert cli("sign", made["mallory"], "--key", keys["mallory"], "--signer", "alice").exit_code == 0
    return {name: read_for_publish(path) for name, path in made.items()}


def _refused_api(db: str, cards: list[PendingCard], submitter: str | None = None) -> str:
    with open_store(db) as store, pytest.raises(CardRefused) as caught:
        publish(store, cards, submitter=submitter)
    return caught.value.one_line()


def test_required_signatures_at_publish(db_url: str, keys: dict[str, Path], pending: dict[str, PendingCard]) -> None:
    cli("keys", "register", _pub(keys["alice"]), "--submitter", "alice", "--db", db_url)
    cli("keys", "require", "on", "--db", db_url)
    # the attack: mallory's card verifies and her signature is valid, but her key is not registered
    line = _refused(cli("publish", pending["mallory"].path, "--submitter", "alice", "--db", db_url))
    assert pending["mallory"].path in line and "is not registered" in line

    assert "has none" in _refused_api(db_url, [pending["alice_unsigned"]])
    # all or nothing: alice's good card is not written when mallory's, in the same batch, is refused
    assert pending["mallory"].path in _refused_api(db_url, [pending["alice"], pending["mallory"]])
    assert "not of the submitter 'bob'" in _refused_api(db_url, [pending["alice"]], submitter="bob")
    assert _rows(db_url) == (0, 0)

    with open_store(db_url) as store:
        [result] = publish(store, [pending["alice"]])
    assert result.status == "inserted" and result.signed_by == ("alice",)
    digest = pending["alice"].card["run_card_hash"]
    with open_store(db_url) as store, store.session() as session:
        card = session.scalar(select(Card))
        assert card is not None and card.submitter == "alice"  # taken from the registered key
        stored = session.scalars(select(CardSignature)).all()
        assert [s.signer for s in stored] == ["alice"]
        assert independent_valid(stored[0].public_key, stored[0].signature, CARD_CONTEXT + digest.encode())

    cli("keys", "revoke", pending["alice"].signatures[0].signature.key_id, "--db", db_url)
    assert "was revoked" in _refused_api(db_url, [pending["alice"]])


def test_not_required(db_url: str, pending: dict[str, PendingCard]) -> None:
    """Without the setting, publish is as before; a valid signature by an unregistered key is kept (a
    reader can still judge it) but attributes the card to no one. A card signed after it was published
    gets its signature added when published again."""
    with open_store(db_url) as store:
        [result] = publish(store, [pending["mallory"], pending["alice_unsigned"]])[:1]
    assert result.signed_by == ()
    with open_store(db_url) as store, store.session() as session:
        assert session.scalar(select(Card.submitter).where(Card.run_card_hash == result.run_card_hash)) is None
        assert session.scalar(select(CardSignature.key_id)) == pending["mallory"].signatures[0].signature.key_id
    with open_store(db_url) as store:
        [again] = publish(store, [pending["alice"]])
    assert again.status == "already published"
    assert _rows(db_url) == (2, 2)


def test_invalid_signature_refused_even_when_not_required(db_url: str, keys: dict[str, Path],
                                                          scored: dict[str, Path], tmp_path: Path) -> None:
    card = copy_card(scored["alice"], tmp_path / "a")
    cli("sign", card, "--key", keys["alice"])
    data = sig_file(card)
    data["signatures"][0]["signature"] = base64.b64encode(bytes(64)).decode()
    card.with_name(card.name + ".sig").write_text(json.dumps(data))
    assert "is invalid" in _refused(cli("publish", card, "--db", db_url))
    assert _rows(db_url) == (0, 0)


def test_edited_and_resealed_card_is_refused_by_verify(keys: dict[str, Path], scored: dict[str, Path],
                                                       tmp_path: Path) -> None:
    """A score edited and the card resealed, then signed: the seal holds and the signature is valid,
    but the score no longer follows from results[] (rescored against the registered corpus, the same texts), so
    publish refuses it with verify's line."""
    from mt_eval.runcard.seal import seal

    card = copy_card(scored["mallory"], tmp_path / "m")
    data = json.loads(card.read_text())
    data["scores"]["composite"] = 0.99
    card.write_text(json.dumps(seal(data)))
    assert spec_hash(card) == data["run_card_hash"]  # the seal holds
    assert cli("sign", card, "--key", keys["mallory"]).exit_code == 0
    sig = sig_file(card)["signatures"][0]
    assert independent_valid(sig["public_key"], sig["signature"], CARD_CONTEXT + data["run_card_hash"].encode())
    assert "scores.composite" in _refused(cli("publish", card, "--db", register_corpus(str(tmp_path / "s.db"))))


def test_signed_export(db_url: str, keys: dict[str, Path], pending: dict[str, PendingCard], tmp_path: Path) -> None:
    store_key = keys["bob"]  # the store's own key here
    with open_store(db_url) as store:
        publish(store, [pending["alice"]])
    board = tmp_path / "board.csv"
    assert "needs -o" in one_line_error(cli("export", "--db", db_url, "--sign-key", store_key))
    result = cli("export", "--db", db_url, "-o", board, "--sign-key", store_key)
    assert result.exit_code == 0, result.output
    sig = json.loads((tmp_path / "board.csv.sig").read_text())
    digest = hashlib.sha256(board.read_bytes()).hexdigest()
    assert sig["sha256"] == digest and sig["file"] == "board.csv"
    assert independent_valid(sig["public_key"], sig["signature"], FILE_CONTEXT + digest.encode())
    assert not independent_valid(sig["public_key"], sig["signature"], CARD_CONTEXT + digest.encode())

    checked = cli("keys", "check", board, "--key", _pub(store_key))
    assert checked.exit_code == 0 and "the signing key is the one given" in checked.output
    cli("keys", "register", _pub(store_key), "--submitter", "the store", "--db", db_url)
    assert "registered to the store" in cli("keys", "check", board, "--db", db_url).output
    assert "not by" in one_line_error(cli("keys", "check", board, "--key", _pub(keys["alice"])), code=1)
    board.write_bytes(board.read_bytes().replace(b"alice", b"alicf", 1))
    assert "sha256 differs" in one_line_error(cli("keys", "check", board), code=1)

    assert cli("export", "--db", db_url, "-o", board).exit_code == 0  # unsigned again: the stale .sig goes
    assert not (tmp_path / "board.csv.sig").exists()
    assert "no detached signature" in one_line_error(cli("keys", "check", board))

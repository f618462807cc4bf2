"""The run page says what the store's key registry says of each signature, not only the name a ``.sig`` claims.

A card is signed by three keys: one registered to alice, one registered to bob and then revoked, and one
nobody registered whose ``.sig`` claims to be alice's. The registry (``mt-eval keys list``) is the
independent reference: the page and ``/api/runs/{hash}`` must show registered / revoked / unregistered, and
the registered owner, never present the unregistered key's claimed "alice" as if it were alice.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from web_helpers import cli

from mt_eval.web.app import create_app
from store_fixtures import register_corpus


def _key_id(output: str) -> str:
    found = re.search(r"key id ([0-9a-f]{16})", output)
    assert found, output
    return found.group(1)


@pytest.fixture(scope="module")
def signed(cards: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("web-signatures")
    card = folder / "near.json"
    data = json.loads(cards["near"].read_text(encoding="utf-8"))
    shutil.copy2(cards["near"], card)  # a copy: the shared card stays unsigned
    shutil.copy2(cards["near"].with_name(data["statistics"]["file"]), folder / data["statistics"]["file"])
    db = str(folder / "board.db")
    ids = {}
    for name, signer in (("alice", "alice"), ("bob", "bob"), ("mallory", "alice")):
        made = cli("keys", "new", "-o", str(folder / f"{name}.key"), "--signer", signer)
        assert made.exit_code == 0, made.output
        ids[name] = _key_id(made.output)
        assert cli("sign", str(card), "--key", str(folder / f"{name}.key")).exit_code == 0
    for name in ("alice", "bob"):
        done = cli("keys", "register", str(folder / f"{name}.pub"), "--submitter", name, "--db", db)
        assert done.exit_code == 0, done.output
    register_corpus(db)
    published = cli("publish", str(card), "--db", db)
    assert published.exit_code == 0, published.output
    assert cli("keys", "revoke", ids["bob"], "--db", db).exit_code == 0
    return {"db": db, "ids": ids, "hash": data["run_card_hash"]}


@pytest.fixture(scope="module")
def client(signed: dict[str, Any]) -> Iterator[TestClient]:
    with TestClient(create_app(signed["db"])) as test_client:
        yield test_client


def test_api_signatures_carry_registry_status(client: TestClient, signed: dict[str, Any]) -> None:
    listed = cli("keys", "list", "--db", signed["db"])  # the registry as the operator sees it
    assert signed["ids"]["alice"] in listed.output and signed["ids"]["mallory"] not in listed.output
    view = client.get(f"/api/runs/{signed['hash']}").json()
    by_key = {s["key_id"]: s for s in view["signatures"]}
    ids = signed["ids"]
    assert set(by_key) == set(ids.values())
    assert by_key[ids["alice"]]["registry"] == "registered"
    assert by_key[ids["alice"]]["registered_submitter"] == "alice"
    assert by_key[ids["bob"]]["registry"] == "revoked"
    assert by_key[ids["bob"]]["registered_submitter"] == "bob"
    assert by_key[ids["mallory"]]["registry"] == "unregistered"
    assert by_key[ids["mallory"]]["registered_submitter"] is None
    assert by_key[ids["mallory"]]["signer"] == "alice"  # what the .sig claims, kept, but not vouched for


def test_run_page_shows_registry_status(client: TestClient, signed: dict[str, Any]) -> None:
    html = client.get(f"/runs/{signed['hash']}").text
    rows = {key: re.search(rf'<tr data-key="{key}">(.*?)</tr>', html, re.S) for key in signed["ids"].values()}
    assert all(rows.values()), "each signature is a row named by its key id"
    text = {key: re.sub(r"<[^>]+>", " ", m.group(1)) for key, m in rows.items() if m}
    ids = signed["ids"]
    assert "registered to alice" in " ".join(text[ids["alice"]].split())
    assert "revoked" in text[ids["bob"]]
    assert "unregistered" in text[ids["mallory"]]
    assert "claims alice" in " ".join(text[ids["mallory"]].split())

"""Signing keys and signatures: ``keys new|register|revoke|list|require|check`` and ``sign``.

The work is in ``runcard/signing.py`` (key files, signatures) and ``store/keys.py`` (the store's
registry and its ``require_signatures`` setting); the words in ``render/signatures.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import err, opt, out
from mt_eval.cli.store import DbOpt
from mt_eval.errors import UserError

keys_app = typer.Typer(help="Ed25519 signing keys for run cards, and a store's registered submitter keys.",
                       no_args_is_help=True)

SignerOpt = Annotated[str | None, opt("The signer's name, as the signature declares it (not itself proof: a "
                                      "store's registered keys are).", "--signer")]


@keys_app.command("new")
def new(
    output: Annotated[Path, opt("The private key file to write (the public key goes beside it, .pub).",
                                "-o", "--out")] = Path("mt-eval.key"),
    signer: SignerOpt = None,
) -> None:
    """Make an Ed25519 key pair: a private key (PKCS#8 PEM, mode 0600) and its one-line public key.

    An existing file is never overwritten. Keep the private key to yourself; give the .pub to a
    store operator to register.

    Example: mt-eval keys new -o alice.key --signer alice
    """
    from mt_eval.runcard.signing import new_key

    key_path, pub_path, public = new_key(output, signer)
    out.print(f"wrote {escape(str(key_path))} (private, 0600) and {escape(str(pub_path))}; key id {public.key_id}",
              highlight=False)


def sign(
    card: Annotated[Path, typer.Argument(help="Run card JSON (the signature goes beside it: <card>.sig).")],
    key: Annotated[Path, opt("Your private key file (mt-eval keys new).", "--key", "-k")],
    signer: SignerOpt = None,
) -> None:
    """Sign a run card's run_card_hash with your key, in the detached file <card>.sig.

    The card itself is not changed, so its seal still verifies; signing again with the same key
    replaces that key's signature, other keys' signatures stay. Only a card whose seal holds is signed.

    Example: mt-eval sign runs/demo/run_card.json --key alice.key
    """
    from mt_eval.runcard.signing import sign_card_file

    signature, path = sign_card_file(card, key, signer)
    out.print(f"signed {escape(str(card))} with key {signature.key_id}: wrote {escape(str(path))}", highlight=False)


@keys_app.command("register")
def register(
    public_key: Annotated[Path, typer.Argument(help="The submitter's public key file (.pub).")],
    submitter: Annotated[str, opt("Whose key it is (you vouch for this).", "--submitter")],
    db: DbOpt = None,
) -> None:
    """Register a submitter's public key in a store: its signatures then count as that submitter's.

    Example: mt-eval keys register alice.pub --submitter alice --db board.db
    """
    from mt_eval.runcard.signing import read_public_key
    from mt_eval.store import open_store
    from mt_eval.store.keys import register_key

    public = read_public_key(public_key)
    with open_store(db) as store:
        info, added = register_key(store, public, submitter)
    state = "registered" if added else "already registered"
    out.print(f"key {info.key_id} {state} to {escape(info.submitter)}", highlight=False)


@keys_app.command("revoke")
def revoke(
    key_id: Annotated[str, typer.Argument(help="The key id (16 hex digits; mt-eval keys list).")],
    db: DbOpt = None,
) -> None:
    """Revoke a registered key: it stays listed, its signatures no longer count, publish refuses them.

    Example: mt-eval keys revoke 3f2a9c0d1e4b5a68 --db board.db
    """
    from mt_eval.store import open_store
    from mt_eval.store.keys import revoke_key

    with open_store(db) as store:
        info = revoke_key(store, key_id)
    out.print(f"key {info.key_id} of {escape(info.submitter)} revoked", highlight=False)


@keys_app.command("list")
def list_command(db: DbOpt = None) -> None:
    """List a store's registered keys (revoked ones too) and whether it requires signatures.

    Example: mt-eval keys list --db board.db
    """
    from mt_eval.render.signatures import render_keys
    from mt_eval.store import open_store
    from mt_eval.store.keys import list_keys, require_signatures

    with open_store(db) as store:
        keys, required = list_keys(store), require_signatures(store)
    render_keys(keys, out)
    out.print(f"require signatures: {'on' if required else 'off'}", highlight=False)


@keys_app.command("require")
def require(
    state: Annotated[str | None, typer.Argument(help="on or off; without it, show the setting.",
                                                metavar="[on|off]")] = None,
    db: DbOpt = None,
) -> None:
    """Make a store require signatures (on): publish then refuses a card without a valid signature by
    a registered, unrevoked key.

    Example: mt-eval keys require on --db board.db
    """
    from mt_eval.store import open_store
    from mt_eval.store.keys import require_signatures

    if state not in (None, "on", "off"):
        raise UserError(f"the setting is on or off, not {state!r}")
    with open_store(db) as store:
        required = require_signatures(store, None if state is None else state == "on")
    out.print(f"require signatures: {'on' if required else 'off'}", highlight=False)


@keys_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="A signed file (an export); its signature is FILE.sig.")],
    key: Annotated[Path | None, opt("The public key it must be signed with (e.g. the store's .pub).",
                                    "--key", "-k")] = None,
    db: DbOpt = None,
) -> None:
    """Check a detached signature (mt-eval export --sign-key): the bytes are the signed ones, and by whom.

    Exit 1 when the file changed, the signature does not hold or it is not by --key's key.

    Example: mt-eval keys check board.csv --key store.pub
    """
    from mt_eval.render.signatures import file_lines
    from mt_eval.runcard.signing import read_public_key
    from mt_eval.store import open_store, resolve_url
    from mt_eval.store.board import check_export
    from mt_eval.store.db import display
    from mt_eval.store.keys import lookup_keys

    expected = read_public_key(key) if key is not None else None
    result = check_export(file)
    registry = None
    if db is not None:
        with open_store(db) as store:
            registry = lookup_keys(store, [result.signature.key_id])
    kid = expected.key_id if expected is not None else None
    failed = result.problem is not None or (kid is not None and kid != result.signature.key_id)
    for line in file_lines(result, kid, registry, display(resolve_url(db))):
        (err if failed else out).print(line, highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)

"""What a card's seal and signatures prove, in words (``verify``), and the key registry (``keys list``).

Each line says what was checked *and* what that does not establish, because a green "OK" on a seal
is easily read as "this result is genuine": the seal proves only that nothing changed after sealing,
a valid signature only that the holder of that key signed this exact hash, and only a store's key
registry ties a key to a submitter.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:  # types only: verify need not import the store's query and ranking modules
    from mt_eval.runcard.signing import Signature, SignatureCheck
    from mt_eval.store.board import FileCheck
    from mt_eval.store.keys import KeyInfo

SEAL = ("  seal: internally consistent (every score follows from results[], nothing changed after "
        "sealing); the seal alone does not say who produced the card")
UNSIGNED = "  [yellow]unsigned:[/yellow] nothing proves who produced this card"


def _when(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC" if moment is not None else "?"


def _who(sig: Signature) -> str:
    return f"key {sig.key_id}" + (f" (claims to be {escape(sig.signer)})" if sig.signer else "")


def registry_line(sig: Signature, registry: Mapping[str, KeyInfo] | None, store: str) -> str:
    """What the store says of the signing key: registered to whom and since when, revoked, or unknown;
    and whether that is the signer the signature claims."""
    kid = sig.key_id
    if registry is None:
        return "not checked against a store's registered keys (give --db): the signer's name is only claimed"
    info = registry.get(kid)
    if info is None:
        return (f"[red]not registered[/red] in {escape(store)}: it proves possession of an unknown key, "
                "not who the signer is")
    if info.revoked_at is not None:
        return (f"[red]revoked[/red] in {escape(store)} on {_when(info.revoked_at)} (was "
                f"{escape(info.submitter)}'s): no longer evidence of anything")
    mismatch = (f" ([red]not {escape(sig.signer)}[/red], the signer it claims)"
                if sig.signer is not None and sig.signer != info.submitter else "")
    return (f"[green]registered[/green] to {escape(info.submitter)}{mismatch} in {escape(store)} since "
            f"{_when(info.registered_at)}, not revoked")


def signature_lines(checks: Sequence[SignatureCheck], registry: Mapping[str, KeyInfo] | None = None,
                    store: str = "") -> list[str]:
    """``verify``'s account of a card that verifies: the seal, then each signature (or that there is none)."""
    lines = [SEAL]
    if not checks:
        return [*lines, UNSIGNED]
    for check in checks:
        sig = check.signature
        if not check.valid:
            lines.append(f"  [red]signature INVALID[/red]: {_who(sig)}: {escape(check.problem or '')}")
            continue
        lines.append(f"  [green]signature valid[/green]: {_who(sig)}: whoever holds this key signed this "
                     f"exact run_card_hash; {registry_line(sig, registry, store)}")
    return lines


def file_lines(check: FileCheck, expected: str | None, registry: Mapping[str, KeyInfo] | None,
               store: str) -> list[str]:
    """``keys check``: whether the file's bytes are the signed ones, by which key, and whose it is."""
    sig = check.signature
    if check.problem is not None:
        return [f"[red]FAILED[/red] {escape(str(check.path))}: {escape(check.problem)}"]
    if expected is not None and expected != sig.key_id:
        return [f"[red]FAILED[/red] {escape(str(check.path))}: signed by key {sig.key_id}, not by the key "
                f"given ({expected})"]
    lines = [f"[green]OK[/green] {escape(str(check.path))}: unchanged since signed by {_who(sig)} "
             f"at {escape(sig.signed_at or '?')} (sha256 {check.sha256[:16]}…)"]
    if expected is not None:
        lines.append(f"  the signing key is the one given ({expected})")
    elif registry is None:
        lines.append("  the key comes with the signature: compare its id with the store's published key id "
                     "(--key store.pub checks it)")
    if registry is not None:
        lines.append(f"  {registry_line(sig, registry, store)}")
    return lines


def render_keys(keys: Sequence[KeyInfo], console: Console) -> None:
    """``keys list``: every registered key, revoked ones marked."""
    if not keys:
        console.print("no registered keys (mt-eval keys register KEY.pub --submitter NAME)")
        return
    table = Table("key id", "submitter", "registered", "revoked", "public key")
    for k in keys:
        table.add_row(k.key_id, escape(k.submitter), _when(k.registered_at),
                      f"[red]{_when(k.revoked_at)}[/red]" if k.revoked_at else "", k.public_key)
    console.print(table)

"""``mt-eval vault``: custodian keys, sealing a corpus's secret segments, rotation, inspection.

The work is in ``sovereign/vault.py``; the words in ``render/governance.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import opt, out

vault_app = typer.Typer(help="Encrypted gold sets: secret segments sealed to custodians' age keys.",
                        no_args_is_help=True)

RecipientOpt = Annotated[list[str], opt("A custodian's public key (age1…, as vault keygen printed it); repeat "
                                        "for several custodians, each able to open the vault alone.",
                                        "--recipient", "-r")]


@vault_app.command("keygen")
def keygen(out_file: Annotated[Path, opt("The identity file to write (mode 0600; never overwritten).",
                                         "--out", "-o")]) -> None:
    """Make a custodian identity (age X25519); its public recipient is the last line printed.

    The file is the one age-keygen writes, so `age -d -i KEYFILE` opens a vault's secret.age too.
    Keep it off the machines that run submissions, and out of every repository.

    Example: mt-eval vault keygen --out custodian.key
    """
    from mt_eval.sovereign.vault import keygen as make

    recipient = make(out_file)
    out.print(f"wrote {escape(str(out_file))} (age identity, 0600); its public recipient:", highlight=False)
    out.print(recipient, highlight=False)


@vault_app.command("seal")
def seal(
    corpus: Annotated[Path, typer.Argument(help="The corpus whose secret segments to seal (.json, .jsonl, .tsv).")],
    recipient: RecipientOpt,
    out_dir: Annotated[Path, opt("The vault folder to write (new or empty).", "--out", "-o")],
    segments: Annotated[str, opt("Segments to keep secret, comma-separated.", "--segments")] = "gold_standard,held_out",
) -> None:
    """Seal the secret segments of a corpus: DIR/public.json (the rest, in clear) and DIR/secret.age.

    Secret entries (sources and references) are dropped from public.json and encrypted to every
    --recipient; DIR/vault.json records both files' sha256, counts and recipients. The original
    corpus is no longer needed on the evaluation machine.

    Example: mt-eval vault seal corpus.json --segments gold_standard,held_out --recipient age1… --out vault
    """
    from mt_eval.sovereign.vault import seal as seal_corpus

    sealed = seal_corpus(corpus, [s.strip() for s in segments.split(",") if s.strip()], recipient, out_dir)
    secret, public = sealed.manifest["secret"], sealed.manifest["public"]
    out.print(f"sealed {secret['entries']} secret entries to {len(sealed.recipients)} recipient(s) in "
              f"{escape(str(out_dir / secret['file']))}; {public['entries']} public entries in "
              f"{escape(str(out_dir / public['file']))}", highlight=False)


@vault_app.command("rotate")
def rotate(
    vault: Annotated[Path, typer.Argument(help="The vault folder.")],
    identity: Annotated[Path, opt("A current custodian's identity file.", "--identity", "-i")],
    recipient: RecipientOpt,
    governance: Annotated[Path, opt("The governance folder whose stored full cards (texts and all) are "
                                    "re-encrypted too, when it has any.", "--governance")] = Path("governance"),
) -> None:
    """Re-encrypt a vault's secret half, and the full cards stored in the governance folder, to new
    recipients (the old keys no longer open them).

    Copies of the old files (backups) still open with the old keys: destroy them.

    Example: mt-eval vault rotate vault --identity old.key --recipient age1new…
    """
    from mt_eval.sovereign.public_card import rotate_full_cards
    from mt_eval.sovereign.vault import rotate as rotate_vault

    cards = rotate_full_cards(governance, identity, recipient)  # first: it refuses before anything changes
    sealed = rotate_vault(vault, identity, recipient)
    out.print(f"re-encrypted {escape(str(vault))} and {cards} stored full card(s) to {len(sealed.recipients)} "
              "recipient(s)", highlight=False)


@vault_app.command("inspect")
def inspect(
    vault: Annotated[Path, typer.Argument(help="The vault folder.")],
    as_json: Annotated[bool, opt("Print the manifest facts as JSON.", "--json")] = False,
) -> None:
    """Show a vault without opening it: counts per segment, recipients, hashes; exit 1 if a file changed.

    Example: mt-eval vault inspect vault
    """
    from mt_eval.render.governance import vault_lines
    from mt_eval.sovereign.vault import inspect as inspect_vault

    info = inspect_vault(vault)
    if as_json:
        out.print_json(json.dumps(info, ensure_ascii=False))
    else:
        for line in vault_lines(info):
            out.print(line, highlight=False)
    if not info["intact"]:
        raise typer.Exit(1)

"""``mt-eval vault``: custodian keys (whole, or shares of a quorum), sealing a corpus's secret segments,
rotation, revoking a quorum's custodian, inspection.

The work is in ``sovereign/vault.py`` and ``sovereign/custody.py``; the words in ``render/governance.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import opt, out
from mt_eval.errors import UserError

vault_app = typer.Typer(help="Encrypted gold sets: secret segments sealed to custodians' age keys.",
                        no_args_is_help=True)

RecipientOpt = Annotated[list[str], opt("A custodian's public key (age1…, as vault keygen printed it); repeat "
                                        "for several custodians, each able to open the vault alone.",
                                        "--recipient", "-r")]
ShareOpt = Annotated[list[Path], opt("A custodian's share file (vault keygen --shares); repeat once per "
                                     "custodian, as many as the threshold.", "--share")]


@vault_app.command("keygen")
def keygen(
    out_path: Annotated[Path, opt("The identity file to write (mode 0600; never overwritten); with --shares, "
                                  "the folder for the share files and custody.json.", "--out", "-o")],
    shares: Annotated[int | None, opt("Split the identity into this many custodians' shares (never "
                                      "written whole).", "--shares")] = None,
    threshold: Annotated[int | None, opt("With --shares: how many shares open the vault.", "--threshold")] = None,
) -> None:
    """Make a custodian identity (age X25519), or a quorum's shares; the public recipient is the last line printed.

    Without --shares the file is the one age-keygen writes, so `age -d -i KEYFILE` opens a vault's
    secret.age too. With --shares N --threshold M the identity is split (Shamir, GF(256)) into
    OUT/custodian-1.share … custodian-N.share, any M of which rebuild it, and OUT/custody.json, the
    public record to seal with (vault seal --custody). Hand each custodian one share; keep them off the
    machines that run submissions, and out of every repository.

    Example: mt-eval vault keygen --shares 5 --threshold 3 --out custody
    """
    from mt_eval.sovereign.custody import RECORD_FILE
    from mt_eval.sovereign.custody import keygen as deal
    from mt_eval.sovereign.vault import keygen as make

    if shares is None and threshold is None:
        recipient = make(out_path)
        out.print(f"wrote {escape(str(out_path))} (age identity, 0600); its public recipient:", highlight=False)
    elif shares is None or threshold is None:
        raise UserError("--shares and --threshold go together (e.g. --shares 5 --threshold 3)")
    else:
        record = deal(out_path, shares, threshold)
        recipient = record.recipient
        out.print(f"wrote {shares} shares (any {threshold} open the vault) to {escape(str(out_path))}/custodian-"
                  f"{{1..{shares}}}.share (0600) and the custody record {escape(str(out_path / RECORD_FILE))} "
                  "(seal with --custody); the identity itself was written nowhere. Its public recipient:",
                  highlight=False)
    out.print(recipient, highlight=False)


@vault_app.command("seal")
def seal(
    corpus: Annotated[Path, typer.Argument(help="The corpus whose secret segments to seal (.json, .jsonl, .tsv).")],
    out_dir: Annotated[Path, opt("The vault folder to write (new or empty).", "--out", "-o")],
    recipient: Annotated[list[str] | None, opt("A custodian's public key (age1…, as vault keygen printed it); "
                                               "repeat for several custodians, each able to open the vault "
                                               "alone.", "--recipient", "-r")] = None,
    custody: Annotated[Path | None, opt("A quorum's custody record (custody.json from vault keygen --shares): "
                                        "sealed to its recipient, opened by its threshold of shares only.",
                                        "--custody")] = None,
    segments: Annotated[str, opt("Segments to keep secret, comma-separated.", "--segments")] = "gold_standard,held_out",
    governance: Annotated[Path, opt("The governance folder holding the community's consent record for this "
                                    "dataset (governance consent add).", "--governance")] = Path("governance"),
) -> None:
    """Seal the secret segments of a corpus: DIR/public.json (the rest, in clear) and DIR/secret.age.

    Secret entries (sources and references) are dropped from public.json and encrypted to every
    --recipient (each custodian alone opens it), or with --custody to a quorum's split identity (M of
    N shares open it, and gold runs need M custodians' approvals); DIR/vault.json records both files'
    sha256, counts, recipients and the custody record. The original corpus is no longer needed on the
    evaluation machine. Refused unless the governance folder holds the language community's consent
    record in force for the dataset, covering these segments (governance consent add).

    Example: mt-eval vault seal corpus.json --segments gold_standard,held_out --custody custody/custody.json --out vault
    """
    from mt_eval.sovereign.consent import seal_with_consent
    from mt_eval.sovereign.custody import read_record
    from mt_eval.sovereign.governance import Governance

    record = read_record(custody) if custody is not None else None
    recipients = recipient or ([record.recipient] if record is not None else [])  # seal refuses none
    sealed = seal_with_consent(Governance(governance), corpus, segments.split(","), recipients, out_dir,
                               record.as_json() if record is not None else None)
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
    from mt_eval.sovereign.vault import check_custody, read_manifest
    from mt_eval.sovereign.vault import rotate as rotate_vault

    check_custody(read_manifest(vault), identity)  # a quorum vault refuses the file: before any card changes
    cards = rotate_full_cards(governance, identity, recipient)  # first: it refuses before anything changes
    sealed = rotate_vault(vault, identity, recipient)
    out.print(f"re-encrypted {escape(str(vault))} and {cards} stored full card(s) to {len(sealed.recipients)} "
              "recipient(s)", highlight=False)


@vault_app.command("revoke-custodian")
def revoke_custodian(
    vault: Annotated[Path, typer.Argument(help="The vault folder (held by quorum).")],
    custodian: Annotated[int, opt("The custodian (share id) to remove.", "--custodian")],
    share: ShareOpt,
    out_dir: Annotated[Path, opt("The folder for the remaining custodians' new shares and custody.json.",
                                 "--out", "-o")],
    threshold: Annotated[int | None, opt("The new threshold (default: the old one, at most the custodians "
                                         "left).", "--threshold")] = None,
    who: Annotated[str | None, opt("Who does this (recorded in the audit log).", "--who")] = None,
    governance: Annotated[Path, opt("The governance folder: its stored full cards are re-encrypted too, and "
                                    "the revocation is logged.", "--governance")] = Path("governance"),
) -> None:
    """Remove a custodian of a quorum vault: re-seal it to a new identity dealt to the others.

    The --share files (the threshold's worth) rebuild the identity in memory; a new one is split among
    the remaining custodians (same ids, new share files in --out), and the vault's secret half and the
    stored full cards are re-encrypted to it. The old shares, the revoked one's included, open neither
    any more; copies of the old files (backups) still open with them: destroy them.

    Example: mt-eval vault revoke-custodian vault --custodian 2 --share c1 --share c3 --share c4 --out custody2
    """
    from mt_eval.sovereign.custody import read_share
    from mt_eval.sovereign.custody import revoke_custodian as revoke

    record = revoke(vault, custodian, [read_share(p) for p in share], out_dir, governance, threshold, who)
    ids = ", ".join(str(i) for i in sorted(record.commitments))
    out.print(f"custodian {custodian} revoked; {escape(str(vault))} re-sealed to a new identity: custodians {ids} "
              f"hold its new shares in {escape(str(out_dir))} (any {record.threshold} open it); its public "
              "recipient:", highlight=False)
    out.print(record.recipient, highlight=False)


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
        if info.get("custody"):
            record = info["custody"]
            out.print(f"custody: any {record['threshold']} of custodians {', '.join(record['commitments'])} "
                      f"(split {record['split']})", highlight=False)
    if not info["intact"]:
        raise typer.Exit(1)


@vault_app.command("rotate-entries")
def rotate_entries(
    vault: Annotated[Path, typer.Argument(help="The vault folder.")],
    source: Annotated[str, opt("The segment to move entries out of.", "--from")] = "gold_standard",
    target: Annotated[str, opt("The segment to move them into.", "--to")] = "held_out",
    count: Annotated[int | None, opt("How many entries to draw (with --seed).", "--count")] = None,
    seed: Annotated[int | None, opt("The draw's seed (recorded, so the draw can be repeated).", "--seed")] = None,
    ids: Annotated[list[str] | None, opt("Move these entries instead of a draw (repeat, or comma-separated).",
                                         "--ids")] = None,
    identity: Annotated[Path | None, opt("A custodian's identity file (opens the vault).", "--identity", "-i")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (instead of --identity).", "--share")] = None,
    who: Annotated[str | None, opt("Who does this (recorded in the audit log).", "--who")] = None,
    governance: Annotated[Path, opt("The governance folder: its consent records and policy decide, its audit log "
                                    "records the moves.", "--governance")] = Path("governance"),
) -> None:
    """Rotate entries between segments (Benchmark Spec §9.3.2) and re-seal the vault; the moves are logged.

    Secret entries go public only as the policy allows ([rotation] publish_after_days in policy.toml;
    by default never: rotate gold entries into another secret segment such as held_out). Runs after a
    rotation use the new segments (and record the new corpus sha256); vault history lists every move.

    Example: mt-eval vault rotate-entries vault --from gold_standard --to held_out --count 5 --seed 7 -i custodian.key
    """
    from mt_eval.sovereign.custody import opening_key
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.rotation import rotate_entries as rotate

    texts = [i.strip() for value in ids or [] for i in value.split(",") if i.strip()]
    if not all(t.isdigit() for t in texts):
        raise UserError("--ids: entry ids are whole numbers (e.g. --ids 3,17,42)", field="--ids")
    named = [int(t) for t in texts]
    done = rotate(vault, opening_key(identity, share or []), Governance(governance), source=source, target=target,
                  count=count, seed=seed, ids=named, who=who)
    manifest = done.vault.manifest
    out.print(f"moved {len(done.moved)} entries from {escape(source)} to {escape(target)} (audit event "
              f"{done.event[:12]}); secret now {manifest['secret']['segments']}, public "
              f"{manifest['public']['segments']}; corpus sha256 {manifest['corpus_sha256']}", highlight=False)


@vault_app.command("history")
def history(
    vault: Annotated[Path, typer.Argument(help="The vault folder.")],
    governance: Annotated[Path, opt("The governance folder whose audit log holds the rotations.",
                                    "--governance")] = Path("governance"),
    identity: Annotated[Path | None, opt("A custodian's identity: list every entry, the secret ones too (ids "
                                         "and segments only, never a text).", "--identity", "-i")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (instead of --identity).", "--share")] = None,
) -> None:
    """List every rotated entry's segments over time (from the audit log); with a custodian's key, every
    entry, the ones never moved with the segment they were sealed in.

    Example: mt-eval vault history vault --governance governance --identity custodian.key
    """
    from mt_eval.render.governance import history_lines
    from mt_eval.sovereign.custody import opening_key
    from mt_eval.sovereign.governance import Governance
    from mt_eval.sovereign.rotation import history as moves_of
    from mt_eval.sovereign.vault import open_vault, read_manifest

    manifest = read_manifest(vault).manifest
    current = ({e.id: e.segment.value for e in open_vault(vault, opening_key(identity, share or [])).entries}
               if identity is not None or share else None)
    moves = moves_of(Governance(governance), str(manifest["corpus_sha256"]))
    for line in history_lines(moves, manifest, current):
        out.print(line, highlight=False)

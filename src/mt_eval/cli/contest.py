"""``mt-eval contest``: a community's contest from create to export (issue 25).

One function per command; the work is in ``mt_eval.contest`` (manifest, state, entries, ranking, lifecycle),
the words in ``render/contest.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import err, opt, out
from mt_eval.errors import UserError

contest_app = typer.Typer(help="Contests: split and seal a set, take entries, qualify, execute, rank, close, export.",
                          no_args_is_help=True)

RootArg = Annotated[Path, typer.Argument(help="The contest folder (contest.json, governance/, dev.json, vault/).")]
JsonOpt = Annotated[bool, opt("Print JSON instead of tables.", "--json")]
OrganiserOpt = Annotated[bool, opt("Show what only the organiser sees (entrant names; results before close).",
                                   "--organiser")]


@contest_app.command("create")
def create(
    root: RootArg,
    corpus: Annotated[Path, opt("The corpus to split (.json, .jsonl, .tsv).", "--corpus", "-c")],
    contest_id: Annotated[str, opt("The contest's id (lowercase letters, digits, '-').", "--id")],
    title: Annotated[str, opt("The contest's title.", "--title")],
    organiser: Annotated[str, opt("Who runs the contest (recorded in the log and the manifest).", "--organiser")],
    dev_size: Annotated[int, opt("Entries in the public development split.", "--dev-size")],
    secret_size: Annotated[int, opt("Entries in the sealed secret split.", "--secret-size")],
    threshold: Annotated[float, opt("Qualifier threshold on the primary metric, on the dev split (chrF++: 0-100).",
                                    "--threshold")],
    recipient: Annotated[list[str] | None, opt("A custodian's public key (age1…, vault keygen); repeat for "
                                               "several.", "--recipient", "-r")] = None,
    custody: Annotated[Path | None, opt("A quorum's custody record (vault keygen --shares): entries run after its "
                                        "threshold of custodians approve.", "--custody")] = None,
    licence: Annotated[str | None, opt("The licence entrants accept (default: the corpus's).", "--licence")] = None,
    primary_metric: Annotated[str, opt("The metric that qualifies and ranks.", "--primary-metric")] = "chrf_plus_plus",
    visibility: Annotated[str, opt("public (listed, anyone submits), team (listed, --member submits) or private "
                                   "(only --member sees it).", "--visibility")] = "public",
    member: Annotated[list[str] | None, opt("An account allowed in a team or private contest; repeat.",
                                            "--member")] = None,
    show_results: Annotated[bool, opt("Show secret-split results before close (default: hidden until close).",
                                      "--show-results")] = False,
    named: Annotated[bool, opt("Show entrants' names to everyone (default: Entrant 1..N).", "--named")] = False,
    require_signatures: Annotated[bool, opt("Entries must be signed with a registered submitter key.",
                                            "--require-signatures")] = False,
    max_artefact_mb: Annotated[int, opt("Largest entry artefact, MiB.", "--max-artefact-mb")] = 256,
    deadline: Annotated[str | None, opt("Last day for entries (YYYY-MM-DD).", "--deadline")] = None,
    seed: Annotated[int | None, opt("The seed of the split, kept in the organiser's manifest (anyone with the corpus "
                                    "and the seed can redo it). Default: a random 63-bit seed; a small one can be "
                                    "found from dev.json's ids by trying seeds.", "--seed")] = None,
) -> None:
    """Create a contest: split the corpus with the seed, seal the secret split, write the public dev split.

    Sealing is refused unless ROOT/governance holds the language community's consent record in force for the
    dataset covering gold_standard (mt-eval governance consent add --governance ROOT/governance …).

    Example: mt-eval contest create contests/eng-spa --corpus corpus.json --id eng-spa --title "eng→spa 2026"
    --organiser "Language Council" --seed 7 --dev-size 50 --secret-size 100 --threshold 30 --recipient age1…
    """
    from mt_eval.contest.manifest import DEV, VAULT, create_contest
    from mt_eval.sovereign.custody import read_record

    record = read_record(custody) if custody is not None else None
    recipients = recipient or ([record.recipient] if record is not None else [])
    if not recipients:
        raise UserError("--recipient or --custody: the secret split is sealed to the custodians' keys")
    if seed is None:
        import secrets

        seed = secrets.randbits(63)
    m = create_contest(root, corpus, contest_id=contest_id, title=title, organiser=organiser, seed=seed,
                       dev_size=dev_size, secret_size=secret_size, threshold=threshold, recipients=recipients,
                       custody=record.as_json() if record is not None else None, licence=licence,
                       primary_metric=primary_metric, visibility=visibility, members=member or [],
                       results_hidden_until_close=not show_results, anonymise=not named,
                       require_signatures=require_signatures, max_artefact_mb=max_artefact_mb, deadline=deadline)
    out.print(f"created contest {escape(m.id)}: {m.dev_size} dev entries in {escape(str(root / DEV))}, "
              f"{m.secret_size} secret entries sealed in {escape(str(root / VAULT))} "
              f"(quorum {m.quorum}); manifest sha256 recorded in the audit log", highlight=False)


@contest_app.command("show")
def show(root: RootArg, organiser: OrganiserOpt = False, as_json: JsonOpt = False) -> None:
    """Show a contest's rules and entries as the public sees them (--organiser: everything).

    Example: mt-eval contest show contests/eng-spa
    """
    from mt_eval.contest.state import contest_state, contest_view
    from mt_eval.render.contest import entries_table, rules_lines

    state = contest_state(root)
    view = contest_view(state, organiser=organiser)
    if as_json:
        typer.echo(json.dumps(view.as_json(), ensure_ascii=False, indent=1))
        return
    for line in rules_lines(view):
        out.print(line, highlight=False)
    if view.entries:
        out.print(entries_table(view))
    else:
        out.print("no entries yet", highlight=False)
    for problem in state.problems if organiser else ():  # events logged around the commands: they did not count
        err.print(f"[yellow]ignored[/yellow] {escape(problem)}", highlight=False)


@contest_app.command("list")
def list_command(
    folder: Annotated[Path, typer.Argument(help="A folder of contest folders.")] = Path("contests"),
    as_json: JsonOpt = False,
) -> None:
    """List the contests in a folder (a contest whose log or manifest fails its checks is named as refused).

    Example: mt-eval contest list contests
    """
    from mt_eval.contest.state import contest_view, list_contests
    from mt_eval.render.contest import list_table

    states, refused = list_contests(folder)
    if as_json:
        typer.echo(json.dumps([contest_view(s).as_json() for s in states], ensure_ascii=False, indent=1))
    elif states:
        out.print(list_table(states))
    else:
        out.print(f"no contests in {escape(str(folder))}", highlight=False)
    for line in refused:
        err.print(f"[red]refused[/red] {escape(line)}", highlight=False)


EntryArg = Annotated[int, typer.Argument(help="The entry's number (contest show lists them).")]
ShareOpt = Annotated[list[Path] | None, opt("A custodian's share of a quorum vault; repeat once per custodian.",
                                            "--share")]


@contest_app.command("submit")
def submit(
    root: RootArg,
    artefact: Annotated[Path, typer.Argument(help="A bundle folder (method.toml) or a weights-only checkpoint "
                                                  "folder, or a .tar.gz/.tgz/.tar/.zip of one.")],
    entrant: Annotated[str, opt("Who enters (an account or submitter name).", "--entrant")],
    kind: Annotated[str, opt("bundle (code run in the sandbox) or model (a weights-only seq2seq checkpoint, "
                             "run with no submitted code).", "--kind")] = "bundle",
    signature: Annotated[Path | None, opt("The submission signature (mt-eval submission sign); required when "
                                          "the contest requires signatures.", "--signature")] = None,
) -> None:
    """Submit an entry: checked as sovereign preflight (a bundle) or the weights-only checker (a model) does,
    within the contest's size limit, then copied into the contest.

    Example: mt-eval contest submit contests/eng-spa bundles/apertium --entrant alice --kind bundle
    """
    from mt_eval.contest.entries import submit_entry

    if kind not in ("bundle", "model"):
        raise UserError(f"--kind {kind!r}: bundle or model", field="--kind")
    number = submit_entry(root, artefact, entrant=entrant, kind="bundle" if kind == "bundle" else "model",
                          signature=signature)
    out.print(f"entry {number} submitted by {escape(entrant)}; next: mt-eval contest qualify {escape(str(root))} "
              f"{number}", highlight=False)


@contest_app.command("qualify")
def qualify(root: RootArg, entry: EntryArg) -> None:
    """Re-run an entry on the public dev split and compare its primary metric with the threshold (the
    entrant's own numbers are never read).

    Example: mt-eval contest qualify contests/eng-spa 1
    """
    from mt_eval.contest.execution import qualify_entry

    result = qualify_entry(root, entry)
    verdict = "[green]qualified[/green]" if result["passed"] else "[red]not qualified[/red]"
    out.print(f"entry {entry}: {verdict} ({escape(str(result['reason']))})", highlight=False)


@contest_app.command("approve")
def approve(
    root: RootArg,
    entry: EntryArg,
    custodian: Annotated[str | None, opt("The approving custodian's name (a 1-of-1 vault).", "--custodian")] = None,
    share: Annotated[Path | None, opt("The approving custodian's share (a quorum vault).", "--share")] = None,
) -> None:
    """A custodian approves a qualified entry's run on the secret split.

    Example: mt-eval contest approve contests/eng-spa 1 --share custodian-2.share
    """
    from mt_eval.contest.entries import approve_entry

    approve_entry(root, entry, custodian=custodian, share=share)
    out.print(f"entry {entry}: approval recorded", highlight=False)


@contest_app.command("execute")
def execute(
    root: RootArg,
    entry: EntryArg,
    identity: Annotated[Path | None, opt("A custodian's age identity file (a 1-of-1 vault).", "--identity")] = None,
    share: ShareOpt = None,
) -> None:
    """Run an approved entry on the sealed secret split (opened in memory); the full card is kept encrypted
    and the log records aggregate scores only.

    Example: mt-eval contest execute contests/eng-spa 1 --identity custodian.key
    """
    from mt_eval.contest.execution import execute_entry
    from mt_eval.sovereign.custody import identity_or_shares

    result = execute_entry(root, entry, identity_or_shares(identity, share or []))
    if "value" not in result:
        out.print(f"entry {entry}: [red]failed[/red] ({escape(str(result['reason']))})", highlight=False)
        return
    out.print(f"entry {entry}: executed on {result['entries']} secret entries; scores recorded in the audit log "
              "(mt-eval contest show --organiser)", highlight=False)


KeyOpt = Annotated[Path, opt("The organiser's signing key (mt-eval keys new).", "--key")]


@contest_app.command("rank")
def rank(
    root: RootArg,
    key: KeyOpt,
    identity: Annotated[Path | None, opt("A custodian's age identity file (opens the entries' full cards).",
                                         "--identity")] = None,
    share: ShareOpt = None,
) -> None:
    """Rank the executed entries: significance clusters on the primary metric from their per-segment statistics,
    competition numbering (1, 2, 2, 4); writes ROOT/ranking.json signed by --key and records it.

    Example: mt-eval contest rank contests/eng-spa --identity custodian.key --key organiser.key
    """
    from mt_eval.contest.ranking import rank_contest
    from mt_eval.render.contest import ranking_table
    from mt_eval.sovereign.custody import opening_key

    document, _ = rank_contest(root, opening_key(identity, share or []), key)
    out.print(ranking_table(document))
    out.print(f"ranking {document['ranking_sha256']} signed by key {document['organiser_key_id']}; results stay "
              "hidden until close", highlight=False)


@contest_app.command("close")
def close(root: RootArg, key: KeyOpt) -> None:
    """Close the contest: every approved entry executed or failed, the ranking covering the executed ones; from
    now on nothing changes and the results are public.

    Example: mt-eval contest close contests/eng-spa --key organiser.key
    """
    from mt_eval.contest.lifecycle import close_contest

    state = close_contest(root, key)
    out.print(f"contest {escape(state.manifest.id)} closed; results are public "
              f"(mt-eval contest export {escape(str(root))} -o results.json)", highlight=False)


@contest_app.command("export")
def export(
    root: RootArg,
    output: Annotated[Path | None, opt("Write here instead of standard output.", "--output", "-o")] = None,
    fmt: Annotated[str, opt("json or csv.", "--format")] = "json",
    organiser: Annotated[bool, opt("Export before close, results and names included (the organiser only).",
                                   "--organiser")] = False,
) -> None:
    """Export the results: ranks, scores with CIs, artefact hashes, entrants (or pseudonyms), the ranking's
    signature. Refused while results are hidden, unless --organiser.

    Example: mt-eval contest export contests/eng-spa --format csv -o results.csv
    """
    from mt_eval.contest.lifecycle import export_contest, export_text
    from mt_eval.contest.state import contest_state

    if output is None:
        typer.echo(export_text(contest_state(root), fmt, organiser), nl=False)
        return
    export_contest(root, output, fmt, organiser=organiser)
    out.print(f"wrote {escape(str(output))}", highlight=False)


@contest_app.command("publish")
def publish(
    root: RootArg,
    db: Annotated[str, opt("The leaderboard store (path or URL).", "--db")],
    key: KeyOpt,
    identity: Annotated[Path | None, opt("A custodian's age identity file (opens the entries' full cards).",
                                         "--identity")] = None,
    share: ShareOpt = None,
) -> None:
    """Publish a closed contest's executed entries to a leaderboard store as public sovereign cards (no entry
    results), signed by --key, which the store must know (mt-eval keys register ORG.pub --submitter ORGANISER).

    Example: mt-eval contest publish contests/eng-spa --db board.db --key organiser.key --identity custodian.key
    """
    from mt_eval.contest.lifecycle import publish_contest
    from mt_eval.sovereign.custody import opening_key

    for result in publish_contest(root, db, key, opening_key(identity, share or [])):
        out.print(f"{result.run_card_hash[:12]}… {escape(result.status)}", highlight=False)


@contest_app.command("sign-model")
def sign_model_command(
    checkpoint: Annotated[Path, typer.Argument(help="A weights-only checkpoint folder (or archive of one).")],
    key: Annotated[Path, opt("Your submitter key (mt-eval keys new), registered by the organiser.", "--key")],
    out_path: Annotated[Path | None, opt("Where to write the signature (default CHECKPOINT.sig).", "--out")] = None,
) -> None:
    """Sign a weights-only model for a contest that requires signatures (bundles: mt-eval submission sign).

    Example: mt-eval contest sign-model my-checkpoint --key me.key
    """
    from mt_eval.contest.entries import sign_model

    path = sign_model(checkpoint, key, out_path)
    out.print(f"signed: {escape(str(path))}; submit with --kind model --signature {escape(str(path))}",
              highlight=False)

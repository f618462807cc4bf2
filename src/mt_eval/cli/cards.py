"""Commands that read one file: ``validate`` a corpus; ``verify``, ``show`` and ``report`` a run card."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import CardArg, SrcLangOpt, TgtLangOpt, err, opt, out
from mt_eval.runcard.io import load_card


def validate(
    corpus: Annotated[Path, typer.Argument(help="Corpus file to check (.json, .jsonl, .tsv).")],
    source_lang: SrcLangOpt = None, target_lang: TgtLangOpt = None,
) -> None:
    """Check a corpus: exit 0 with a summary, or exit 2 with one line per problem.

    Example: mt-eval validate examples/ntrex128-eng-spa.json
    """
    from mt_eval.corpus import load_corpus, summarize
    from mt_eval.render.corpus import render_summary

    render_summary(summarize(load_corpus(corpus, source_lang=source_lang, target_lang=target_lang)), out)


def verify(card: CardArg) -> None:
    """Recompute the fingerprint, every derivable score, the stored statistics and the seal; exit 1
    naming what differs. The statistics sidecar (<card>.stats.npz) is checked when it is beside the card.

    A card that verifies is internally consistent: nothing was edited after it was sealed. It does
    not prove the predictions came from the method named on it (that is what reproducing the run is for).

    Example: mt-eval verify runs/demo/run_card.json
    """
    from mt_eval.qa.card import is_qa_card, verify_qa_card
    from mt_eval.runcard.io import migrate, read_card_json
    from mt_eval.runcard.verify import verify_card

    data = read_card_json(card)  # a QA card (``mt-eval qa … --out``) has a schema of its own
    problems = verify_qa_card(data) if is_qa_card(data) else verify_card(migrate(data, file=str(card)), card)
    if problems:
        err.print(f"[red]FAILED[/red] {escape(str(card))}: {escape(problems[0])}", highlight=False, soft_wrap=True)
        for extra in problems[1:5]:
            err.print(f"  also: {escape(extra)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    out.print(f"[green]OK[/green] {escape(str(card))}: fingerprint, scores and run_card_hash verify")


def show(
    card: CardArg,
    worst: Annotated[int, opt("How many lowest-chrF++ entries to list.")] = 5,
) -> None:
    """Print a run card as tables: scores and tier, breakdowns, cost, speed, worst entries.

    Example: mt-eval show runs/demo/run_card.json --worst 10
    """
    from mt_eval.render.card import print_card

    print_card(load_card(card), out, worst=worst)


def report(
    card: CardArg,
    out_path: Annotated[Path | None, opt("Write the HTML here (default: report.html beside the card).",
                                         "--out", "-o")] = None,
) -> None:
    """Write a run card as one self-contained HTML page and print its path.

    Example: mt-eval report runs/demo/run_card.json --out report.html
    """
    from mt_eval.render.html import write_report

    typer.echo(str(write_report(load_card(card), card, out_path)))

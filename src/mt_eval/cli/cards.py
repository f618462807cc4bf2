"""Commands that read files: ``validate`` a corpus; ``verify``, ``show`` and ``report`` run cards.

``show`` and ``report`` verify a card before displaying it and still display one that fails, under
a banner naming the first problem: refusing would hide the evidence, showing it plainly would
present a tampered card as the sealed record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from mt_eval.cli.common import (
    BOOTSTRAP,
    DEFAULT_CACHE_PATH,
    AlphaOpt,
    BootOpt,
    CardArg,
    CometModelOpt,
    ForceOpt,
    JsonOpt,
    JudgeCacheOpt,
    JudgeOpt,
    MetricsOpt,
    SeedOpt,
    SrcLangOpt,
    TgtLangOpt,
    err,
    opt,
    opt_in_inputs,
    out,
)
from mt_eval.runcard.io import load_card

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric
    from mt_eval.runcard.signing import SignatureCheck


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


def verify(
    card: CardArg,
    db: Annotated[str | None, opt("Also say whether each signing key is registered (and not revoked) in this "
                                  "store: a SQLite file or a database URL.", "--db", metavar="<path|url>")] = None,
    judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH, comet_model: CometModelOpt = None,
) -> None:
    """Recompute the fingerprint, every derivable score, the stored statistics and the seal; exit 1
    naming what differs. The statistics sidecar (<card>.stats.npz) is checked when it is beside the card.

    A card scored with generated judges verifies only with the same judge cards (--judge, sha256 checked;
    exit 2 naming the judge otherwise): they are recomputed through their endpoint, answers from --judge-cache.
    A card that scored comet_score verifies only with the same checkpoint (--comet-model, sha256 checked).

    A card that verifies is internally consistent: nothing was edited after it was sealed. It does
    not prove the predictions came from the method named on it (that is what reproducing the run is for),
    nor who made it: signatures (<card>.sig, mt-eval sign) are checked and each is reported with what it
    proves; an invalid one fails verify (exit 1). With --db, each key is looked up in that store.

    Example: mt-eval verify runs/demo/run_card.json --db board.db
    """
    from mt_eval.qa.card import is_qa_card, verify_qa_card
    from mt_eval.runcard.io import migrate, read_card_json
    from mt_eval.runcard.judges import card_judges, require_judges
    from mt_eval.runcard.rescore import require_comet
    from mt_eval.runcard.signing import check_card_signatures
    from mt_eval.runcard.verify import require_same_detector, verify_card

    data = read_card_json(card)  # a QA card (``mt-eval qa … --out``) has a schema of its own
    checks = check_card_signatures(card, data.get("run_card_hash"))  # a malformed .sig: one line, before the work
    given, checkpoint = opt_in_inputs(judge, judge_cache, comet_model)
    qa = is_qa_card(data)
    judges = require_judges(card_judges(data), given) if not qa else []  # refused: exit 2, one line
    comet = require_comet(data, checkpoint) if not qa else None
    if not qa:
        require_same_detector(data)  # scored with a detector this install lacks: refused, exit 2, one line
    problems = (verify_qa_card(data) if qa
                else verify_card(migrate(data, file=str(card)), card, judges=judges, comet=comet))
    if problems:
        err.print(f"[red]FAILED[/red] {escape(str(card))}: {escape(problems[0])}", highlight=False, soft_wrap=True)
        for extra in problems[1:5]:
            err.print(f"  also: {escape(extra)}", highlight=False, soft_wrap=True)
        raise typer.Exit(1)
    out.print(f"[green]OK[/green] {escape(str(card))}: fingerprint, scores and run_card_hash verify")
    _signatures(card, checks, db)


def _signatures(card: Path, checks: list[SignatureCheck], db: str | None) -> None:
    """``verify``'s signature report; exit 1 when a signature beside the card is invalid."""
    from mt_eval.render.signatures import signature_lines

    registry, where = None, ""
    if db is not None:  # the store is the optional 'store' extra: verify without --db needs none of it
        from mt_eval.store import open_store, resolve_url
        from mt_eval.store.db import display
        from mt_eval.store.keys import lookup_keys

        with open_store(db) as store:
            registry = lookup_keys(store, [c.signature.key_id for c in checks])
        where = display(resolve_url(db))
    for line in signature_lines(checks, registry, where):
        out.print(line, highlight=False, soft_wrap=True)
    bad = [c for c in checks if not c.valid]
    if bad:
        err.print(f"[red]FAILED[/red] {escape(str(card))}: signature by key {bad[0].signature.key_id} is invalid "
                  f"({escape(bad[0].problem or '')})", highlight=False, soft_wrap=True)
        raise typer.Exit(1)


def _load_checked(path: Path, opt_in: tuple[list[JudgeMetric], CometConfig | None] = ([], None)
                  ) -> tuple[dict[str, Any], list[str]]:
    """The card, shape-checked (a user error names the file), and what ``verify`` finds wrong with it (with the
    judges and COMET checkpoint given, ``opt_in_inputs``: without them a card that needs them is shown as not
    rescorable)."""
    from mt_eval.errors import UserError
    from mt_eval.render.html.parts import require_card
    from mt_eval.runcard.verify import verify_card

    judges, comet = opt_in
    card = load_card(path)
    try:
        require_card(card)
    except UserError as exc:
        exc.file = exc.file or str(path)
        exc.args = (exc.one_line(),)
        raise
    return card, verify_card(card, path, judges=judges, comet=comet)


def show(
    card: CardArg,
    worst: Annotated[int, opt("How many lowest-chrF++ entries to list.")] = 5,
    metrics: MetricsOpt = None,
    as_json: JsonOpt = False,
    judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH, comet_model: CometModelOpt = None,
) -> None:
    """Print a run card as tables: scores and tier, breakdowns, cost, speed, worst entries.

    The card is verified first; one that fails is still shown, under a red NOT VERIFIED banner (a card scored
    with generated judges or comet_score verifies only with --judge / --comet-model, as in verify).

    Examples:

      mt-eval show runs/demo/run_card.json --worst 10

      mt-eval show card.json -m chrf++,bleu

      mt-eval show card.json --json | jq '.scores.chrf_plus_plus, .verified'
    """
    from mt_eval.render.card import print_card
    from mt_eval.render.card_data import select_metrics, summary

    if worst < 0:
        from mt_eval.errors import UserError

        raise UserError(f"--worst must be 0 or more, not {worst}", field="worst")
    data, problems = _load_checked(card, opt_in_inputs(judge, judge_cache, comet_model))
    only = select_metrics(data, metrics)
    if as_json:
        # Plain print: rich would wrap and colour; json.dumps writes control characters as \u escapes.
        print(json.dumps(summary(data, problems, only), ensure_ascii=False, indent=2))
        return
    print_card(data, out, worst=worst, problems=problems, metrics=only)


def report(
    cards: Annotated[list[Path], typer.Argument(
        help="Run card(s). With several, one page compares them; the first is the baseline.",
        metavar="CARD.json...", show_default=False)],
    out_path: Annotated[Path | None, opt("Write the HTML here (default: report.html beside the card, or "
                                         "comparison.html beside the first of several).", "--out", "-o")] = None,
    force: ForceOpt = False,
    metrics: MetricsOpt = None,
    bootstrap: BootOpt = BOOTSTRAP.n_resamples, alpha: AlphaOpt = BOOTSTRAP.alpha, seed: SeedOpt = BOOTSTRAP.seed,
    judge: JudgeOpt = None, judge_cache: JudgeCacheOpt = DEFAULT_CACHE_PATH, comet_model: CometModelOpt = None,
) -> None:
    """Write run cards as one self-contained HTML page and print its path.

    One card: its metrics with CI bars, breakdowns and every entry. Several: every metric with its
    interval and the paired significance of each system against the first card (Holm-corrected),
    score distributions, and the entries side by side with character-level differences from the
    reference. Cards are verified first (a failing one gets a warning box); an existing file is
    not replaced without --force.

    Examples:

      mt-eval report runs/demo/run_card.json --out report.html

      mt-eval report baseline.json system-a.json system-b.json -o comparison.html -m chrf++ -m bleu
    """
    from mt_eval.render.card_data import select_metrics
    from mt_eval.render.html import check_target, write_page, write_report

    if len(cards) == 1:
        check_target(out_path or cards[0].parent / "report.html", force=force)  # before the work, not after
        data, problems = _load_checked(cards[0], opt_in_inputs(judge, judge_cache, comet_model))
        only = select_metrics(data, metrics)
        typer.echo(str(write_report(data, cards[0], out_path, force=force, problems=problems, metrics=only)))
        return
    target = check_target(out_path or cards[0].parent / "comparison.html", force=force)
    opt_in = opt_in_inputs(judge, judge_cache, comet_model)  # built once for every card
    loaded = [_load_checked(path, opt_in) for path in cards]
    page = _comparison_page(cards, loaded, metrics, bootstrap, alpha, seed)
    typer.echo(str(write_page(page, target, force=force)))


def _comparison_page(paths: list[Path], loaded: list[tuple[dict[str, Any], list[str]]], metrics: list[str] | None,
                     n_resamples: int, alpha: float, seed: int) -> str:
    """compare() on the cards (their stored statistics where usable; a fallback is one warning line)."""
    import warnings

    from mt_eval.cli.common import bootstrap_config
    from mt_eval.comparison import compare
    from mt_eval.render.html.compare_page import render_comparison

    config = bootstrap_config(n_resamples, alpha, seed)
    wanted = [m.strip() for item in metrics or [] for m in item.split(",") if m.strip()] or None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compare([str(p) for p in paths], metrics=wanted, n_resamples=config.n_resamples,
                         alpha=config.alpha, seed=config.seed)
    for w in caught:
        err.print(f"[yellow]warning:[/yellow] {escape(str(w.message))}", highlight=False, soft_wrap=True)
    sources = [str(p) for p in paths]
    return render_comparison(result, [c for c, _ in loaded], sources, [p for _, p in loaded])

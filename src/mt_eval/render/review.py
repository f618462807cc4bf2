"""Terminal rendering of review campaigns: what ``create`` made, ``status`` (progress per reviewer) and
``report`` (quality control, agreement, the §7.2 verdict per method, the adjudication list). Every text
that came from a reviewer or a card is escaped."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from mt_eval.review.campaign import CampaignSummary, ImportSummary
from mt_eval.review.gate import ReviewVerdict
from mt_eval.review.offline import SCALE_LABELS
from mt_eval.review.report import CampaignReport, CampaignStatus


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render_created(summary: CampaignSummary, console: Console) -> None:
    controls = ", ".join(f"{n} {k.removeprefix('control_')}" for k, n in summary.controls.items())
    console.print(f"campaign {escape(summary.name)} ({summary.uid}): {summary.entries} entries × "
                  f"{len(summary.cards)} method(s) = {summary.outputs} outputs, controls: {controls or 'none'}",
                  highlight=False)


def render_imported(summary: ImportSummary, console: Console) -> None:
    replaced = f", replacing {summary.replaced} earlier" if summary.replaced else ""
    console.print(f"{escape(summary.campaign)}: {summary.ratings} of {summary.items} items rated by "
                  f"{escape(summary.reviewer)}{replaced}", highlight=False)


def render_status(status: CampaignStatus, console: Console) -> None:
    console.print(f"[bold]{escape(status.name)}[/] ({status.uid}), target {escape(status.target_language)}, "
                  f"reference shown {status.reference_policy}; {status.entries} entries, {status.outputs} outputs "
                  f"of {len(status.cards)} method(s), {status.controls} controls", highlight=False)
    table = Table(title="reviewers", title_justify="left")
    for col in ("reviewer", "rated", "of", "progress", "median s/item", "imported"):
        table.add_column(col, justify="right" if col not in ("reviewer", "imported") else "left")
    for r in status.reviewers:
        imported = r.imported_at.strftime("%Y-%m-%d %H:%M") if r.imported_at else "not yet"
        table.add_row(escape(r.name), str(r.rated), str(r.total), f"{r.rated / r.total:.0%}" if r.total else "–",
                      _num(r.median_seconds, 1), imported)
    if not status.reviewers:
        console.print("no batch exported yet (mt-eval review export CAMPAIGN --reviewer NAME -o batch.html)")
    else:
        console.print(table)


def _verdict_row(v: ReviewVerdict, method: str) -> tuple[str, ...]:
    ci = f"[{_num(v.ci_lower)}, {_num(v.ci_upper)}]" if v.ci_lower is not None else "–"
    verdict = "[green]accepted[/]" if v.accepted else f"[red]not accepted[/]: {escape('; '.join(v.reasons))}"
    share = "–" if v.reject_share is None else f"{v.reject_share:.0%}"
    if v.reject_lower is not None and v.reject_upper is not None:
        share += f" [{v.reject_lower:.0%}, {v.reject_upper:.0%}]"
    return (escape(method), v.run_card_hash[:12], str(v.reviewers), str(v.entries), _num(v.mean), ci, share, verdict)


def render_report(report: CampaignReport, console: Console) -> None:
    render_status(report.status, console)
    qc = Table(title="quality control (controls rated below real items, one-sided Mann-Whitney)", title_justify="left")
    for col in ("reviewer", "controls", "mean", "others", "mean", "p", "outcome"):
        qc.add_column(col, justify="left" if col in ("reviewer", "outcome") else "right")
    for c in report.checks:
        outcome = "[green]included[/]" if c.passed else f"[red]excluded[/]: {escape(c.reason)}"
        qc.add_row(escape(c.reviewer), str(c.controls), _num(c.control_mean), str(c.others), _num(c.other_mean),
                   "–" if c.p is None else f"{c.p:.3g}", outcome)
    console.print(qc)
    a = report.agreement
    alpha = (f"{a.alpha.point:.3f} [{a.alpha.ci_lower:.3f}, {a.alpha.ci_upper:.3f}]" if a.alpha is not None
             else "– (needs two items rated by two included reviewers)")
    console.print(f"agreement over {a.items} output(s) rated by 2+ included reviewers: Krippendorff's ordinal α "
                  f"{alpha}, Gwet's AC2 (ordinal weights) {_num(a.ac2, 3)}", highlight=False)
    gate = Table(title="validation gate (Benchmark Spec §7.2), over every campaign of each card", title_justify="left")
    for col in ("method", "card", "reviewers", "entries", "mean", "95% CI", "reject [95% Wilson]", "verdict"):
        gate.add_column(col, justify="left" if col in ("method", "card", "verdict") else "right")
    for v in report.verdicts:
        gate.add_row(*_verdict_row(v, report.status.methods.get(v.run_card_hash, "")))
    console.print(gate)
    if not report.adjudication:
        console.print("adjudication: no output's ratings span three scale points")
        return
    adj = Table(title=f"adjudication: {len(report.adjudication)} output(s) whose ratings span three scale points",
                title_justify="left")
    for col in ("entry", "method", "item", "ratings", "comments"):
        adj.add_column(col, overflow="fold")
    for d in report.adjudication:
        ratings = ", ".join(f"{escape(n)} {v} {SCALE_LABELS[v]}" for n, v in sorted(d.ratings.items()))
        comments = " | ".join(f"{escape(n)}: {escape(t)}" for n, t in sorted(d.comments.items()))
        adj.add_row(str(d.entry_id), escape(report.status.methods.get(d.card_hash or "", "") or "control"),
                    d.item_hash[:12], ratings, comments)
    console.print(adj)

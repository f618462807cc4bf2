"""Terminal rendering of run cards (rich tables).

Every string that comes from the card goes through ``_t`` (control characters written out, then
rich markup escaped): a card is data from anywhere, and neither a prediction nor a method name may
drive the terminal or inject markup. A card that does not verify is still shown, under a red
banner naming the first problem, so a tampered card is never displayed as if it were sound.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from mt_eval.errors import UserError
from mt_eval.metrics.variant_class import verdict_counts
from mt_eval.render.card_data import entry_fst_rate, fst_label, neutral, usage_blocks
from mt_eval.render.critical import CRITICAL_KEYS, critical_table
from mt_eval.runcard.io import as_dict
from mt_eval.scoring.composite import effective_tier, tier_label

TIER_STYLE = {
    "fluent": "bold green", "deployable": "green", "functional": "yellow",
    "emerging": "dark_orange", "baseline": "red", "unscored": "dim",
}
SHOWN = ("chrf_plus_plus", "chrf", "bleu", "ter", "exact_match_rate", "length_ratio",
         "equivalent_match_rate", "fst_acceptance_rate", "morphological_accuracy", "orthographic_accuracy",
         "semantic_score", "code_switching_rate", "hallucination_rate", "terminology_adherence",
         "consistency_score", "compliance_index", "compliance_index_repaired", "repair_effectiveness",
         *CRITICAL_KEYS)


def _t(value: Any) -> str:
    """Card text as safe rich markup: control characters neutralised, then markup escaped."""
    return escape(neutral(value))


def _tier(tier: str) -> str:
    """Rich markup of a tier, capped until reviewed: "deployable — awaiting review" in functional's colour."""
    return f"[{TIER_STYLE.get(effective_tier(tier), '')}]{escape(tier_label(tier))}[/]"


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _require(card: dict[str, Any], *keys: str) -> None:
    missing = [k for k in keys if k not in card]
    if missing:
        raise UserError(f"not a run card: missing {', '.join(missing)}", field=missing[0])


def print_summary(card: dict[str, Any], console: Console) -> None:
    s = card["scores"]
    tier = s["quality_tier"]
    console.print(
        f"[bold]{_t(card['method']['name'])}[/bold] on {_t(card['dataset']['id'])} "
        f"({card['dataset']['entry_count']} entries, profile {card['profile']}): "
        f"composite [bold]{_fmt(s['composite'])}[/bold] "
        f"{_tier(tier)}  chrF++ {_fmt(s['chrf_plus_plus'], 2)}  "
        f"BLEU {_fmt(s['bleu'], 2)}  errors {_t(s['errors'])}",
        highlight=False, soft_wrap=True,
    )


def _scores_table(card: dict[str, Any], only: list[str] | None = None) -> Table:
    s = card["scores"]
    cis = s.get("confidence_intervals", {})
    table = Table(title="Scores", title_justify="left")
    for col in ("metric", "value", "95% CI", "weight"):
        table.add_column(col, overflow="fold")
    for metric_id in SHOWN if only is None else [m for m in only if m != "composite"]:
        if metric_id not in card["metrics"] and s.get(metric_id) is None:
            continue  # a metric that does not apply to this language: the card holds its null
        info = card["metrics"].get(metric_id, {})
        ci = cis.get(metric_id)
        ci_text = f"[{_fmt(ci['ci_lower'])}, {_fmt(ci['ci_upper'])}]" if ci else ""
        table.add_row(metric_id, _fmt(s.get(metric_id)), ci_text, _fmt(info.get("weight"), 3))
    ci = cis.get("composite")
    table.add_row("[bold]composite[/bold]", f"[bold]{_fmt(s['composite'])}[/bold]",
                  f"[{_fmt(ci['ci_lower'])}, {_fmt(ci['ci_upper'])}]" if ci else "", "")
    tier = s["quality_tier"]
    table.add_row("quality_tier", _tier(tier), "", "")
    return table


def _breakdown_table(name: str, groups: dict[str, dict[str, Any]]) -> Table:
    table = Table(title=name.replace("_", " "), title_justify="left")
    for col in ("group", "n", "errors", "chrF++", "BLEU", "exact match", "composite", "tier"):
        table.add_column(col, justify="right" if col not in ("group", "tier") else "left")
    for key, g in groups.items():
        table.add_row(_t(key), _t(g["total"]), _t(g["errors"]), _fmt(g["chrf_plus_plus"], 2),
                      _fmt(g["bleu"], 2), _fmt(g["exact_match_rate"], 3), _fmt(g["composite"]),
                      _tier(g["quality_tier"]))
    return table


def _kv_table(title: str, block: dict[str, Any]) -> Table:
    table = Table(title=title, title_justify="left", show_header=False)
    table.add_column("field")
    table.add_column("value", justify="right")
    for k, v in block.items():
        table.add_row(_t(k), _t(_fmt(v, 6)))
    return table


def _worst_table(card: dict[str, Any], n: int) -> Table:
    rows = sorted(card["results"], key=lambda r: (r["entry_chrf"] is None, r["entry_chrf"] or 0.0))[:n]
    fst = any(entry_fst_rate(r) is not None for r in card["results"])
    table = Table(title=f"Worst {n} entries by chrF++", title_justify="left")
    for col in ("id", "chrF++", "source", "reference", "predicted", *(("FST",) if fst else ())):
        table.add_column(col, overflow="fold", max_width=None if col in ("id", "chrF++", "FST") else 40)
    for r in rows:
        pred = f"[red]{_t(r['error'])}[/red]" if r.get("error") else _t(r["predicted"])
        cells = [_t(r["entry_id"]), _fmt(r["entry_chrf"], 1), _t(r["source"]), _t(r["reference"]), pred]
        table.add_row(*cells, *((fst_label(entry_fst_rate(r)),) if fst else ()))
    return table


def verification_banner(problems: list[str], *, invalid: bool = False) -> Panel:
    """The red box a card that fails verification is shown under (first problem, then how many more);
    ``invalid``: the card does not even have a run card's shape, so only its sound parts are shown."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    why = ("This card is not a valid run card: the parts that rely on the named field are left out, the rest "
           "is shown as stored." if invalid else "This card does not match its seal: it (or its statistics) "
           "changed after it was written. Shown as stored;")  # fmt: skip
    return Panel(f"[bold]{_t(problems[0])}[/bold]{more}\n{why} `mt-eval verify` lists every difference.",
                 title="[bold]NOT VERIFIED[/bold]", title_align="left", border_style="red", style="red",
                 expand=False)  # fmt: skip


def shape_problems(card: dict[str, Any]) -> tuple[list[str], set[str]]:
    """Where ``card`` departs from ``runcard.model.RunCard``: one line per problem (``field.path: why``)
    and the top-level fields concerned; both empty for a card of the right shape."""
    from pydantic import ValidationError

    from mt_eval.runcard.model import RunCard

    try:
        RunCard.model_validate(card)
    except ValidationError as exc:
        errors = exc.errors()
        lines = [f"{'.'.join(str(p) for p in e['loc']) or 'card'}: {e['msg']}" for e in errors]
        return lines, {str(e["loc"][0]) for e in errors if e["loc"]}
    return [], set()


# What each part of the tables reads: a part is left out when one of its fields is malformed.
_NEEDS = {
    "summary": {"method", "dataset", "scores", "profile"},
    "scores": {"scores", "metrics"},
    "breakdowns": {"scores"},
    "usage": {"cost", "speed", "tokens", "method"},
    "worst": {"results"},
    "warnings": {"warnings"},
}


def print_card(card: dict[str, Any], console: Console, *, worst: int = 5, problems: list[str] | None = None,
               metrics: list[str] | None = None) -> None:
    """The card as tables; ``problems`` (from ``verify_card``) puts the red banner first and last,
    ``metrics`` limits the scores table (``-m``). A card that is not a valid run card (``RunCard``)
    gets the banner whatever ``problems`` says, and only the parts whose fields are sound."""
    _require(card, "scores", "dataset", "method", "results", "metrics")
    shape, broken = shape_problems(card)
    problems = list(problems or []) or shape
    ok = {part for part, fields in _NEEDS.items() if not fields & broken}
    if problems:
        console.print(verification_banner(problems, invalid=bool(shape)))
    if "summary" in ok:
        print_summary(card, console)
    fp = str(as_dict(card.get("fingerprint")).get("hash", ""))
    console.print(f"run {_t(card.get('run_id'))}  fingerprint {_t(fp[:16])}…  hash "
                  f"{_t(str(card.get('run_card_hash', ''))[:16])}…", highlight=False)  # fmt: skip
    declared = as_dict(card.get("method_config")).get("development_data")  # Benchmark Spec §9.2.2
    console.print(f"development data: {_t(str(declared) if declared else 'not on this card (made before §9.2.2)')}",
                  highlight=False, soft_wrap=True)
    if "scores" in ok:
        console.print(_scores_table(card, metrics))
        for metric_id, info in card["metrics"].items():
            if info.get("signature") and (metrics is None or metric_id in metrics):
                console.print(f"  [dim]{_t(metric_id)}: {_t(info['signature'])}[/dim]", soft_wrap=True)
        if counts := verdict_counts(card["results"]):  # per-entry match verdicts (Scoring Spec App. B)
            console.print("match verdicts: " + "  ".join(f"{k} {n}" for k, n in counts.items()), highlight=False)
    if "breakdowns" in ok:
        for name in ("by_difficulty", "by_provenance", "by_register", "by_segment"):
            if card["scores"].get(name):
                console.print(_breakdown_table(name, card["scores"][name]))
    if "usage" in ok:
        blocks, notes = usage_blocks(card)
        for title, block in blocks:
            console.print(_kv_table(title, block))
        for note in notes:
            console.print(f"[dim]{_t(note)}[/dim]", highlight=False)
    if worst > 0 and "worst" in ok:
        console.print(_worst_table(card, worst))
        if (critical := critical_table(card, worst)) is not None:  # flagged entries with their offending tokens
            console.print(critical)
    if "warnings" in ok:
        for w in card.get("warnings", []):
            console.print(f"[yellow]warning:[/yellow] {_t(w)}", highlight=False)
    left_out = [part for part in _NEEDS if part not in ok and (part != "worst" or worst > 0)]
    if left_out:
        console.print(f"[red]not shown (malformed {', '.join(sorted(broken))}): {', '.join(left_out)}[/red]",
                      highlight=False)  # fmt: skip
    if problems:
        console.print(f"[bold red]NOT VERIFIED:[/bold red] [red]{_t(problems[0])}[/red]", highlight=False)

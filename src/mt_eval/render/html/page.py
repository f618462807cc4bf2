"""Assemble the report page: header, composite, metrics, breakdowns, blocks, provenance, entries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mt_eval.render.card_data import entry_fst_rate, fst_label, usage_blocks
from mt_eval.render.html.assets import CSS, JS
from mt_eval.render.html.critical import critical_section
from mt_eval.render.html.parts import (
    BREAKDOWNS,
    DOMAIN,
    EXTRA_SCORES,
    LABELS,
    TIER_CUTS,
    badge,
    bar,
    ci_pair,
    ci_text,
    digits_for,
    e,
    fmt,
    kv_table,
    num,
    require_card,
    short,
    verification_box,
)
from mt_eval.render.html.robustness import robustness_section
from mt_eval.runcard.io import as_dict
from mt_eval.scoring.profiles import SCORE_KEYS


def _level(cis: dict[str, Any]) -> str:
    alpha = cis.get("alpha")
    return f"{(1 - alpha) * 100:g}% CI" if isinstance(alpha, int | float) else "95% CI"


def _header(card: dict[str, Any]) -> str:
    m, ds, env = as_dict(card.get("method")), as_dict(card.get("dataset")), as_dict(card.get("environment"))
    fp = as_dict(card.get("fingerprint")).get("hash")
    env_line = " · ".join(part for part in (
        f"mt-eval {env['harness_version']}" if env.get("harness_version") else "",
        f"commit {env['harness_git_commit']}" if env.get("harness_git_commit") else "",
        f"Python {env['python_version']}" if env.get("python_version") else "",
        f"sacrebleu {env['sacrebleu_version']}" if env.get("sacrebleu_version") else "",
        str(env.get("os") or "")) if part)
    rows = [
        ("Method", f"<strong>{e(m.get('name'))}</strong> <span class=\"muted\">({e(m.get('method_class'))}"
                   f"{', v' + e(m.get('version')) if m.get('version') else ''})</span>"),
        ("Model", e(card.get("model_slug") or "—")),
        ("Condition", e(card.get("condition") or "—")),
        ("Dataset", f"{e(ds.get('id'))} <span class=\"muted\">v{e(ds.get('version'))}</span>"),
        ("Language pair", f"{e(ds.get('language_pair'))} <span class=\"muted\">({e(ds.get('source_language'))}"
                          f" → {e(ds.get('target_language'))})</span>"),
        ("Entries", e(ds.get("entry_count"))),
        ("Profile", e(card.get("profile"))),
    ]
    rows2 = [
        ("Run id", f"<code>{e(card.get('run_id'))}</code>"),
        ("Timestamp", f"<time datetime=\"{e(card.get('timestamp'))}\">{e(card.get('timestamp'))}</time>"),
        ("Fingerprint", short(fp)),
        ("Run card hash", short(card.get("run_card_hash"))),
        ("Dataset sha256", short(ds.get("sha256"))),
        ("Environment", e(env_line or "—")),
    ]

    def dl(items: list[tuple[str, str]]) -> str:
        return '<dl class="meta">' + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items) + "</dl>"

    return (f"<header><h1>{e(m.get('name'))} <span class=\"muted\">on</span> {e(ds.get('id'))}</h1>"
            f"<p class=\"sub\">mt-eval run card report · {e(ds.get('language_pair'))} · "
            f"{e(ds.get('entry_count'))} entries · profile {e(card.get('profile'))}</p>"
            f"<div class=\"cols\">{dl(rows)}{dl(rows2)}</div></header>")


def _hero(card: dict[str, Any]) -> str:
    s = card["scores"]
    cis = as_dict(s.get("confidence_intervals"))
    comp, ci = s.get("composite"), cis.get("composite")
    pair = ci_pair(ci)
    ci_line = (f"{_level(cis)} [{fmt(pair[0], 4)}, {fmt(pair[1], 4)}]" if pair else "no confidence interval")
    extra = ""
    if s.get("cost_adjusted") is not None:
        extra = f"<div>cost-adjusted {num(s['cost_adjusted'])}</div>"
    legend = " · ".join(f"{name} ≥ {cut:.2f}" for cut, name in zip(
        reversed(TIER_CUTS), ("fluent", "deployable", "functional", "emerging"), strict=True))
    return (f'<section class="hero" aria-labelledby="composite-h"><div><div id="composite-h" class="muted">'
            f'Composite (profile {e(card.get("profile"))})</div>'
            f'<div class="big" id="composite-value">{num(comp, 4)}</div></div>'
            f'<div>{badge(s.get("quality_tier"))}</div>'
            f'<div><div id="composite-ci">{ci_line}</div>{bar("composite", comp, ci, 1.0, ticks=TIER_CUTS, width=240)}'
            f'<div class="legend">tiers: {legend} · baseline below</div></div>'
            f'<div><div>evaluated {e(s.get("evaluated"))} / {e(s.get("total"))}</div>'
            f'<div{" class=err" if s.get("errors") else ""}>errors {e(s.get("errors"))}</div>{extra}</div>'
            f"</section>")


NA = '— <span class="muted">(n/a)</span>'


def _metric_ids(card: dict[str, Any], only: list[str] | None = None) -> list[str]:
    # the spec's order (plugins after): a card file's keys are sorted, being its seal's text
    spec = {key: i for i, key in enumerate(SCORE_KEYS)}
    ids = sorted(card["metrics"], key=lambda m: spec.get(m, len(spec)))
    ids += [k for k in EXTRA_SCORES if k not in ids and card["scores"].get(k) is not None]
    return ids if only is None else [m for m in ids if m in only]


def _metrics(card: dict[str, Any], only: list[str] | None = None) -> str:
    s, metrics = card["scores"], card["metrics"]
    cis = as_dict(s.get("confidence_intervals"))
    rows = []
    for mid in _metric_ids(card, only):
        info = as_dict(metrics.get(mid))
        raw = info.get("scale")
        scale = float(raw) if isinstance(raw, int | float) and raw > 0 else 1.0
        digits = digits_for(scale)
        value, ci = s.get(mid), cis.get(mid)
        hib = info.get("higher_is_better")
        direction = "↑ higher is better" if hib is True else "↓ lower is better" if hib is False else "—"
        weight = info.get("weight")
        null = value is None
        rows.append(
            f'<tr{" class=null" if null else ""} id="metric-{e(mid)}">'
            f'<th scope="row">{e(LABELS.get(mid, mid.replace("_", " ")))} <code>{e(mid)}</code></th>'
            f'<td class="num">{num(value, digits) if not null else NA}</td>'
            f'<td class="num">{ci_text(ci, digits)}</td>'
            f'<td>{bar(LABELS.get(mid, mid), value, ci, DOMAIN.get(mid, scale), digits=digits)}</td>'
            f'<td class="num">{fmt(weight, 3) if weight is not None else "—"}</td>'
            f"<td>{direction}</td><td>{e(info.get('status') or '—')}</td></tr>")
    comp_ci = cis.get("composite")
    rows.append(f'<tr><th scope="row"><strong>composite</strong> <code>composite</code></th>'
                f'<td class="num"><strong>{num(s.get("composite"), 4)}</strong></td>'
                f'<td class="num">{ci_text(comp_ci, 4)}</td>'
                f'<td>{bar("composite", s.get("composite"), comp_ci, 1.0)}</td>'
                f'<td class="num">1.000</td><td>↑ higher is better</td><td>{badge(s.get("quality_tier"))}</td></tr>')
    head = "".join(f'<th scope="col"{c}>{h}</th>' for h, c in (
        ("metric", ""), ("value", ' class="num"'), (_level(cis), ' class="num"'), ("CI on scale", ""),
        ("weight", ' class="num"'), ("direction", ""), ("status", "")))
    return (f'<section id="scores"><h2>Metrics</h2><div class="scroll"><table class="metrics">'
            f"<caption>Every metric on the card; bars show the CI (blue) and the point on the metric's scale "
            f"(0–100 or 0–1; length ratio 0–2). A red ! marks a value beyond the drawn range.</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>")


def _breakdowns(card: dict[str, Any]) -> str:
    s = card["scores"]
    out = []
    cols = (("chrf_plus_plus", "chrF++", 2), ("bleu", "BLEU", 2), ("exact_match_rate", "exact match", 4),
            ("composite", "composite", 4))
    for name in BREAKDOWNS:
        groups = as_dict(s.get(name))
        if not groups:
            continue
        head = ('<th scope="col">group</th><th scope="col" class="num">n</th><th scope="col" class="num">errors</th>'
                + "".join(f'<th scope="col" class="num">{label}</th>' for _, label, _ in cols)
                + '<th scope="col">tier</th>')
        rows = []
        for key, g in groups.items():
            g = as_dict(g)
            gcis = as_dict(g.get("confidence_intervals"))
            cells = "".join(f'<td class="num">{num(g.get(mid), dg)} {ci_text(gcis.get(mid), dg)}</td>'
                            for mid, _, dg in cols)
            rows.append(f'<tr><th scope="row">{e(key)}</th><td class="num">{e(g.get("total"))}</td>'
                        f'<td class="num{" err" if g.get("errors") else ""}">{e(g.get("errors"))}</td>{cells}'
                        f'<td>{badge(g.get("quality_tier"))}</td></tr>')
        title = name.replace("by_", "by ").replace("_", " ")
        out.append(f'<div class="scroll"><table class="breakdown" id="{e(name)}"><caption>{e(title)}</caption>'
                   f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
    if not out:
        return ""
    return '<section id="breakdowns"><h2>Breakdowns</h2>' + "".join(out) + "</section>"


def _blocks(card: dict[str, Any]) -> str:
    blocks, notes = usage_blocks(card)
    titles = {"Cost": ("Cost (USD)", 6), "Speed": ("Speed", 6), "Tokens": ("Tokens", 2)}
    tables = [kv_table(titles[t][0], block, titles[t][1]) for t, block in blocks]
    tables += [f'<p class="muted">{e(note)}</p>' for note in notes]
    warnings = card.get("warnings") or []
    warn = ('<ul class="warn">' + "".join(f"<li>{e(w)}</li>" for w in warnings) + "</ul>"
            if warnings else '<p class="muted">No warnings.</p>')
    return (f'<section id="cost"><h2>Cost, speed, tokens</h2><div class="cols">{"".join(tables)}</div></section>'
            f'<section id="warnings"><h2>Warnings ({len(warnings)})</h2>{warn}</section>')


def _provenance(card: dict[str, Any]) -> str:
    sigs = [(mid, as_dict(info).get("signature")) for mid, info in card["metrics"].items()
            if as_dict(info).get("signature")]
    sig_rows = "".join(f'<tr><th scope="row">{e(LABELS.get(mid, mid))}</th><td><code>{e(sig)}</code></td></tr>'
                       for mid, sig in sigs)
    cis = as_dict(card["scores"].get("confidence_intervals"))
    items = [("fst_version", card.get("fst_version")), ("analyser_skipped", card.get("analyser_skipped")),
             ("terminology", card.get("terminology")),
             ("bootstrap", f"{cis.get('method')} · {cis.get('n_resamples')} resamples · alpha {cis.get('alpha')}"
                           f" · seed {cis.get('seed')}" if cis.get("method") else None),
             ("method config sha256", card["method"].get("config_sha256")),
             ("entry ids sha256", card["dataset"].get("entry_ids_sha256"))]
    extra = "".join(f'<tr><th scope="row">{e(k)}</th><td><code>{e(fmt(v))}</code></td></tr>' for k, v in items)
    cfg = as_dict(card["method"].get("config"))
    cfg_rows = "".join(f'<tr><th scope="row">{e(k)}</th><td><code>{e(fmt(v))}</code></td></tr>'
                       for k, v in cfg.items())
    sel = as_dict(card["dataset"].get("selection"))
    sel_rows = "".join(f'<tr><th scope="row">{e(k)}</th><td><code>{e(fmt(v))}</code></td></tr>'
                       for k, v in sel.items())
    return ('<section id="provenance"><h2>Reproducibility</h2><div class="scroll"><table class="kv">'
            f"<caption>Metric signatures (sacrebleu) and analyser</caption><tbody>{sig_rows}{extra}</tbody></table>"
            + (f'<table class="kv"><caption>Method config</caption><tbody>{cfg_rows}</tbody></table>' if cfg_rows
               else "")
            + (f'<table class="kv"><caption>Entry selection</caption><tbody>{sel_rows}</tbody></table>' if sel_rows
               else "")
            + "</div></section>")


def _worst_key(r: dict[str, Any]) -> tuple[int, float]:
    chrf = r.get("entry_chrf")
    failed = bool(r.get("error")) or not isinstance(chrf, int | float)
    return (0 if failed else 1, float(chrf) if isinstance(chrf, int | float) and not failed else 0.0)


def _entries(card: dict[str, Any]) -> str:
    results = [r for r in card["results"] if isinstance(r, dict)]
    ds = card["dataset"]
    src_lang, tgt_lang = e(ds.get("source_language") or ""), e(ds.get("target_language") or "")
    show_fst = any(r.get("fst_accepted") is not None for r in results)
    rows = []
    for r in sorted(results, key=_worst_key):
        chrf, err = r.get("entry_chrf"), r.get("error")
        pred = f'<span lang="{tgt_lang}">{e(r.get("predicted"))}</span>' if r.get("predicted") else ""
        if err:
            pred = f'<span class="err">error: {e(err)}</span>' + (f"<br>{pred}" if pred else "")
        diff = r.get("difficulty")
        cells = [f'<td class="num" data-v="{e(r.get("entry_id"))}">{e(r.get("entry_id"))}</td>',
                 f'<td class="num" data-v="{e(diff if diff is not None else "")}">{e(fmt(diff))}</td>',
                 f'<td class="num" data-v="{e(chrf if isinstance(chrf, int | float) else "")}">{num(chrf, 1)}</td>',
                 f'<td class="text" lang="{src_lang}">{e(r.get("source"))}</td>',
                 f'<td class="text" lang="{tgt_lang}">{e(r.get("reference"))}</td>',
                 f'<td class="text">{pred}</td>']
        if show_fst:
            acc, rate = r.get("fst_accepted"), entry_fst_rate(r)
            unk = [a[1:] for a in (r.get("fst_analysis") or []) if isinstance(a, str) and a.startswith("*")]
            label = ('—' if rate is None else f'<span class="fst-{"yes" if acc else "no"}" title="share of the '
                     f'words the analyser accepts">{"✓" if acc else "✗"} {e(fst_label(rate))}</span>')
            unk_txt = f'<span class="unk">unknown: {e(", ".join(unk))}</span>' if unk else ""
            cells.append(f'<td class="nowrap" data-v="{e(rate if rate is not None else "")}">{label}{unk_txt}</td>')
        rows.append(f'<tr{" class=row-err" if err else ""}>{"".join(cells)}</tr>')
    heads = [("id", "num", "num"), ("difficulty", "num", "num"), ("chrF++", "num", "num"), ("source", "text", ""),
             ("reference", "text", ""), ("predicted", "text", "")]
    if show_fst:
        heads.append(("FST", "num", ""))
    head = "".join(f'<th scope="col" data-sort="{kind}"' + (f' class="{cls}"' if cls else "") + f">{h}</th>"
                   for h, kind, cls in heads)
    return (f'<section id="entries"><h2>Entries ({len(results)})</h2>'
            '<p class="muted">Sorted worst-first: failed outputs, then by ascending entry chrF++.'
            " Click a column heading to re-sort.</p>"
            '<div class="tools" id="entry-tools"></div><div class="scroll"><table id="entries-table">'
            f"<caption>Per-entry results</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div></section>")


def render_html(card: Any, *, problems: list[str] | None = None, metrics: list[str] | None = None,
                robustness: Mapping[str, Any] | None = None) -> str:
    """The whole report as one HTML string; raises ``UserError`` for something that is not a run card.

    ``problems`` (from ``verify_card``) puts a warning box above everything; ``metrics`` limits the
    metrics table (``-m``); ``robustness`` (``RobustnessReport.to_dict()``) adds its section after it."""
    card = require_card(card)
    title = f"{card['method'].get('name')} on {card['dataset'].get('id')} — mt-eval report"
    nav = ('<nav aria-label="Sections"><p>'
           + " · ".join(f'<a href="#{a}">{t}</a>' for a, t in (
               ("scores", "Metrics"), ("critical", "Critical errors"), ("breakdowns", "Breakdowns"),
               ("cost", "Cost/speed/tokens"),
               ("warnings", "Warnings"), ("provenance", "Reproducibility"), ("entries", "Entries"),
               *((("robustness", "Robustness"),) if robustness else ())))
           + "</p></nav>")
    box = verification_box(problems) if problems else ""
    section = robustness_section(robustness) if robustness else ""
    body = (box + _header(card) + nav + "<main>" + _hero(card) + _metrics(card, metrics) + section
            + critical_section(card) + _breakdowns(card)
            + _blocks(card)
            + _provenance(card) + _entries(card) + "</main>"
            + f"<footer>Generated by mt-eval from run {e(card.get('run_id'))}. Self-contained: no external "
              "assets; sorting and filtering need JavaScript, everything else does not.</footer>")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n"
            f"<script>{JS}</script>\n</body>\n</html>\n")

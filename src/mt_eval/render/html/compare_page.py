"""One self-contained page comparing several run cards (``mt-eval report A.json B.json …``).

The numbers come from :func:`mt_eval.comparison.compare` (scores, intervals, paired tests with
Holm) and from the cards themselves (per-entry outputs and values); nothing is scored here. The
page answers, in order: is any system's card not what was sealed (a warning box); which system is
better on which metric, and is the difference significant against the first card (the baseline);
how the per-entry scores are distributed (a histogram per metric, inline SVG); and where the
systems disagree, entry by entry, with each output's character-level differences from the
reference.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mt_eval.comparison import COMPOSITE, Comparison, PairedComparison
from mt_eval.render.card_data import neutral
from mt_eval.render.html.assets import CSS, JS
from mt_eval.render.html.diff import char_diff
from mt_eval.render.html.parts import LABELS, badge, digits_for, e, fmt, num, short, verification_box
from mt_eval.render.html.plot import PALETTE, distribution_svg
from mt_eval.runcard.io import as_dict


def _label(metric: str) -> str:
    return "composite" if metric == COMPOSITE else LABELS.get(metric, metric.replace("_", " "))


def _p(value: float) -> str:
    return "p < 0.001" if value < 0.001 else f"p = {value:.3f}"


def _swatch(i: int) -> str:
    return f'<span class="swatch" style="background:{PALETTE[i % len(PALETTE)]}" aria-hidden="true"></span>'


def _verdict(row: PairedComparison) -> str:
    """"better*"-style tag: coloured only when significant after the correction."""
    if not row.significant:
        return '<span class="verdict sig-none" title="not significant">n.s.</span>'
    kind = {"better": "sig-better", "worse": "sig-worse"}.get(row.verdict, "sig-none")
    return f'<span class="verdict {kind}" title="significant after {e(row.correction)}">{e(row.verdict)}</span>'


def _systems(result: Comparison, cards: Sequence[Mapping[str, Any]], sources: Sequence[str],
             problems: Sequence[Sequence[str]]) -> str:
    rows = []
    for i, (system, card, src, probs) in enumerate(zip(result.systems, cards, sources, problems, strict=True)):
        m, s = as_dict(card.get("method")), as_dict(card.get("scores"))
        role = " <span class=\"muted\">(baseline)</span>" if i == 0 else ""
        check = ('<span class="fst-yes">✓ verified</span>' if not probs
                 else f'<span class="err" title="{e(probs[0])}">✗ not verified</span>')
        rows.append(f"<tr><th scope=\"row\">{_swatch(i)}{e(neutral(system.name))}{role}</th>"
                    f"<td>{e(neutral(m.get('name')))} <span class=\"muted\">({e(m.get('method_class'))})</span></td>"
                    f"<td><code>{e(neutral(src))}</code></td><td>{short(card.get('run_id'))}</td>"
                    f"<td>{short(card.get('run_card_hash'))}</td><td class=\"num\">{e(s.get('errors'))}</td>"
                    f"<td class=\"num\">{num(s.get('composite'), 4)}</td><td>{badge(s.get('quality_tier'))}</td>"
                    f"<td>{check}</td></tr>")
    head = "".join(f'<th scope="col"{c}>{h}</th>' for h, c in (
        ("system", ""), ("method", ""), ("card", ""), ("run id", ""), ("card hash", ""), ("errors", ' class="num"'),
        ("composite", ' class="num"'), ("tier", ""), ("verify", "")))
    return (f'<section id="systems"><h2>Systems</h2><div class="scroll"><table id="systems-table">'
            f"<caption>The first card is the baseline every other system is tested against.</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>")


def _metrics(result: Comparison) -> str:
    level = f"{(1 - result.alpha) * 100:g}% CI"
    rows = []
    for spec in result.metrics:
        digits = digits_for(spec.scale)
        direction = ("↑" if spec.higher_is_better else "↓") if spec.higher_is_better is not None else "·"
        cells = []
        for i, system in enumerate(result.systems):
            ci = system.scores.get(spec.id)
            value = (f'{num(ci.point, digits)} <span class="ci">[{fmt(ci.ci_lower, digits)}, '
                     f"{fmt(ci.ci_upper, digits)}]</span>") if ci is not None else "—"
            if i > 0:
                row = result.result(system.name, spec.id)
                value += (f'<span class="delta">Δ {row.delta:+.{digits}f} [{fmt(row.ci_lower, digits)}, '
                          f"{fmt(row.ci_upper, digits)}] · {_p(row.p_adjusted)} {_verdict(row)}</span>")
            cells.append(f'<td class="num">{value}</td>')
        rows.append(f'<tr id="cmp-{e(spec.id)}"><th scope="row">{e(_label(spec.id))} <code>{e(spec.id)}</code> '
                    f'<span class="muted" title="direction">{direction}</span></th>{"".join(cells)}</tr>')
    head = '<th scope="col">metric</th>' + "".join(
        f'<th scope="col" class="num">{_swatch(i)}{e(neutral(s.name))}</th>' for i, s in enumerate(result.systems))
    correction = "Holm-corrected across the systems, per metric" if result.correction == "holm" else "uncorrected"
    trials = f", {result.n_trials} trials" if result.n_trials else ""
    return (f'<section id="metrics"><h2>Metrics</h2><p class="muted">Each score with its {level}; under each '
            f"system, its difference from the baseline (Δ, with the interval of the difference) and the p-value of "
            f"a paired test ({e(result.method)}, {result.n_resamples} resamples{trials}, seed {result.seed}; "
            f"{correction}). A difference is marked better or worse only when p &lt; {fmt(result.alpha, 2)} and "
            f"its interval excludes zero; n.s. otherwise. ↓ marks a lower-is-better metric.</p>"
            f'<div class="scroll"><table id="comparison-table"><caption>Scores against the baseline</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>")


def _entry_value(result: Mapping[str, Any], metric: str) -> float | None:
    value = as_dict(result.get("metrics")).get(metric)
    if value is None and metric == "chrf_plus_plus":
        value = result.get("entry_chrf")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _by_id(card: Mapping[str, Any]) -> dict[Any, dict[str, Any]]:
    return {r.get("entry_id"): r for r in card.get("results") or [] if isinstance(r, dict)}


def _distributions(result: Comparison, cards: Sequence[Mapping[str, Any]]) -> str:
    figures, corpus_only = [], []
    names = [neutral(s.name) for s in result.systems]
    for spec in result.metrics:  # the composite too: cards carry each entry's (results[].metrics["composite"])
        series = [[v for r in card.get("results") or [] if isinstance(r, dict)
                   if (v := _entry_value(r, spec.id)) is not None] for card in cards]
        if not any(series):
            corpus_only.append(_label(spec.id))
            continue
        marks = [s.scores[spec.id].point if spec.id in s.scores else None for s in result.systems]
        svg = distribution_svg(_label(spec.id), names, series, marks, scale=spec.scale,
                               digits=digits_for(spec.scale))
        figures.append(f'<figure class="dist" id="dist-{e(spec.id)}"><figcaption>{e(_label(spec.id))} '
                       f'<code>{e(spec.id)}</code></figcaption>{svg}</figure>')
    if not figures:
        return ""
    note = (f'<p class="muted" id="corpus-only">No per-entry values on the cards (corpus-level only): '
            f'{e(", ".join(corpus_only))}.</p>' if corpus_only else "")
    return ('<section id="distributions"><h2>Score distributions</h2><p class="muted">Per-entry values, '
            "one histogram row per system on a shared axis; the dark line is the system's corpus score as its card "
            "states it (for chrF not the mean of the entries).</p>" + "".join(figures) + note + "</section>")


def _entries(result: Comparison, cards: Sequence[Mapping[str, Any]]) -> str:
    indexed = [_by_id(card) for card in cards]
    ds = as_dict(cards[0].get("dataset"))
    src_lang, tgt_lang = e(ds.get("source_language") or ""), e(ds.get("target_language") or "")
    rows = []
    for entry_id, base in indexed[0].items():
        results = [idx.get(entry_id, {}) for idx in indexed]
        chrfs = [_entry_value(r, "chrf_plus_plus") for r in results]
        known = [c for c in chrfs if c is not None]
        spread = max(known) - min(known) if len(known) > 1 else 0.0
        reference = str(base.get("reference") or "")
        cells = [f'<td class="num" data-v="{e(entry_id)}">{e(entry_id)}</td>',
                 f'<td class="num" data-v="{spread:.6f}">{fmt(spread, 1)}</td>',
                 f'<td class="text" lang="{src_lang}">{e(base.get("source"))}</td>',
                 f'<td class="text" lang="{tgt_lang}">{e(reference)}</td>']
        for r, chrf in zip(results, chrfs, strict=True):
            text = char_diff(reference, str(r.get("predicted") or ""))
            if r.get("error"):
                text = f'<span class="err">error: {e(r.get("error"))}</span>' + (f"<br>{text}" if text else "")
            cells.append(f'<td class="text sys" lang="{tgt_lang}" data-v="{e(chrf if chrf is not None else "")}">'
                         f'{text}<span class="chrf">chrF++ {fmt(chrf, 1)}</span></td>')
        rows.append((spread, entry_id, f"<tr>{''.join(cells)}</tr>"))
    rows.sort(key=lambda row: (-row[0], str(row[1])))
    heads = [("id", "num", ' class="num"'), ("chrF++ spread", "num", ' class="num"'), ("source", "text", ""),
             ("reference", "text", "")]
    heads += [(neutral(s.name), "num", "") for s in result.systems]
    head = "".join(f'<th scope="col" data-sort="{kind}"{cls}>{e(h)}</th>' for h, kind, cls in heads)
    return (f'<section id="entries"><h2>Entries ({len(rows)})</h2>'
            '<p class="muted">Where the systems disagree most first (the spread is the highest entry chrF++ minus '
            "the lowest). Each output is written against the reference: <del>struck out</del> is in the reference "
            "but not the output, <ins>underlined</ins> is in the output but not the reference. Click a heading to "
            're-sort (a system\'s column sorts by its chrF++).</p><div class="tools" id="entry-tools"></div>'
            '<div class="scroll"><table id="entries-table"><caption>Per-entry outputs, side by side</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(r for _, _, r in rows)}</tbody></table></div></section>")


def render_comparison(result: Comparison, cards: Sequence[Mapping[str, Any]], sources: Sequence[str],
                      problems: Sequence[Sequence[str]]) -> str:
    """The comparison page as one HTML string. ``cards`` (as loaded), ``sources`` (their paths) and
    ``problems`` (each card's ``verify_card`` result) are in the order given to ``compare``."""
    ds = dict(result.dataset)
    title = f"{len(cards)} systems on {ds.get('id')} — mt-eval comparison"
    boxes = "".join(verification_box(list(p), src) for p, src in zip(problems, sources, strict=True) if p)
    nav = ('<nav aria-label="Sections"><p>' + " · ".join(f'<a href="#{a}">{t}</a>' for a, t in (
        ("systems", "Systems"), ("metrics", "Metrics"), ("distributions", "Distributions"), ("entries", "Entries")))
        + "</p></nav>")
    header = (f"<header><h1>{len(cards)} systems <span class=\"muted\">on</span> {e(neutral(ds.get('id')))}</h1>"
              f"<p class=\"sub\">mt-eval comparison · {e(ds.get('source_language'))} → "
              f"{e(ds.get('target_language'))} · {e(ds.get('entry_count'))} entries · profile {e(result.profile)}"
              f" · baseline <strong>{e(neutral(result.baseline))}</strong></p></header>")
    body = (boxes + header + nav + "<main>" + _systems(result, cards, sources, problems) + _metrics(result)
            + _distributions(result, cards) + _entries(result, cards) + "</main>"
            + "<footer>Generated by mt-eval from the run cards listed above. Self-contained: no external assets; "
              "sorting and filtering need JavaScript, everything else does not.</footer>")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{e(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n{body}\n"
            f"<script>{JS}</script>\n</body>\n</html>\n")

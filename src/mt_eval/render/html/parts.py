"""Building blocks of the HTML report: escaping, number formats, tier badges, CI bars, card checks.

Number formats: a metric on a 0–100 scale (chrF++, BLEU, TER) shows 2 decimals, any other
metric (rates, the composite) 4; the full value is kept in the cell's ``title``.
"""

from __future__ import annotations

from html import escape
from typing import Any

from mt_eval.errors import UserError
from mt_eval.render.html.assets import TIER_COLOURS
from mt_eval.scoring.composite import effective_tier, tier_label

LABELS = {"chrf_plus_plus": "chrF++", "chrf": "chrF", "bleu": "BLEU", "ter": "TER", "comet_score": "COMET"}
# Extra scores a card may carry without a metrics entry; drawn on a 0–1 scale unless listed in metrics.
EXTRA_SCORES = ("semantic_score", "comet_score")
# Drawing domain where the metric's own scale would hide the interesting region (ideal = 1.0).
DOMAIN = {"length_ratio": 2.0}
BREAKDOWNS = ("by_difficulty", "by_provenance", "by_register", "by_segment")
TIER_CUTS = (0.30, 0.50, 0.70, 0.85)


def e(value: Any) -> str:
    """Escape anything for text or a double-quoted attribute."""
    return escape("" if value is None else str(value), quote=True)


def digits_for(scale: float | None) -> int:
    return 2 if scale is not None and scale > 1.0 else 4


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def num(value: Any, digits: int = 4) -> str:
    """A number with its full value in the title (for cells and inline use)."""
    if isinstance(value, float):
        return f'<span title="{e(repr(value))}">{fmt(value, digits)}</span>'
    return e(fmt(value, digits))


def short(value: Any, n: int = 12) -> str:
    text = "" if value is None else str(value)
    if not text:
        return "—"
    shown = text if len(text) <= n else text[:n] + "…"
    return f'<code title="{e(text)}">{e(shown)}</code>'


def badge(tier: Any) -> str:
    """The tier as people see it: deployable and above are capped until a review passes (§7.2)."""
    shown = effective_tier(str(tier))
    colour = TIER_COLOURS.get(shown, TIER_COLOURS["unscored"])
    label = tier_label(str(tier))
    return f'<span class="badge tier-{e(shown)}" style="background:{colour}" title="{e(label)}">{e(label)}</span>'


def ci_pair(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, dict) and isinstance(ci.get("ci_lower"), int | float) and isinstance(
            ci.get("ci_upper"), int | float):
        return float(ci["ci_lower"]), float(ci["ci_upper"])
    return None


def ci_text(ci: Any, digits: int) -> str:
    pair = ci_pair(ci)
    if pair is None:
        return ""
    return f'<span class="ci">[{fmt(pair[0], digits)}, {fmt(pair[1], digits)}]</span>'


def bar(label: str, value: Any, ci: Any, domain: float, *, digits: int = 4, ticks: tuple[float, ...] = (),
        width: int = 160) -> str:
    """Inline SVG: the CI range and the point on [0, domain]; values outside are clamped in the drawing only."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return ""
    h, pad = 14, 3
    inner = width - 2 * pad

    def x(v: float) -> float:
        return pad + inner * min(max(v / domain, 0.0), 1.0)

    parts = [f'<rect x="{pad}" y="5" width="{inner}" height="4" rx="2" fill="#e6e9ee"/>']
    parts += [f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="2" y2="12" stroke="#adb5bd"/>' for t in ticks]
    pair = ci_pair(ci)
    desc = f"{label} {fmt(float(value), digits)}"
    if pair:
        lo, hi = x(pair[0]), x(pair[1])
        parts.append(f'<rect x="{lo:.1f}" y="3" width="{max(hi - lo, 1.0):.1f}" height="8" rx="2" fill="#9ec5fe"/>')
        desc += f", CI {fmt(pair[0], digits)} to {fmt(pair[1], digits)}"
    px = x(float(value))
    parts.append(f'<circle cx="{px:.1f}" cy="7" r="3.5" fill="#0b3d91"/>')
    if value > domain or value < 0:
        tip = width - 2 if value > domain else 2
        parts.append(f'<text x="{tip}" y="13" font-size="9" text-anchor="middle" fill="#b3261e">!</text>')
        desc += " (beyond the drawn range)"
    desc += f" on 0–{fmt(domain, 0 if domain >= 1 else 2)}"
    return (f'<svg class="bar" width="{width}" height="{h}" viewBox="0 0 {width} {h}" role="img" '
            f'aria-label="{e(desc)}"><title>{e(desc)}</title>{"".join(parts)}</svg>')


def verification_box(problems: list[str], source: str | None = None) -> str:
    """The warning a card that fails ``verify`` is shown under: it is still displayed (the reader may
    need it), but never as if it were the sealed record."""
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    where = f" <code>{e(source)}</code>" if source else ""
    return (f'<div class="tamper" role="alert"><strong>Not verified:</strong> this card{where} does not match '
            f"its seal: <strong>{e(problems[0])}</strong>{more}. It (or its statistics) changed after it was "
            "written; it is shown as stored. <code>mt-eval verify</code> lists every difference.</div>")


def kv_table(title: str, block: Any, digits: int = 6) -> str:
    if not isinstance(block, dict) or not block:
        return ""
    rows = "".join(f'<tr><th scope="row">{e(k)}</th><td class="num">{num(v, digits)}</td></tr>'
                   for k, v in block.items() if not isinstance(v, dict | list))
    return f'<table class="kv"><caption>{e(title)}</caption><tbody>{rows}</tbody></table>'


def require_card(card: Any) -> dict[str, Any]:
    if not isinstance(card, dict):
        raise UserError("not a run card: a run card is a JSON object")
    missing = [k for k in ("scores", "dataset", "method", "results", "metrics") if k not in card]
    if missing:
        raise UserError(f"not a run card: missing {', '.join(missing)}")
    for key, kind in (("scores", dict), ("dataset", dict), ("method", dict), ("results", list), ("metrics", dict)):
        if not isinstance(card[key], kind):
            raise UserError(f"not a run card: '{key}' is not a JSON {'object' if kind is dict else 'array'}",
                            field=key)
    if "composite" not in card["scores"]:
        raise UserError("not a run card: scores has no composite", field="scores.composite")
    return card

"""The Pareto charts as inline SVG: composite (up) against cost per entry or latency (right).

Drawn on the server from the filtered rows, so the frontier is recomputed with every filter and the
chart needs no script. Frontier points are filled and joined by a step line; every point carries a
``<title>`` (method, composite, x) and the chart an ``aria-label``. All text is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from markupsafe import Markup

from mt_eval.render.html.parts import e, fmt
from mt_eval.store.pages import ParetoPoint

WIDTH, HEIGHT, PAD_L, PAD_B, PAD = 420, 260, 48, 36, 12
AXES = {"cost_per_entry": "cost per entry (USD)", "avg_latency": "latency per entry (s)"}


def pareto_svg(points: Sequence[ParetoPoint], axis: str, left_out: Sequence[str] = ()) -> Markup:
    """The chart for ``axis`` (a sentence instead when no card has a measured value on it), and the cards
    it leaves out named beneath it: only measured figures are drawn (decisions §49), so a card whose
    figure is declared by its submitter or unknown is listed apart, never placed at 0."""
    name = AXES[axis]
    apart = Markup(f'<p class="muted not-drawn">Not drawn, no measured {e(name)} (declared or unknown): '
                   f'{e(", ".join(left_out))}</p>') if left_out else Markup("")
    if not points:
        return Markup(f'<p class="muted">No card on this board has a measured {e(name)}.</p>') + apart
    x_hi = max(p.x for p in points) or 1.0
    y_lo, y_hi = 0.0, 1.0

    def sx(x: float) -> float:
        return PAD_L + (WIDTH - PAD_L - PAD) * (x / x_hi)

    def sy(y: float) -> float:
        return HEIGHT - PAD_B - (HEIGHT - PAD_B - PAD) * ((y - y_lo) / (y_hi - y_lo))

    frontier = [p for p in points if p.on_frontier]
    parts = [f'<line x1="{PAD_L}" y1="{HEIGHT - PAD_B}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD_B}" stroke="#57606a"/>',
             f'<line x1="{PAD_L}" y1="{PAD}" x2="{PAD_L}" y2="{HEIGHT - PAD_B}" stroke="#57606a"/>']
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{PAD_L - 6}" y="{sy(tick) + 3:.1f}" font-size="10" text-anchor="end">{tick:.2f}</text>')
    for tick in (0.0, x_hi / 2, x_hi):
        parts.append(f'<text x="{sx(tick):.1f}" y="{HEIGHT - PAD_B + 14}" font-size="10" '
                     f'text-anchor="middle">{e(_short(tick))}</text>')  # fmt: skip
    parts.append(f'<text x="{(PAD_L + WIDTH) / 2:.0f}" y="{HEIGHT - 6}" font-size="11" '
                 f'text-anchor="middle">{e(name)}</text>')  # fmt: skip
    parts.append(f'<text x="12" y="{HEIGHT / 2:.0f}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {HEIGHT / 2:.0f})">composite</text>')  # fmt: skip
    if len(frontier) > 1:  # a step line: a frontier card is best until the next one beats it
        steps = [f"{sx(frontier[0].x):.1f},{sy(frontier[0].composite):.1f}"]
        for before, p in pairwise(frontier):
            steps += [f"{sx(p.x):.1f},{sy(before.composite):.1f}", f"{sx(p.x):.1f},{sy(p.composite):.1f}"]
        parts.append(f'<polyline class="frontier-line" points="{" ".join(steps)}" fill="none" stroke="#0b3d91"/>')
    for p in points:
        tip = f"{p.label}: composite {fmt(p.composite)}, {name} {_short(p.x)}{' (frontier)' if p.on_frontier else ''}"
        fill = "#0b3d91" if p.on_frontier else "#ffffff"
        parts.append(f'<circle class="{"frontier" if p.on_frontier else "point"}" data-run="{e(p.run_card_hash)}" '
                     f'cx="{sx(p.x):.1f}" cy="{sy(p.composite):.1f}" r="5" fill="{fill}" stroke="#0b3d91">'
                     f"<title>{e(tip)}</title></circle>")  # fmt: skip
    on = " ".join(p.run_card_hash for p in frontier)
    label = f"Pareto chart: composite against {name}; frontier: {', '.join(p.label for p in frontier)}"
    return Markup(  # every text above is escaped
        f'<svg class="pareto" data-axis="{e(axis)}" data-frontier="{e(on)}" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{e(label)}">{"".join(parts)}</svg>') + apart


def _short(x: float) -> str:
    return f"{x:.4g}"

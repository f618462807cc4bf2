"""Score distributions as inline SVG: one histogram row per system on a shared axis.

Two systems with the same corpus score can differ in shape (one uniformly mediocre, the other
excellent on most entries and broken on a few); a corpus score and its interval hide that, a
histogram of the per-entry values shows it. The rows share the x axis and the bar scale, so heights
compare across systems, and each row marks the system's corpus score as the card states it (for
chrF or BLEU that is not the mean of the entries, so nothing is recomputed here). Generated here,
with no script and no network.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mt_eval.render.html.parts import e, fmt

PALETTE = ("#0b3d91", "#a84300", "#1a5e2e", "#6a1b9a", "#00695c", "#b71c1c", "#5d4037", "#37474f")
"""One colour per system, in card order; each ≥ 4.5:1 against white."""
BINS = 20
WIDTH, LABEL_W, ROW_H, AXIS_H = 640, 150, 40, 22


def domain(values: Sequence[float], scale: float) -> tuple[float, float]:
    """[0, scale] (the metric's own range), widened to take in any value beyond it (TER over 100)."""
    lo = min(0.0, *values) if values else 0.0
    hi = max(scale, *values) if values else scale
    return lo, hi if hi > lo else lo + 1.0


def histogram(values: Sequence[float], lo: float, hi: float, bins: int = BINS) -> list[int]:
    """Counts per bin of [lo, hi]; the last bin includes ``hi``."""
    counts = [0] * bins
    width = (hi - lo) / bins
    for v in values:
        i = int((v - lo) / width) if width > 0 else 0
        counts[min(max(i, 0), bins - 1)] += 1
    return counts


def _label(value: float, digits: int) -> str:
    return fmt(value, digits) if not float(value).is_integer() else f"{value:g}"


def distribution_svg(metric: str, names: Sequence[str], series: Sequence[Sequence[float]],
                     marks: Sequence[float | None], *, scale: float, digits: int = 2) -> str:
    """The histogram rows of ``series`` (per-entry values, one sequence per system) as one SVG,
    each row with its ``marks`` value (the corpus score) drawn as a line."""
    clean = [[v for v in s if isinstance(v, int | float) and math.isfinite(v)] for s in series]
    lo, hi = domain([v for s in clean for v in s] + [m for m in marks if m is not None and math.isfinite(m)],
                    scale)
    counts = [histogram(s, lo, hi) for s in clean]
    peak = max((c for row in counts for c in row), default=0) or 1
    plot_w = WIDTH - LABEL_W - 10
    bin_w = plot_w / BINS
    height = ROW_H * len(names) + AXIS_H

    def x(v: float) -> float:
        return LABEL_W + plot_w * (v - lo) / (hi - lo)

    parts: list[str] = []
    summary: list[str] = []
    for row, (name, values, hist, mark) in enumerate(zip(names, clean, counts, marks, strict=True)):
        colour = PALETTE[row % len(PALETTE)]
        top = row * ROW_H
        base = top + ROW_H - 6
        short = name if len(name) <= 20 else name[:19] + "…"
        parts.append(f'<text x="{LABEL_W - 8}" y="{top + ROW_H / 2 + 4:.1f}" text-anchor="end" font-size="12">'
                     f"<title>{e(name)}</title>{e(short)}</text>")
        parts.append(f'<line x1="{LABEL_W}" x2="{LABEL_W + plot_w}" y1="{base}" y2="{base}" stroke="#d0d7de"/>')
        for i, c in enumerate(hist):
            if not c:
                continue
            h = max(1.5, (ROW_H - 10) * c / peak)  # one entry stays visible beside a peak of hundreds
            b_lo, b_hi = lo + (hi - lo) * i / BINS, lo + (hi - lo) * (i + 1) / BINS
            parts.append(f'<rect x="{LABEL_W + i * bin_w + 0.5:.1f}" y="{base - h:.1f}" width="{bin_w - 1:.1f}" '
                         f'height="{h:.1f}" fill="{colour}" fill-opacity="0.75"><title>{e(name)}: {c} '
                         f"entr{'y' if c == 1 else 'ies'} in [{_label(b_lo, digits)}, {_label(b_hi, digits)}"
                         f"{']' if i == BINS - 1 else ')'}</title></rect>")
        if mark is not None and math.isfinite(mark):
            mx = x(mark)
            parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{top + 2}" y2="{base}" stroke="#1f2328" '
                         f'stroke-width="2"><title>{e(name)}: corpus score {fmt(mark, digits)}</title></line>')
        score = f"corpus score {fmt(mark, digits)}, " if mark is not None else ""
        summary.append(f"{name}: {score}{len(values)} entries")
    axis_y = ROW_H * len(names) + 14
    for tick in (lo, (lo + hi) / 2, hi):
        parts.append(f'<text x="{x(tick):.1f}" y="{axis_y}" text-anchor="middle" font-size="11" fill="#57606a">'
                     f"{tick:.4g}</text>")
    desc = f"Distribution of per-entry {metric}: " + "; ".join(summary)
    return (f'<svg class="dist" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
            f'aria-label="{e(desc)}"><title>{e(desc)}</title>{"".join(parts)}</svg>')

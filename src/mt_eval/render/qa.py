"""The console text of a QA run: the scores, the statistics after them, the warnings.

By default the scores are a rich table in the style of ``show`` and ``compare`` (one row per system,
mean ± standard deviation per metric, the direction beside each name); bootstrap CIs and
Holm-corrected paired tests follow as tables of the same style. ``--spec-block`` prints the QA
spec's plain block instead of the scores table (80 ``=``, a title, one ``name | EM=… | F1=… | …``
line per system), verbatim and machine-greppable (a plain string: rich would wrap its long lines).
"""

from __future__ import annotations

from collections.abc import Mapping

from rich.markup import escape
from rich.table import Table

from mt_eval.qa.report import QAReport, coverage

RULE = "=" * 80
TITLE = "Experiment Results Summary"
NAME_WIDTH = 8  # the spec's example pads "direct" to 8 columns
_LABELS = {"em": "EM", "f1": "F1", "rlc": "RLC", "cost": "Cost", "cnbe": "CNBE", "semantic_score": "Sem"}


def _name(name: str, width: int) -> str:
    return f"{name:<{width}}"


def _width(report: QAReport) -> int:
    return max([NAME_WIDTH, *(len(n) for n in report.systems)])


def summary_line(name: str, s: Mapping[str, float], width: int = NAME_WIDTH) -> str:
    """One spec line; CNBE and Sem are left out when they were not computed for this run."""
    parts = [
        _name(name, width),
        f"EM={s['em']:.3f}±{s['em_std']:.3f}",
        f"F1={s['f1']:.3f}±{s['f1_std']:.3f}",
        f"RLC={s['rlc']:.3f}±{s['rlc_std']:.3f}",
        f"Cost={s['cost']:.1f}±{s['cost_std']:.1f}",
    ]
    if "cnbe" in s:
        parts.append(f"CNBE={s['cnbe']:.5f}±{s['cnbe_std']:.5f}")
    if "semantic_score" in s:
        parts.append(f"Sem={s['semantic_score']:.3f}±{s['semantic_score_std']:.3f}")
    return " | ".join(parts)


_DIRECTIONS = {"em": "↑", "f1": "↑", "rlc": "↑", "cost": "↓", "cnbe": "↑", "semantic_score": "↑"}


def scores_table(report: QAReport) -> Table:
    """The scores as ``show``/``compare`` print theirs: a rich table, one row per system (the baseline
    marked), each metric's mean ± its standard deviation over questions; CNBE and Sem only when computed."""
    summaries = {name: res.summary() for name, res in report.systems.items()}
    shown = [m for m in ("em", "f1", "rlc", "cost", "cnbe", "semantic_score")
             if any(m in s for s in summaries.values())]
    table = Table(title="Scores (mean ± standard deviation over questions)", title_justify="left", show_edge=False)
    table.add_column("system", overflow="fold")
    for m in shown:
        table.add_column(f"{_LABELS.get(m, m.upper())} {_DIRECTIONS[m]}", justify="right", no_wrap=True)
    digits = {"cost": 1, "cnbe": 5}
    baseline = report.baseline.name if report.baseline is not None else None
    for name, s in summaries.items():
        label = escape(name) + (" [dim](baseline)[/dim]" if name == baseline else "")
        table.add_row(label, *(f"{s[m]:.{digits.get(m, 3)}f} [dim]±{s[m + '_std']:.{digits.get(m, 3)}f}[/dim]"
                               if m in s else "–" for m in shown))
    return table


def format_summary(report: QAReport) -> str:
    """The spec's console block."""
    width = _width(report)
    lines = [RULE, TITLE, RULE]
    lines += [summary_line(name, res.summary(), width) for name, res in report.systems.items()]
    lines.append(RULE)
    return "\n".join(lines)


def statistics_tables(report: QAReport) -> list[Table]:
    """Bootstrap CIs per system and, when there is a baseline, paired tests against it, as rich tables
    (systems × metrics) like every other command's.

    With Holm (the default) ``p`` is the adjusted p-value and ``*`` its §8.2 verdict; the raw
    p-value is in metrics.json. The title says which, and across how many systems.
    """
    cfg = report.config.get("bootstrap", {})
    level = round(100 * (1 - float(cfg.get("alpha", 0.05))))
    tables = []
    cis = Table(title=f"{level}% bootstrap CIs ({cfg.get('n_resamples')} resamples, seed {cfg.get('seed')})",
                title_justify="left", show_edge=False)
    cis.add_column("system")
    metrics = list(next(iter(report.confidence_intervals.values()), {}))
    for m in metrics:
        cis.add_column(_LABELS[m], justify="right", no_wrap=True)
    for name, per_metric in report.confidence_intervals.items():
        cis.add_row(escape(name), *(f"[{c['ci_lower']:.3f}, {c['ci_upper']:.3f}]" for c in per_metric.values()))
    tables.append(cis)
    if report.paired_tests and report.baseline is not None:
        family = len(report.paired_tests)
        if report.correction == "holm":
            how = f"p Holm-adjusted across {family} system{'s' if family > 1 else ''} per metric"
        else:
            how = "p not corrected for multiple comparisons"
        paired = Table(title=f"Paired bootstrap vs {escape(report.baseline.name)} (delta [{level}% CI] p; {how}; "
                             "* significant)", title_justify="left", show_edge=False)
        paired.add_column("system")
        key = "p_adjusted" if report.correction == "holm" else "p_value"
        tested = list(next(iter(report.paired_tests.values()), {}))
        for m in tested:
            paired.add_column(_LABELS[m], justify="right", no_wrap=True)
        for name, tests in report.paired_tests.items():
            paired.add_row(escape(name), *(
                f"{t['delta']:+.3f}{'*' if t['significant'] else ' '} [{t['ci_lower']:+.3f}, {t['ci_upper']:+.3f}] "
                f"p={t[key]:.3f}" for t in tests.values()))
        tables.append(paired)
    return tables


def warnings(report: QAReport) -> list[str]:
    """Lines for stderr: anything that makes the numbers mean less than they appear to."""
    out: list[str] = []
    for name, c in coverage(report).items():
        if c["missing"]:
            out.append(f"warning: {name}: {c['missing']} of {c['n']} questions have no prediction (scored as empty)")
        if c["failed"]:
            out.append(f"warning: {name}: {c['failed']} predictions are null (scored as empty)")
        if c["semantic_errors"]:
            out.append(
                f"warning: {name}: the judge's reply was unusable for {c['semantic_errors']} samples "
                "(left out of semantic_score; re-run to retry them)"
            )
    return out

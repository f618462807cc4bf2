"""Secret segments never leave the machine: no metric whose text goes off it may score them.

Benchmark Spec §2.3 keeps ``gold_standard`` and ``held_out`` entries secret. A metric that sends the
output (and reference or source) to a remote service — a generated LLM judge, an embedding endpoint
elsewhere — would publish them to that service. The check runs where a run's metrics are chosen
(``scoring.pipeline.score_outputs``), so ``run``, ``score``, ``verify``, ``compare`` and ``robustness``
are all covered, whatever command or plugin asked for the metric.

A metric's egress is, in order: its own ``egress`` attribute (generated judges declare ``remote``; a
plugin may declare it on its object), ``semantic_score``'s configured backend, its Metric Card in the
MetricBank, else ``local`` (a plugin without a card is trusted as the code it is: it runs here).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mt_eval.corpus.models import SECRET_SEGMENTS
from mt_eval.errors import UserError

LOCAL, REMOTE = "local", "remote"


def metric_egress(metric: Any) -> str:
    """``local`` or ``remote`` for one metric instance (wrapped plugin objects are looked through)."""
    for obj in (metric, getattr(metric, "inner", None)):
        declared = getattr(obj, "egress", None)
        if declared in (LOCAL, REMOTE):
            return str(declared)
    config = getattr(metric, "config", None)  # semantic_score: local unless its endpoint is elsewhere
    if config is not None and getattr(config, "egress", None) in (LOCAL, REMOTE):
        return str(config.egress)
    from mt_eval.metrics.bank import _card_files, parse_card

    text = _card_files().get(str(metric.id))
    return parse_card(str(metric.id), text).egress if text is not None else LOCAL


def refuse_remote_on_secret(metrics: Sequence[Any], entries: Sequence[Any]) -> None:
    """Raise ``UserError`` when a remote metric would score a secret entry (nothing has been sent yet)."""
    secret = sum(1 for e in entries if str(getattr(getattr(e, "segment", None), "value", "")) in SECRET_SEGMENTS)
    if not secret:
        return
    remote = [str(m.id) for m in metrics if metric_egress(m) == REMOTE]
    if remote:
        raise UserError(f"{secret} secret (gold_standard/held_out) entries would be sent off this machine by "
                        f"{', '.join(remote)} (egress: remote)",
                        hint="score secret segments with local metrics only, or leave them out with --segment")

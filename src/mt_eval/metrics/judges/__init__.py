"""Generated LLM-judge metrics (AutoMetrics §3.1, App. E.2): generated from rated examples, stored as
Metric Cards (egress remote, AI-generated), computed under the metric protocol.

``judge_metrics(paths)`` turns generated card files (or directories of them) into metrics for
``scoring.pipeline.score_outputs(extra=…)`` and for ``calibrate``'s candidates.
"""

from mt_eval.metrics.judges.cards import judge_metrics, read_spec
from mt_eval.metrics.judges.metric import JudgeAnswerError, JudgeMetric, JudgeSpec, parse_score

__all__ = ["JudgeAnswerError", "JudgeMetric", "JudgeSpec", "judge_metrics", "parse_score", "read_spec"]

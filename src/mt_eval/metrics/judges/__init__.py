"""Generated LLM-judge metrics (AutoMetrics §3.1, App. E.2): generated from rated examples, stored as
Metric Cards (egress remote, AI-generated), computed under the metric protocol.

``judge_metrics(paths)`` turns generated card files (or directories of them) into metrics for
``scoring.pipeline.score_outputs(opt_in=…)``, for ``run``/``score``/``verify --judge`` and for
``calibrate``'s candidates; ``RecordedJudge`` is a judge as a run card recorded it (aggregation only).
"""

from mt_eval.metrics.judges.cards import card_sha256, is_judge_id, judge_metrics, read_spec
from mt_eval.metrics.judges.metric import JudgeAnswerError, JudgeMetric, JudgeSpec, parse_score
from mt_eval.metrics.judges.recorded import RecordedJudge

__all__ = ["JudgeAnswerError", "JudgeMetric", "JudgeSpec", "RecordedJudge", "card_sha256", "is_judge_id",
           "judge_metrics", "parse_score", "read_spec"]

"""Calibrating a composite on human judgments (AutoMetrics §3.1, issue 15).

``matrix`` joins judgments with cards into a per-segment metric matrix; ``pls`` is the two-stage,
non-negative PLS; ``meta`` holds the meta-evaluation statistics (item-grouped Kendall τ, WMT's
tie-calibrated pairwise accuracy acc23, system-level soft pairwise accuracy) with their bootstrap CIs;
``report`` runs cross-validation and the held-out split and says whether to adopt the profile;
``build`` scores a judgments file's systems into cards (``--from-judgments``).
"""

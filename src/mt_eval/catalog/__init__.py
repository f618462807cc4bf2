"""Public test sets by name: catalogue entries, fetch adapters, the data cache, licence acceptance and
provenance (``mt-eval datasets``; ``--corpus ID`` anywhere a corpus file is accepted). Not the store's
registered datasets (``store/datasets.py``), which are what a leaderboard scores against."""

from mt_eval.catalog.adapters import Plan, Segment, is_catalog_id, plan
from mt_eval.catalog.cache import Cache, data_dir
from mt_eval.catalog.entries import FAMILIES, Exposure, Family
from mt_eval.catalog.fetch import FetchOptions
from mt_eval.catalog.service import Fetched, corpus_file, fetch_corpus, list_families

__all__ = [
    "FAMILIES", "Cache", "Exposure", "Family", "FetchOptions", "Fetched", "Plan", "Segment", "corpus_file",
    "data_dir", "fetch_corpus", "is_catalog_id", "list_families", "plan",
]

"""Corpus schema, loaders, selection and validation."""

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Context, Dataset, DatasetInfo, Entry, Provenance, Register, Segment
from mt_eval.corpus.selection import parse_id_ranges, parse_int_range, select_entries
from mt_eval.corpus.textpair import load_text_pair, text_pair_sha256
from mt_eval.corpus.validate import CorpusSummary, summarize

__all__ = [
    "Context",
    "CorpusSummary",
    "Dataset",
    "DatasetInfo",
    "Entry",
    "Provenance",
    "Register",
    "Segment",
    "load_corpus",
    "load_text_pair",
    "parse_id_ranges",
    "parse_int_range",
    "select_entries",
    "summarize",
    "text_pair_sha256",
]

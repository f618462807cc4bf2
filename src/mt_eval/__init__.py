"""mt-eval: a reproducible evaluation harness for translation methods."""

__version__ = "2.0.0"

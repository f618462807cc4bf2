"""The harness version, in a module of its own so that any package can read it without importing
``mt_eval`` (whose ``__init__`` imports the public API, which imports those packages)."""

__version__ = "2.0.0"

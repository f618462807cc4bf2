"""Rendering of records for people: rich tables for the terminal, self-contained HTML pages.

Renderers read records (run cards, comparisons, corpus summaries) and never compute a score; they
may import rich, never typer (commands live in ``mt_eval.cli``).
"""

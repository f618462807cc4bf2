"""Helpers the tests share, imported as ``support.<area>`` (``pythonpath = ["tests"]`` in pyproject.toml).

A test imports helpers from here, never from a ``conftest`` (two folders' ``conftest`` modules share one name,
so ``from conftest import …`` got whichever folder was collected first) and never edits ``sys.path``.
"""

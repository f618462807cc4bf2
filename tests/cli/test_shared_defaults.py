"""A default the CLI shares with the API is one constant, read from its owner."""

from __future__ import annotations

import inspect
from pathlib import Path

from mt_eval import api
from mt_eval.cli import common


def test_the_runs_dir_default_is_the_apis_one_constant() -> None:
    assert inspect.signature(api.evaluate).parameters["runs_dir"].default == api.DEFAULT_RUNS_DIR
    assert Path(api.DEFAULT_RUNS_DIR) == common.DEFAULT_RUNS_DIR


def test_no_unused_debugging_helper() -> None:
    assert not hasattr(common, "debugging")

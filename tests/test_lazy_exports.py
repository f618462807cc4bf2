"""The packages' public names are imported on first use, and only then."""

from __future__ import annotations

import subprocess
import sys

import pytest

import mt_eval
import mt_eval.runcard


def test_importing_the_package_does_not_import_the_harness() -> None:
    code = ("import sys, mt_eval, mt_eval.runcard; "
            "print('mt_eval.api' in sys.modules, 'mt_eval.runcard.verify' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]


def test_public_names_resolve_to_their_modules_and_unknown_names_fail() -> None:
    from mt_eval.api import evaluate
    from mt_eval.runcard.verify import verify_card

    assert mt_eval.evaluate is evaluate and mt_eval.runcard.verify_card is verify_card
    assert "evaluate" in vars(mt_eval)  # cached: the next lookup is an ordinary attribute
    with pytest.raises(AttributeError, match=r"'mt_eval\.runcard' has no attribute 'nope'"):
        _ = mt_eval.runcard.nope

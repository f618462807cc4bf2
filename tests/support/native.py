"""The C twins' tests: the compiled function, or a skip where this machine has no C compiler (where it has one,
a missing library is a failure: the fast path must not fall back silently)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mt_eval import native


def require(load: Callable[[], Any], source: str) -> Any:
    function = load()
    if function is None:
        assert native.compiler() is None, f"a C compiler is installed but {source} did not build"
        pytest.skip(f"no C compiler: {source}'s Python twin is used (tested everywhere else)")
    return function

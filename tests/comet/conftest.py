"""One tiny COMET model per test session (``tiny_comet``): an XLM-R encoder directory and two checkpoints of
different random weights, built under a session temporary directory. Without unbabel-comet (the ``comet``
extra, in ``dev``) these tests are skipped, saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from mt_eval.metrics.comet import installed


@pytest.fixture(scope="session")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not installed():  # (``importorskip("comet")`` would import this very directory as a namespace package)
        pytest.skip("unbabel-comet is not installed (pip install 'mt-eval[comet]')")
    import tiny_comet

    root = tmp_path_factory.mktemp("comet")
    encoder = tiny_comet.build_encoder_dir(root / "tiny-xlmr")
    first = tiny_comet.build_checkpoint(root / "tiny-comet-a", encoder, seed=1)
    second = tiny_comet.build_checkpoint(root / "tiny-comet-b", encoder, seed=2)
    return {"encoder": encoder, "a": first.parents[1], "b": second.parents[1]}

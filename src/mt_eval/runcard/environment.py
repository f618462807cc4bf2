"""Environment capture for reproducibility (Run Card Spec ``environment``)."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import sacrebleu

from mt_eval.version import __version__


def git_commit() -> str | None:
    """The harness checkout's commit, if it runs from one (an installed wheel has none)."""
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=5, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def capture() -> dict[str, str | None]:
    return {
        "harness_version": __version__,
        "harness_git_commit": git_commit(),
        "python_version": platform.python_version(),
        "sacrebleu_version": sacrebleu.__version__,
        "os": platform.platform(),
    }

"""A registered submitter for tests that preflight or run a bundle: a fresh Ed25519 key, registered in
the governance log, and the bundle signed with it (``BUNDLE.sig`` beside it, where the commands look)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mt_eval.runcard.signing import new_key
from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.submitters import add_submitter, sign_submission


def sign_up(governance: Path, bundle: Path, name: str = "dev", out: Path | None = None) -> Path:
    """Register a new key as submitter ``name`` and sign ``bundle`` with it; the signature's path."""
    key, _, public = new_key(Path(tempfile.mkdtemp(prefix="mt-eval-submitter-")) / f"{name}.key", name)
    add_submitter(Governance(governance), name, public)
    return sign_submission(load_bundle(bundle), bundle, key, out)[0]

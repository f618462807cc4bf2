"""The harness's canonical text and its hash: the bottom of every identity (card seal, fingerprint, profile key).

Kept out of ``runcard/seal.py`` so that a package below ``runcard`` (``scoring.calibrated``: a profile's key is
the hash of its canonical JSON) hashes with the same two functions without importing the card package above it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))

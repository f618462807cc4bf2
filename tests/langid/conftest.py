"""The language-identification evaluation set (``evalset.py``) is importable by the tests beside it."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

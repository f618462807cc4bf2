"""Engine tests talk to a real local HTTP server (tests/providers/fake_openai.py) over sockets."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "llm"))
sys.path.insert(0, str(HERE.parent / "providers"))

"""Judge tests talk to the real local OpenAI-protocol server (tests/providers/fake_openai.py) over sockets."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "providers"))

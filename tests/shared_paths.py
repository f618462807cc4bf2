"""Where the shared real data lives: ``<repo>/../shared``."""

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SHARED_DATA = SHARED / "data"

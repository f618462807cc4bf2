"""LLM tests talk to a real local HTTP server (tests/support/fake_openai.py) over sockets."""

from __future__ import annotations


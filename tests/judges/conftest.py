"""Judge tests talk to the real local OpenAI-protocol server (tests/support/fake_openai.py) over sockets."""

from __future__ import annotations



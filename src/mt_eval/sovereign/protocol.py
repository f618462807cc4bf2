"""The JSON-lines protocol between the harness and a submitted method (issue 14's contract).

One request per line on the method's stdin, one reply per line on its stdout. A request is built
from an entry by :func:`request_line`, which copies the fields a method may see and nothing else:
there is no reference field to forget to strip. A reply that is not exactly ``{"entry_id": <the id
asked for>, "predicted": <string>}`` is a protocol error, named as such (never echoed: the line may
carry a secret source back).
"""

from __future__ import annotations

import json
from typing import Any

from mt_eval.corpus.models import Entry

# the fields a method receives; the order is the issue's
REQUEST_FIELDS = ("entry_id", "source", "source_language", "target_language", "register", "context")
MAX_REPLY_BYTES = 1 << 20  # a reply line longer than this is refused (a method flooding stdout)


class ProtocolError(Exception):
    """A reply line that breaks the protocol; the message never quotes the line."""


def request_line(entry: Entry, source_language: str, target_language: str) -> bytes:
    """The request for ``entry`` as one JSON line (UTF-8, newline-terminated)."""
    request = {
        "entry_id": entry.id,
        "source": entry.source,
        "source_language": source_language,
        "target_language": target_language,
        "register": entry.register.value if entry.register else None,
        "context": entry.context.value if entry.context else None,
    }
    return (json.dumps(request, ensure_ascii=False) + "\n").encode()


def parse_reply(line: bytes, expected_id: int) -> str:
    """The translation in a reply line for ``expected_id``; :class:`ProtocolError` otherwise."""
    if len(line) > MAX_REPLY_BYTES:
        raise ProtocolError(f"reply line longer than {MAX_REPLY_BYTES} bytes")
    try:
        reply: Any = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ProtocolError("reply line is not JSON") from None
    if not isinstance(reply, dict) or set(reply) != {"entry_id", "predicted"}:
        raise ProtocolError('reply must be an object with exactly "entry_id" and "predicted"')
    if type(reply["entry_id"]) is not int or reply["entry_id"] != expected_id:
        raise ProtocolError("reply entry_id does not match the request")
    if not isinstance(reply["predicted"], str):
        raise ProtocolError('reply "predicted" must be a string')
    return reply["predicted"]

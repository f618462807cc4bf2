"""Prompt text for the LLM methods: the built-in template, coaching, single and batched requests.

The system prompt is the same for every entry of a run (it is recorded on the card with its
SHA-256), so per-entry hints (register, context) travel in the user message. A batched request
carries its entries as JSON keyed by entry id and asks for JSON back, so the answer can be checked
entry by entry (docs/decisions.md §18) instead of being split on line breaks and trusted.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from mt_eval.methods.base import TranslationRequest

BUILTIN_TEMPLATE = (
    "You are a professional translator. Translate from {source_name} ({source_language}) into "
    "{target_name} ({target_language}). Keep the meaning, tone and formatting of the source; keep "
    "names, numbers and URLs as they are. Respect the register and context given with a text. "
    "Reply with the translation only: no notes, no quotation marks, no explanations."
)
COACHING_HEADER = "\n\nReference material for {target_name} (use it when translating):\n\n"
TEXT_MARKER = "Text:\n"
BATCH_INSTRUCTION = (
    'Translate the "source" of every entry below. Answer with one JSON object and nothing else: '
    '{"translations": [{"id": <entry id>, "start": "<the first three words of its source, copied>", '
    '"translation": "<translation>"}, ...]} with every id exactly once, as given.\n\n'
)


def system_prompt(template: str, source_language: str, target_language: str, source_name: str,
                  target_name: str, coaching: str | None = None) -> str:
    """Fill the template's ``{source_language}``-style fields; append coaching text when given."""
    fields = {"source_language": source_language, "target_language": target_language,
              "source_name": source_name, "target_name": target_name}
    try:
        text = template.format(**fields)
    except (KeyError, IndexError, ValueError):
        text = template  # a user prompt with other braces is used verbatim
    if coaching:
        text += COACHING_HEADER.format(**fields) + coaching.strip()
    return text


def _hints(request: TranslationRequest) -> str:
    parts = []
    if request.register:
        parts.append(f"Register: {request.register}.")
    if request.context:
        parts.append(f"Context: {request.context}.")
    return " ".join(parts)


def single_message(request: TranslationRequest) -> str:
    hints = _hints(request)
    return (hints + "\n" if hints else "") + TEXT_MARKER + request.source


def batch_message(requests: Sequence[TranslationRequest]) -> str:
    entries = []
    for r in requests:
        item: dict[str, object] = {"id": r.entry_id, "source": r.source}
        if r.register:
            item["register"] = r.register
        if r.context:
            item["context"] = r.context
        entries.append(item)
    return BATCH_INSTRUCTION + json.dumps({"entries": entries}, ensure_ascii=False)


def feedback_message(feedback: str) -> str:
    """The validate-retry pipeline's follow-up turn after a rejected translation."""
    return (f"A validator rejected that translation: {feedback}\n"
            "Reply with a corrected translation only.")


# opening quote -> the closing quotes that may end a span it opens (typographic pairs and straight quotes)
QUOTE_PAIRS: dict[str, str] = {'"': '"', "“": "”“", "”": "”", "«": "»", "„": "“”", "»": "«»", "「": "」"}
QUOTES = frozenset("".join(QUOTE_PAIRS) + "".join(QUOTE_PAIRS.values()))


def _wrapped(text: str) -> bool:
    """The text opens with a quote and closes with one that matches it."""
    return len(text) >= 2 and text[0] in QUOTE_PAIRS and text[-1] in QUOTE_PAIRS[text[0]]


def _quotes(text: str) -> int:
    return sum(1 for c in text if c in QUOTES)


def clean_answer(text: str, source: str) -> str:
    """The translation in a model's answer for ``source``, the same for a single and a batched answer.

    A model sometimes wraps a one-line answer in quotes; that pair is stripped only when it is the
    model's and not the text's: never when the source itself opens and closes with quotes (a
    quoted declaration has a quoted translation), and only when the quotes left inside are as many
    as the source has, or none of the wrapper's kind (``"A" y "B"`` is two quoted spans, not one
    wrapped text). Without this rule a quoted entry lost its quotes when sent alone and kept them
    in a batch (a batched answer is a JSON string, whose quotes are the translation's own), so the
    text, and every score, depended on ``--batch-size``.
    """
    text = text.strip()
    if _wrapped(text) and not _wrapped(source.strip()):
        inner = text[1:-1]
        if _quotes(inner) == _quotes(source) or not any(c in inner for c in (text[0], text[-1])):
            text = inner.strip()
    return text


def clean_single(content: str, source: str = "") -> str:
    """A single request's answer: a code fence around it is removed, then :func:`clean_answer`."""
    text = content.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text.strip("`").split("\n", 1)[-1].strip()
    return clean_answer(text, source)

"""Prompt text for the LLM methods: the built-in template, coaching, single and batched requests.

The system prompt is the same for every entry of a run (it is recorded on the card with its
SHA-256), so per-entry hints (register, context) travel in the user message. A batched request
carries its entries as JSON keyed by entry id and asks for JSON back, so the answer can be checked
entry by entry (DESIGN decision 7) instead of being split on line breaks and trusted.
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


def clean_single(content: str) -> str:
    """Models sometimes wrap a one-line answer in quotes or a code fence; strip those only."""
    text = content.strip()
    if text.startswith("```") and text.endswith("```"):
        text = text.strip("`").split("\n", 1)[-1].strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"“”«»":
        text = text[1:-1].strip()
    return text

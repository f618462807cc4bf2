"""LLM providers: one OpenAI-compatible async client shared by the QA judge and the LLM methods."""

from mt_eval.providers.openai_compat import (
    PRESETS,
    ChatRequest,
    ChatResponse,
    ChatUsage,
    Endpoint,
    OpenAICompatClient,
    Preset,
    ProviderError,
    RetryPolicy,
    parse_retry_after,
    resolve_endpoint,
)

__all__ = [
    "PRESETS",
    "ChatRequest",
    "ChatResponse",
    "ChatUsage",
    "Endpoint",
    "OpenAICompatClient",
    "Preset",
    "ProviderError",
    "RetryPolicy",
    "parse_retry_after",
    "resolve_endpoint",
]

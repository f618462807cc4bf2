"""Translation methods: the protocol, built-ins (predictions, apertium) and the spec registry."""

from mt_eval.methods.base import Method, MethodClass, MethodIdentity, Translation, TranslationRequest, Usage
from mt_eval.methods.registry import build_method

__all__ = ["Method", "MethodClass", "MethodIdentity", "Translation", "TranslationRequest", "Usage", "build_method"]

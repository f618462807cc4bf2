"""Method specs (``SCHEME:ARGUMENT``) to Method objects.

A spec is split at its first colon, so an argument may itself contain colons
(``plugin:package.module:Class``). Each scheme is one small factory
function in ``SCHEMES``; a later scheme (``llm``, ``pipeline:...``, ``plugin:module:Class``) is
one more function and one more entry (or a call to :func:`register_scheme`), and the error for an
unknown scheme lists whatever is registered, so it never goes stale.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mt_eval.corpus.models import Dataset
from mt_eval.errors import MethodError
from mt_eval.methods.base import Method

Factory = Callable[[str, Dataset], Method]


@dataclass(frozen=True)
class Scheme:
    """A method family: how to build it and how its spec is written (for error messages)."""

    factory: Factory
    usage: str
    needs_argument: bool = True


def _predictions(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.predictions import PredictionsMethod

    return PredictionsMethod(argument, dataset)


def _apertium(argument: str, dataset: Dataset) -> Method:
    from mt_eval.methods.apertium import ApertiumMethod

    return ApertiumMethod(argument)


SCHEMES: dict[str, Scheme] = {
    "predictions": Scheme(_predictions, "predictions:PATH (JSONL or one line per entry)"),
    "apertium": Scheme(_apertium, "apertium:PAIR (e.g. apertium:eng-spa)"),
}


def register_scheme(name: str, factory: Factory, usage: str, *, needs_argument: bool = True) -> None:
    """Add a scheme (used by later built-ins and by tests); a name may be registered once."""
    if name in SCHEMES:
        raise ValueError(f"method scheme '{name}' is already registered")
    SCHEMES[name] = Scheme(factory, usage, needs_argument)


def supported() -> str:
    return ", ".join(SCHEMES[name].usage for name in sorted(SCHEMES))


def build_method(spec: str, *, dataset: Dataset) -> Method:
    """Build the method a ``--method`` spec names; any problem is a one-line MethodError."""
    scheme_name, _, argument = spec.strip().partition(":")
    scheme = SCHEMES.get(scheme_name.strip().lower())
    if scheme is None:
        raise MethodError(f"unknown method '{spec}'", hint=f"supported: {supported()}")
    if scheme.needs_argument and not argument.strip():
        raise MethodError(f"method '{spec}' needs an argument", hint=f"usage: {scheme.usage}")
    return scheme.factory(argument.strip(), dataset)

"""Cards given to ``compare`` as objects: a ``RunCard`` model is dumped; anything else that is not a
mapping is refused, even when it happens to have a ``model_dump`` method (no duck typing)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from compare_helpers import load

from mt_eval.comparison import compare
from mt_eval.errors import UserError
from mt_eval.runcard.model import RunCard

SRC = Path(__file__).parents[2] / "src" / "mt_eval"


class _LooksLikeAModel:
    def model_dump(self, mode: str = "python") -> dict[str, object]:
        raise AssertionError("model_dump of a non-RunCard object was called")


def test_a_runcard_model_is_compared_like_its_dict(cards) -> None:
    a, b = load(cards["a"]), load(cards["b"])
    from_models = compare([RunCard.model_validate(a), RunCard.model_validate(b)], metrics=["chrf"], n_resamples=50)
    from_dicts = compare([a, b], metrics=["chrf"], n_resamples=50)
    assert from_models.as_dict()["paired"] == from_dicts.as_dict()["paired"]


def test_an_object_with_model_dump_is_not_a_card(cards) -> None:
    with pytest.raises(UserError, match="a run card is a JSON object, got _LooksLikeAModel"):
        compare([_LooksLikeAModel(), load(cards["b"])], metrics=["chrf"], n_resamples=50)


def test_the_dict_or_empty_helper_is_defined_once() -> None:
    """``as_dict`` lives in ``runcard/io.py``; the renderers and the web pages import it rather than redefine it."""
    defined = []
    for path in SRC.rglob("*.py"):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:  # module-level functions, not methods
            if isinstance(node, ast.FunctionDef) and node.name in ("_d", "as_dict"):
                defined.append(path.relative_to(SRC).as_posix())
    assert defined == ["runcard/io.py"]

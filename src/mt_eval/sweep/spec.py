"""The benchmark file (TOML) as a typed declaration; every problem names the file, table and key.

The format is described in :mod:`mt_eval.sweep` (the package docstring). Parsing is strict: an
unknown table, key or axis, an axis without values, an exclusion naming a value no axis has, or a
declaration whose cells are all excluded is a :class:`~mt_eval.errors.UserError` (one line, exit 2)
raised before anything is run or written, since a typo in a sweep file would otherwise cost a
whole matrix of paid runs.
"""

from __future__ import annotations

import hashlib
import re
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

OPTION_KEYS: dict[str, str] = {
    "model": "model", "provider": "provider", "base_url": "base_url", "api_key_env": "api_key_env",
    "temperature": "temperature", "max_tokens": "max_tokens", "llm_seed": "seed",
    "system_prompt": "system_prompt_file", "prompt": "system_prompt_file", "coaching": "coaching_file",
    "batch_size": "batch_size", "max_retries": "max_retries", "timeout": "timeout_s",
    "pricing": "pricing_file", "validator": "validator", "tools": "validator", "fst_retries": "fst_retries",
}
"""A key in ``[method]``/``[[cell]]`` or an axis name -> the LLM option it sets (the names of
``mt-eval run``'s flags; ``prompt``, ``coaching`` and ``tools`` are the Benchmark Spec §6.2 axes)."""

PATH_OPTIONS = frozenset({"system_prompt_file", "coaching_file", "pricing_file"})
"""Options naming a file: read relative to the benchmark file, so a sweep runs from any directory."""

OPTION_TYPES: dict[str, tuple[type, ...]] = {
    "temperature": (int, float), "max_tokens": (int,), "seed": (int,), "batch_size": (int,),
    "max_retries": (int,), "timeout_s": (int, float), "fst_retries": (int,),
}
SWEEP_KEYS = frozenset({"name", "corpus", "condition", "segment", "ids", "difficulty", "runs_dir", "description"})
METHOD_KEYS = frozenset({"spec", "cache", *OPTION_KEYS})
CELL_KEYS = frozenset({"name", "spec", *OPTION_KEYS})
TABLES = frozenset({"sweep", "method", "axes", "exclude", "cell"})
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
Scalar = str | int | float | bool


@dataclass(frozen=True)
class ExtraCell:
    """A ``[[cell]]``: one run outside the product (a baseline such as ``apertium:eng-spa``)."""

    name: str
    spec: str
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SweepSpec:
    """A parsed benchmark file. ``axes`` keep the file's order: the first value of each is its baseline."""

    file: Path
    sha256: str
    name: str
    corpora: tuple[Path, ...]
    condition: str
    selection: dict[str, str]
    runs_dir: Path
    method_spec: str | None
    method_options: dict[str, Any]
    cache: bool
    axes: dict[str, tuple[Scalar, ...]]
    excludes: tuple[dict[str, Scalar], ...]
    cells: tuple[ExtraCell, ...]
    raw: dict[str, Any]

    @property
    def root(self) -> Path:
        """Where this sweep's cells run: ``<runs_dir>/<name>/``."""
        return self.runs_dir / self.name


class _Where:
    """Builds located errors: ``FILE: field 'axes.colour': unknown axis``."""

    def __init__(self, file: Path) -> None:
        self.file = str(file)

    def error(self, where: str, message: str, hint: str | None = None) -> UserError:
        return UserError(message, file=self.file, field=where or None, hint=hint)


def _table(data: dict[str, Any], name: str, w: _Where, allowed: frozenset[str] | None) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise w.error(name, f"[{name}] must be a table")
    for key in table:
        if allowed is not None and key not in allowed:
            raise w.error(f"{name}.{key}", f"unknown key in [{name}]", hint=f"known: {', '.join(sorted(allowed))}")
    return table


def _string(value: Any, where: str, w: _Where) -> str:
    if not isinstance(value, str) or not value.strip():
        raise w.error(where, "must be a non-empty string")
    return value.strip()


def _option(key: str, value: Any, where: str, w: _Where, base: Path) -> tuple[str, Any]:
    """A ``[method]``/``[[cell]]`` key and value -> (LLM option name, typed value)."""
    name = OPTION_KEYS[key]
    if value is False or value == "":
        return name, None  # "without": no coaching, no validator, the built-in prompt
    kinds = OPTION_TYPES.get(name, (str,))
    if isinstance(value, bool) or not isinstance(value, kinds):
        raise w.error(where, f"must be {' or '.join(k.__name__ for k in kinds)}, not {type(value).__name__}")
    if name in PATH_OPTIONS and "{" not in str(value):
        value = str((base / str(value)).resolve())
    return name, value


def _axes(table: dict[str, Any], w: _Where) -> dict[str, tuple[Scalar, ...]]:
    axes: dict[str, tuple[Scalar, ...]] = {}
    for name, values in table.items():
        where = f"axes.{name}"
        if name not in OPTION_KEYS:
            raise w.error(where, "unknown axis", hint=f"axes are method options: {', '.join(sorted(OPTION_KEYS))}")
        if not isinstance(values, list) or not values:
            raise w.error(where, "an axis needs a non-empty list of values (the product would be empty)")
        if any(isinstance(v, dict | list) for v in values):
            raise w.error(where, "axis values must be strings, numbers or booleans")
        if len({repr(v) for v in values}) != len(values):
            raise w.error(where, "an axis lists the same value twice")
        if OPTION_KEYS[name] == "temperature" and any(isinstance(v, bool) or not isinstance(v, int | float)
                                                      or v < 0 for v in values):
            raise w.error(where, "temperatures must be numbers ≥ 0")
        axes[name] = tuple(values)
    return axes


def _excludes(items: Any, axes: dict[str, tuple[Scalar, ...]], w: _Where) -> tuple[dict[str, Scalar], ...]:
    if not isinstance(items, list):
        raise w.error("exclude", "write exclusions as [[exclude]] tables")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item:
            raise w.error(f"exclude[{i}]", "an exclusion needs at least one axis = value")
        for key, value in item.items():
            if key not in axes:
                raise w.error(f"exclude[{i}].{key}", "not an axis of this sweep", hint=f"axes: {', '.join(axes)}")
            if value not in axes[key] or isinstance(value, bool) != any(isinstance(v, bool) for v in axes[key]):
                raise w.error(f"exclude[{i}].{key}", f"{value!r} is not a value of axis {key}")
        out.append(dict(item))
    return tuple(out)


def _cells(items: Any, w: _Where, base: Path) -> tuple[ExtraCell, ...]:
    if not isinstance(items, list):
        raise w.error("cell", "write extra cells as [[cell]] tables")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise w.error(f"cell[{i}]", "must be a table")
        for key in item:
            if key not in CELL_KEYS:
                raise w.error(f"cell[{i}].{key}", "unknown key in [[cell]]",
                              hint=f"known: {', '.join(sorted(CELL_KEYS))}")
        spec = _string(item.get("spec"), f"cell[{i}].spec", w)
        name = _string(item.get("name", spec), f"cell[{i}].name", w)
        options = dict(_option(k, v, f"cell[{i}].{k}", w, base) for k, v in item.items() if k in OPTION_KEYS)
        out.append(ExtraCell(name, spec, options))
    return tuple(out)


def _placeholders(text: str, axes: dict[str, Any], where: str, w: _Where) -> None:
    for _, name, _, _ in string.Formatter().parse(text):
        if name is not None and name not in axes:
            raise w.error(where, f"{{{name}}} is not an axis of this sweep", hint=f"axes: {', '.join(axes) or 'none'}")


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a benchmark file; raises ``UserError`` naming the file, table and key."""
    file = Path(path)
    w = _Where(file)
    try:
        blob = file.read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the benchmark file: {exc.strerror}", file=str(file)) from None
    try:
        data = tomllib.loads(blob.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"not a valid TOML file: {exc}", file=str(file)) from None
    for key in data:
        if key not in TABLES:
            raise w.error(key, "unknown table", hint=f"known: {', '.join(sorted(TABLES))}")
    base = file.resolve().parent
    sweep = _table(data, "sweep", w, SWEEP_KEYS)
    name = _string(sweep.get("name"), "sweep.name", w)
    if not NAME.match(name):
        raise w.error("sweep.name", "must be letters, digits, '.', '_' or '-' (it names the runs folder)")
    corpus = sweep.get("corpus")
    corpora = [corpus] if isinstance(corpus, str) else corpus
    if not isinstance(corpora, list) or not corpora or not all(isinstance(c, str) and c for c in corpora):
        raise w.error("sweep.corpus", "give a corpus file or a list of them")
    selection: dict[str, str] = {k: _string(sweep[k], f"sweep.{k}", w)
                                 for k in ("segment", "ids", "difficulty") if k in sweep}
    method = _table(data, "method", w, METHOD_KEYS)
    axes = _axes(_table(data, "axes", w, None), w)  # an unknown axis gets its own message
    spec = _string(method["spec"], "method.spec", w) if "spec" in method else None
    options = dict(_option(k, v, f"method.{k}", w, base) for k, v in method.items() if k in OPTION_KEYS)
    for key, value in [("spec", spec), *options.items()]:
        if isinstance(value, str):
            _placeholders(value, axes, f"method.{key}", w)
    cache = method.get("cache", True)
    if not isinstance(cache, bool):
        raise w.error("method.cache", "must be true or false")
    if axes and spec is None:
        raise w.error("method.spec", "axes need a method template: [method] spec = \"llm:{model}\"")
    cells = _cells(data.get("cell", []), w, base)
    return SweepSpec(
        file=file, sha256=hashlib.sha256(blob).hexdigest(), name=name,
        corpora=tuple((base / c).resolve() for c in corpora), condition=_string(sweep.get("condition", "default"),
                                                                                "sweep.condition", w),
        selection=selection, runs_dir=Path(_string(sweep.get("runs_dir", "runs"), "sweep.runs_dir", w)),
        method_spec=spec, method_options=options, cache=cache, axes=axes,
        excludes=_excludes(data.get("exclude", []), axes, w), cells=cells, raw=data)

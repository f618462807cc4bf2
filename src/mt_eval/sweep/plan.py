"""The cell plan: the product of a sweep's axes less its exclusions, plus its extra cells.

Each :class:`Cell` is what one ``mt-eval run`` would be given: a method spec and the LLM options
``run`` builds from its flags, on one corpus. A cell's key lists its axis values in the file's order
(``model=a,temperature=0.3,prompt=v2``; a file-valued axis shows the file's stem) and is stable
across runs of the same file: it names the cell's folder (``<runs_dir>/<sweep>/<slug>/``), its row
in the store and its line in the report.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.methods.llm import LLMSettings
from mt_eval.methods.pipeline import DEFAULT_FST_RETRIES
from mt_eval.sweep.spec import OPTION_KEYS, PATH_OPTIONS, Scalar, SweepSpec, load_spec

RUN_OPTIONS = ("model", "provider", "base_url", "api_key_env", "temperature", "max_tokens", "seed",
               "system_prompt_file", "coaching_file", "batch_size", "concurrency", "max_retries", "timeout_s",
               "cache_path", "pricing_file", "validator", "fst_retries")
"""The LLM options ``mt-eval run`` records in a journal header, in its order (``cli/run.py``)."""
CARD_NAME = "run_card.json"
UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]")


@dataclass(frozen=True)
class Cell:
    """One run of the sweep: its key, its axis values, and the method it runs on which corpus."""

    key: str
    params: dict[str, Scalar] = field(hash=False)
    spec: str
    options: dict[str, Any] = field(hash=False)
    corpus: Path

    @property
    def slug(self) -> str:
        """The key as a folder name (a model's ``/`` and a spec's ``:`` become ``_``)."""
        return UNSAFE.sub("_", self.key)

    def run_options(self, concurrency: int, cache_path: str | None) -> dict[str, Any]:
        """The whole option set ``mt-eval run`` would record: its defaults, then this cell's values."""
        defaults = LLMSettings(model="")
        llm: dict[str, Any] = {k: getattr(defaults, k, None) for k in RUN_OPTIONS}
        llm.update({"fst_retries": DEFAULT_FST_RETRIES, "model": None, **self.options})
        llm.update(concurrency=concurrency, cache_path=cache_path)
        return llm


def shown(axis: str, value: Scalar) -> str:
    """How a value appears in a cell key: a file by its stem, "without" as ``none``."""
    if value is False or value == "":
        return "none"
    if OPTION_KEYS[axis] in PATH_OPTIONS or (axis == "tools" and isinstance(value, str) and ":" in value):
        return Path(str(value).rpartition(":")[2]).stem
    return str(value)


def _excluded(params: dict[str, Scalar], excludes: tuple[dict[str, Scalar], ...]) -> bool:
    return any(all(params.get(k) == v and isinstance(params.get(k), bool) == isinstance(v, bool)
                   for k, v in rule.items()) for rule in excludes)


def _method(spec: str, options: dict[str, Any]) -> str:
    """The scheme a cell's options call for: coaching data makes ``llm`` coached, a validator makes it
    the validate-retry pipeline (Benchmark Spec §6.2's coaching and tools axes)."""
    scheme, _, argument = spec.partition(":")
    if scheme not in ("llm", "coached"):
        return spec
    if argument and not options.get("model"):
        options["model"] = argument  # llm:MODEL names the model, as `mt-eval run --method llm:MODEL` does
    if options.get("validator"):
        return "pipeline:validate-retry"
    scheme = "coached" if scheme == "coached" or options.get("coaching_file") else "llm"
    return f"{scheme}:{options['model']}" if options.get("model") else scheme


def _axis_cell(spec: SweepSpec, corpus_key: str, corpus: Path, params: dict[str, Scalar]) -> Cell:
    words = {axis: str(value) for axis, value in params.items()}
    options = {k: (v.format(**words) if isinstance(v, str) else v) for k, v in spec.method_options.items()}
    for axis, value in params.items():
        name = OPTION_KEYS[axis]
        options[name] = None if value is False or value == "" else value
        if name in PATH_OPTIONS and options[name] is not None:
            options[name] = str((spec.file.resolve().parent / str(value)).resolve())
    for name in PATH_OPTIONS:  # a template such as "prompts/{prompt}.txt", filled in above
        if isinstance(options.get(name), str):
            options[name] = str((spec.file.resolve().parent / options[name]).resolve())
    assert spec.method_spec is not None
    key = ",".join([corpus_key, *(f"{a}={shown(a, v)}" for a, v in params.items())][0 if corpus_key else 1:])
    return Cell(key, dict(params), _method(spec.method_spec.format(**words), options), options, corpus)


def plan_cells(spec: SweepSpec) -> list[Cell]:
    """Every cell, in the file's order; an empty plan or two cells with one folder is a UserError."""
    cells: list[Cell] = []
    for corpus in spec.corpora:
        corpus_key = f"corpus={corpus.stem}" if len(spec.corpora) > 1 else ""
        if spec.axes:
            for combo in itertools.product(*spec.axes.values()):
                params = dict(zip(spec.axes, combo, strict=True))
                if not _excluded(params, spec.excludes):
                    cells.append(_axis_cell(spec, corpus_key, corpus, params))
        elif spec.method_spec is not None:
            cells.append(Cell(",".join(filter(None, [corpus_key, "method=" + spec.method_spec])), {},
                              _method(spec.method_spec, dict(spec.method_options)), dict(spec.method_options), corpus))
        for extra in spec.cells:
            options = dict(extra.options)
            key = ",".join(filter(None, [corpus_key, f"cell={extra.name}"]))
            cells.append(Cell(key, {}, _method(extra.spec, options), options, corpus))
    if not cells:
        raise UserError("the sweep has no cells: every combination of the axes is excluded", file=str(spec.file),
                        field="exclude", hint="remove an [[exclude]] or add values to an axis")
    seen: dict[str, str] = {}
    for cell in cells:
        if cell.slug in seen:
            raise UserError(f"cells '{seen[cell.slug]}' and '{cell.key}' would share the folder {cell.slug}",
                            file=str(spec.file), hint="give [[cell]] a distinct name, or distinct axis values")
        seen[cell.slug] = cell.key
    return cells


def load_plan(path: str | Path) -> tuple[SweepSpec, list[Cell]]:
    """The benchmark file and its cells, both checked before anything runs."""
    spec = load_spec(path)
    return spec, plan_cells(spec)


@functools.cache
def load_dataset(corpus: Path, selection: tuple[tuple[str, str], ...]) -> tuple[Any, Any]:
    """(full corpus, selected entries), loaded once per process whatever the number of cells."""
    from mt_eval.corpus import load_corpus, select_entries

    full = load_corpus(corpus)
    return full, select_entries(full, **dict(selection)) if selection else full


def estimate(spec: SweepSpec, cells: list[Cell], concurrency: int,
             remaining: Callable[[Cell], set[int] | None] | None = None, *,
             require_key: bool = False) -> list[tuple[Cell, dict[str, Any] | None]]:
    """Each cell's request plan (entries, requests, tokens, estimated cost; None: no paid requests),
    as ``mt-eval run --dry-run`` computes it. ``remaining`` (a resume) says which entries of a cell
    are finished already (None: the whole cell is), so the plan covers only what is left to send.
    Every cell's method is built, so a bad option, a missing file or (``require_key``) an unset key
    variable is a UserError here, before a sweep writes anything."""
    from mt_eval.engine.session import plan_for
    from mt_eval.methods.registry import build_method

    out: list[tuple[Cell, dict[str, Any] | None]] = []
    for cell in cells:
        full, dataset = load_dataset(cell.corpus, tuple(sorted(spec.selection.items())))
        done = remaining(cell) if remaining else set()
        if done is None:  # finished: nothing left to send
            out.append((cell, {"entries": 0, "requests": 0, "est_cost_usd": 0.0}))
            continue
        llm = {**cell.run_options(concurrency, None), "require_key": require_key}
        method = build_method(cell.spec, dataset=full, llm_options=llm)
        out.append((cell, plan_for(method, dataset, done)))
    return out


def total_cost(plans: list[tuple[Cell, dict[str, Any] | None]]) -> float | None:
    """§10.2: sweep cost = Σ cell costs; None when a paid cell's model is not in the pricing table."""
    costs = [p.get("est_cost_usd") for _, p in plans if p is not None]
    return None if any(c is None for c in costs) else float(sum(c for c in costs if c is not None))

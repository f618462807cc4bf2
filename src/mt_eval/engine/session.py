"""What ``mt-eval run`` does around the engine: resume checks, the request plan and the budget.

Kept out of the CLI so the command stays a list of options (the bar and the plan's text are in
``render/progress.py``).

Resuming trusts nothing in the run directory. The run's options (never the API key: only the
*name* of the variable holding it) are stored in the journal header, but a resume takes its
options from its own command line, exactly as a fresh run does, and only *compares* them with the
header (:func:`check_resume`): a journal can name a plugin module, an output path, a server or a
key variable, and following it would import that module, write there, or send the user's key to
that server. A field that differs is refused with its flag named (exit 2), except the few that
only say where or how this session works (:data:`APPLIED_ON_RESUME`), which the command line sets.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mt_eval.engine.runner import read_journal, request_for
from mt_eval.errors import UserError
from mt_eval.methods.base import Method, Translation

APPLIED_ON_RESUME = frozenset({"runs_dir", "out", "bootstrap", "scoring", "llm.timeout_s", "llm.cache_path"})
"""Invocation fields a resume takes from its command line even when they differ from the journal's:
where the card goes, how it is scored (confidence intervals, analyser, terminology), the HTTP
timeout and the response cache. None changes a translation or the method's configuration."""

PATH_FIELDS = frozenset({"corpus", "source_file", "reference_file", "llm.system_prompt_file", "llm.coaching_file",
                         "llm.pricing_file"})
FLAGS = {"llm.seed": "--llm-seed", "llm.system_prompt_file": "--system-prompt", "llm.coaching_file": "--coaching",
         "llm.pricing_file": "--pricing", "llm.timeout_s": "--timeout", "llm.max_retries": "--max-retries"}
RUN_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def flag(name: str) -> str:
    """The command-line flag that sets an invocation field (``llm.base_url`` -> ``--base-url``)."""
    return FLAGS.get(name, "--" + name.rpartition(".")[2].replace("_", "-"))


def _flatten(inv: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in inv.items():
        if isinstance(value, dict) and key == "llm":
            out.update(_flatten(value, f"{key}."))
        else:
            out[prefix + str(key)] = value
    return out


def _normal(name: str, value: Any) -> Any:
    """Paths compare as the files they name here (a relative path is read against this directory)."""
    if name in PATH_FIELDS and isinstance(value, str) and value:
        return str(Path(value).expanduser().resolve())
    if isinstance(value, list):
        return [_normal(name, v) for v in value]
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def read_header(run_dir: Path) -> dict[str, Any]:
    """The journal's run header, checked for shape only (its values are compared, never used)."""
    return read_run(run_dir)[0]


def read_run(run_dir: Path) -> tuple[dict[str, Any], dict[int, Translation]]:
    """The journal's run header (checked for shape only: its values are compared, never used) and its finished
    entries, from one read of the file."""
    header, done = read_journal(run_dir / "journal.jsonl")
    if not header or not isinstance(header.get("invocation"), dict):
        raise UserError("cannot resume: no run journal with a run header here", file=str(run_dir / "journal.jsonl"),
                        hint="--resume takes a run directory, runs/<run_id>, of a method that keeps a journal")
    if not RUN_ID.match(str(header.get("run_id"))) or not TIMESTAMP.match(str(header.get("timestamp"))):
        raise UserError("cannot resume: the journal's run id or timestamp is malformed",
                        file=str(run_dir / "journal.jsonl"))
    return header, done


def check_resume(run_dir: Path, invocation: dict[str, Any]) -> None:
    """Refuse (exit 2, naming the flag) unless this command line runs what the journal's run ran."""
    compare_invocation(read_header(run_dir), invocation, run_dir)


def compare_invocation(header: dict[str, Any], invocation: dict[str, Any], run_dir: Path) -> None:
    """:func:`check_resume` on a header already read (``read_run``)."""
    stored, given = _flatten(header["invocation"]), _flatten(invocation)
    for name in sorted(set(stored) | set(given)):
        if name in APPLIED_ON_RESUME:
            continue
        was, now = _normal(name, stored.get(name)), _normal(name, given.get(name))
        if was != now:
            raise UserError(f"cannot resume: {flag(name)} is {_shown(given.get(name))} here but "
                            f"{_shown(stored.get(name))} in the interrupted run", file=str(run_dir),
                            hint="give the interrupted run's options again with --resume; a journal is "
                                 "compared with them, never followed")


def resume_command(argv: list[str], run_dir: Path) -> str:
    """The command that continues this run: the same options, plus ``--resume DIR`` once."""
    args, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--resume":
            skip = True
            continue
        if arg.startswith("--resume="):
            continue
        args.append(arg)
    return shlex.join(["mt-eval", *args, "--resume", str(run_dir)])


def finished_ids(run_dir: Path | None) -> set[int]:
    if run_dir is None:
        return set()
    _, done = read_journal(run_dir / "journal.jsonl")
    return {i for i, t in done.items() if t.error is None}


def plan_for(method: Method, dataset: Any, skip: set[int]) -> dict[str, Any] | None:
    """The request plan for the entries still to do; None for a method that makes no paid requests."""
    src, tgt = dataset.info.source_language, dataset.info.target_language
    return method.plan([request_for(e, src, tgt) for e in dataset.entries if e.id not in skip])


def check_budget(plan: dict[str, Any] | None, budget: float | None,
                 confirm: Callable[[str], bool] | None) -> None:
    """Ask ``confirm`` before a run estimated above ``--budget-usd``; with nobody to ask (None: no terminal, or
    the API without a callback) refuse. ``-y`` is a ``confirm`` that says yes."""
    if plan is None or budget is None:
        return
    cost = plan.get("est_cost_usd")
    if cost is None:
        raise UserError("cannot check --budget-usd: this model is not in the pricing table",
                        hint="add it to a --pricing FILE, or pass -y")
    if cost <= budget:
        return
    question = f"estimated cost ${cost:.4f} exceeds --budget-usd {budget:.4f}; run anyway?"
    if confirm is None:
        raise UserError(f"estimated cost ${cost:.4f} exceeds --budget-usd {budget:.4f}", hint="pass -y to run anyway")
    if not confirm(question):
        raise UserError("not run: over budget")

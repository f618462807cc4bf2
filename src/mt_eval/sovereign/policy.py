"""The governance policy (``DIR/policy.toml``): the submission budget and the organisation's name.

The budget counts **submissions**, not executions: a submission is one bundle (by sha256) run on a
secret segment, and each method gets ``submissions`` of them per ``days`` (default 3 per 30).
Overfitting a holdout needs a method that changes between queries; running the *same* bundle again
teaches its developer nothing new (a sandboxed method has no memory of earlier runs), and §9.2 asks
for exactly that: two executions that agree within ±2 %. So one submission may be executed up to
``runs_per_submission`` times (default 2, the agreement pair); a third execution of the same bundle is
refused, and a new bundle counts as a new submission. Failed runs count like any other: an error class
is an answer too.

```toml
organisation = "Example Language Council"

[budget]
submissions = 3
runs_per_submission = 2
days = 30
segments = ["gold_standard", "held_out"]
```
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError

DEFAULTS: dict[str, Any] = {"submissions": 3, "runs_per_submission": 2, "days": 30,
                            "segments": ("gold_standard", "held_out")}  # fmt: skip
MINIMUM = {"submissions": 0, "runs_per_submission": 1, "days": 1}


@dataclass(frozen=True)
class Policy:
    """``policy.toml`` as read (defaults where it says nothing)."""

    submissions: int = DEFAULTS["submissions"]
    runs_per_submission: int = DEFAULTS["runs_per_submission"]
    days: int = DEFAULTS["days"]
    segments: tuple[str, ...] = DEFAULTS["segments"]
    organisation: str | None = None

    def toml(self) -> str:
        org = f"organisation = {json.dumps(self.organisation, ensure_ascii=False)}\n" if self.organisation else ""
        return ("# mt-eval governance policy (mt-eval governance policy --help)\n" + org + "\n[budget]\n"
                + "".join(f"{name} = {getattr(self, name)}\n" for name in MINIMUM)
                + f"segments = {json.dumps(list(self.segments))}\n")  # fmt: skip

    def checked(self, file: str | None = None) -> Policy:
        """This policy, or ``UserError`` naming the first value out of range."""
        for name, least in MINIMUM.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise UserError(f"{name} must be a whole number ≥ {least}", file=file, field=f"budget.{name}")
        if not all(isinstance(s, str) for s in self.segments):
            raise UserError("segments must be a list of segment names", file=file, field="budget.segments")
        org = self.organisation
        if org is not None and (not isinstance(org, str) or not org.strip() or not org.isprintable()):
            raise UserError("organisation must be a printable name", file=file, field="organisation")
        return self


def read_policy(path: Path) -> Policy:
    """The policy at ``path`` (defaults when there is none); a malformed file is refused, never guessed."""
    if not path.exists():
        return Policy()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"not a readable policy file: {exc}", file=str(path)) from None
    budget = data.get("budget", {})
    unknown = sorted(set(budget) - set(DEFAULTS)) + sorted(set(data) - {"budget", "organisation"})
    if unknown:  # a misspelt key would otherwise silently leave the default in force
        raise UserError(f"unknown policy key {unknown[0]!r} (known: organisation, budget.{', budget.'.join(DEFAULTS)})",
                        file=str(path))
    segments = budget.get("segments", DEFAULTS["segments"])
    if not isinstance(segments, list | tuple):
        raise UserError("segments must be a list of segment names", file=str(path), field="budget.segments")
    values = {name: budget.get(name, DEFAULTS[name]) for name in MINIMUM}
    return Policy(**values, segments=tuple(segments), organisation=data.get("organisation")).checked(str(path))

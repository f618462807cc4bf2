"""The governance policy (``DIR/policy.toml``): the submission budget, the organisation's name, and the
LLM models a gateway bundle's broker may reach.

The budget counts **submissions**, not executions: a submission is one bundle (by sha256) run on a
secret segment, and each registered submitter key gets ``submissions`` of them per ``days`` (default 3
per 30) whatever its bundles are named (``sovereign/submitters.py``: renaming a bundle is free, a new key
is governance's decision).
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

[egress]
models = ["openai/gpt-4o-mini"]  # the broker forwards to these only; a bundle declaring another is refused

[release]
public_breakdowns = ["by_difficulty"]  # RESULT.json and the public card add these (default: none)

[rotation]
publish_after_days = 365  # a rotated-out gold entry may enter a public segment this long after (default: never)
```

Each public breakdown widens the result channel by a few bits per group and run
(``release.channel_bits``, docs/decisions.md §44), so none is released unless governance names it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.sovereign.release import BREAKDOWNS

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
    models: tuple[str, ...] = ()  # [egress] models: none unless governance names them
    public_breakdowns: tuple[str, ...] = ()  # [release] public_breakdowns: none unless governance names them
    publish_after_days: int | None = None  # [rotation]: None, a gold entry is never rotated into a public segment

    def toml(self) -> str:
        org = f"organisation = {json.dumps(self.organisation, ensure_ascii=False)}\n" if self.organisation else ""
        return ("# mt-eval governance policy (mt-eval governance policy --help)\n" + org + "\n[budget]\n"
                + "".join(f"{name} = {getattr(self, name)}\n" for name in MINIMUM)
                + f"segments = {json.dumps(list(self.segments))}\n"
                + (f"\n[egress]\nmodels = {json.dumps(list(self.models))}\n" if self.models else "")
                + (f"\n[release]\npublic_breakdowns = {json.dumps(list(self.public_breakdowns))}\n"
                   if self.public_breakdowns else "")
                + (f"\n[rotation]\npublish_after_days = {self.publish_after_days}\n"
                   if self.publish_after_days is not None else ""))  # fmt: skip

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
        if not all(isinstance(m, str) and m.strip() == m and m and m.isprintable() for m in self.models):
            raise UserError("models must be a list of model names", file=file, field="egress.models")
        if not all(isinstance(b, str) and b in BREAKDOWNS for b in self.public_breakdowns):
            raise UserError(f"public_breakdowns must name breakdowns among {', '.join(BREAKDOWNS)}", file=file,
                            field="release.public_breakdowns")
        days = self.publish_after_days
        if days is not None and (isinstance(days, bool) or not isinstance(days, int) or days < 0):
            raise UserError("publish_after_days must be a whole number ≥ 0", file=file,
                            field="rotation.publish_after_days")
        return self


def read_policy(path: Path) -> Policy:
    """The policy at ``path`` (defaults when there is none); a malformed file is refused, never guessed."""
    if not path.exists():
        return Policy()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"not a readable policy file: {exc}", file=str(path)) from None
    budget, egress, release = data.get("budget", {}), data.get("egress", {}), data.get("release", {})
    rotation = data.get("rotation", {})
    if not all(isinstance(t, dict) for t in (budget, egress, release, rotation)):
        raise UserError("budget, egress, release and rotation are tables ([budget], [egress], [release], "
                        "[rotation])", file=str(path))
    unknown = (sorted(set(budget) - set(DEFAULTS)) + sorted(set(egress) - {"models"})
               + sorted(set(release) - {"public_breakdowns"}) + sorted(set(rotation) - {"publish_after_days"})
               + sorted(set(data) - {"budget", "egress", "release", "rotation", "organisation"}))
    if unknown:  # a misspelt key would otherwise silently leave the default in force
        raise UserError(f"unknown policy key {unknown[0]!r} (known: organisation, budget.{', budget.'.join(DEFAULTS)}, "
                        "egress.models, release.public_breakdowns, rotation.publish_after_days)", file=str(path))
    models = egress.get("models", [])
    if not isinstance(models, list):
        raise UserError("models must be a list of model names", file=str(path), field="egress.models")
    public = release.get("public_breakdowns", [])
    if not isinstance(public, list):
        raise UserError("public_breakdowns must be a list of breakdown names", file=str(path),
                        field="release.public_breakdowns")
    segments = budget.get("segments", DEFAULTS["segments"])
    if not isinstance(segments, list | tuple):
        raise UserError("segments must be a list of segment names", file=str(path), field="budget.segments")
    values = {name: budget.get(name, DEFAULTS[name]) for name in MINIMUM}
    return Policy(**values, segments=tuple(segments), organisation=data.get("organisation"),
                  models=tuple(models), public_breakdowns=tuple(public),
                  publish_after_days=rotation.get("publish_after_days")).checked(str(path))

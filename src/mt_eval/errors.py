"""User-facing errors.

Every problem a user can fix (bad corpus, unknown method, missing tool) is raised as a
``UserError`` so the CLI can print one located line and exit 2 instead of a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """An error in the user's input or environment, reported as one line with exit code 2."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        entry: str | int | None = None,
        field: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = file
        self.entry = entry
        self.field = field
        self.hint = hint
        super().__init__(self.one_line())

    def location(self) -> str:
        parts: list[str] = []
        if self.file:
            parts.append(str(self.file))
        if self.entry is not None:
            parts.append(f"entry {self.entry}")
        if self.field:
            parts.append(f"field '{self.field}'")
        return ": ".join(parts)

    def one_line(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class CorpusError(UserError):
    """A corpus file that cannot be loaded; carries every problem found, not just the first."""

    def __init__(self, problems: list[UserError]) -> None:
        self.problems = problems
        first = problems[0]
        super().__init__(
            first.message, file=first.file, entry=first.entry, field=first.field, hint=first.hint
        )

    def lines(self) -> list[str]:
        return [p.one_line() for p in self.problems]


class MethodError(UserError):
    """A method that cannot be set up (unknown pair, missing engine, bad predictions file)."""

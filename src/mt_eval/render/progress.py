"""Terminal rendering of a run in progress: the request plan and the live progress bar (stderr)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mt_eval.engine.runner import EngineStats


def print_plan(plan: dict[str, Any], console: Console) -> None:
    cost = plan.get("est_cost_usd")
    # an LLM's plan counts tokens; a per-character API's (deepl, google) the characters it bills
    volume = (f"{plan['est_prompt_tokens']:,} prompt + {plan['est_completion_tokens']:,} completion tokens"
              if "est_prompt_tokens" in plan else f"{plan['billed_characters']:,} billed characters")
    console.print(
        f"plan: {plan['entries']} entries in {plan['requests']} requests (batch size {plan['batch_size']}, "
        f"{plan['concurrency']} in flight); estimated {volume}; estimated cost "
        + (f"${cost:.4f}" if cost is not None else "unknown (model not in the pricing table)")
        + f" (pricing: {plan['pricing']})" + (f"; {plan['note']}" if plan.get("note") else ""),
        highlight=False, soft_wrap=True)


class RunProgress:
    """A rich bar: done/total, errors, retries, tokens and cost so far (to stderr)."""

    def __init__(self, console: Console, name: str, total: int) -> None:
        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("errors {task.fields[errors]} · retries {task.fields[retries]} · "
                              "{task.fields[tokens]} tokens · ${task.fields[cost]}"), TimeElapsedColumn())
        self.bar = Progress(*columns, console=console, transient=True)
        self.task = self.bar.add_task(name, total=total, errors=0, retries=0, tokens="0", cost="0.0000")

    def __enter__(self) -> RunProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.__exit__(None, None, None)

    def __call__(self, s: EngineStats) -> None:
        self.bar.update(self.task, completed=s.done, errors=s.errors, retries=s.retries,
                        tokens=f"{s.tokens:,}", cost=f"{s.cost_usd:.4f}")


class EmbeddingProgress:
    """A bar while ``semantic_score`` embeds the texts its vector cache lacks (stderr; transient). Passed as the
    metric's ``progress`` callback, called with (embedded, to embed); nothing is shown when every vector is
    cached."""

    def __init__(self, console: Console) -> None:
        self.bar = Progress(TextColumn("[bold]embedding for semantic_score"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.task is None:
            self.bar.start()
            self.task = self.bar.add_task("embedding", total=total)
        self.bar.update(self.task, completed=done, total=total)
        if done >= total:
            self.bar.stop()
            self.task = None

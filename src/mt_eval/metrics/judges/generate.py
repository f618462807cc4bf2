"""Generating judge metrics from a task description and rated examples (AutoMetrics §3.1, App. E.2).

*Single criterion* (Saad-Falcon et al., 2024): the best- and worst-rated examples are shown to an LLM,
which proposes "axes of variation" that explain the difference; each axis becomes a judge scoring 1–5.
*Rubric* (Gunjal et al., 2025): for the first axes, a second request asks what a 1, 2, 3, 4 and 5
look like, and the judge is shown those levels. The paper's default is 10 criteria and 5 rubrics.

Prompts follow the paper's DSPy signatures (``GenerateAxisOfVariationSignature``,
``GenerateRubricSignature``) written out as instructions, with a JSON answer format. Requests are at
temperature 0 and cached in the harness's response cache, so generating again sends nothing.

Examples come from a judgments file (JSONL/JSON rows, or a TSV with a header, each with a source, an
output, a reference and a score) or a run card (the score is the entry's chrF). Secret entries
(gold_standard/held_out) of a card are never shown to the model: they would leave the machine.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import SECRET_SEGMENTS
from mt_eval.errors import UserError
from mt_eval.metrics.judges.cards import judge_id, write_cards
from mt_eval.metrics.judges.metric import RUBRIC, SINGLE, JudgeSpec, json_candidates, run_sync
from mt_eval.providers.cache import ResponseCache, cache_key
from mt_eval.providers.openai_compat import ChatRequest, OpenAICompatClient, RetryPolicy, resolve_endpoint

AXES_PROMPT = """Given a task description, a target metric, and good/bad examples, generate a list of axes of \
variation which could be used to explain the differences between the good and bad examples. These axes of \
variation will be used as measures to evaluate the model's performance, so they should be informative and useful \
for the model to improve on.

Task description: {task}
Target metric: {target}

Good examples (rated highest):
{good}

Bad examples (rated lowest):
{bad}

Generate {n} axes of variation. Respond with JSON only: a list of {n} objects \
[{{"name": "<a short title>", "description": "<what this axis measures, one or two sentences>"}}, ...]"""

RUBRIC_PROMPT = """Given a dataset, task description, and an evaluation metric, generate a rubric for the metric \
scoring from 1 to 5.

Task description: {task}
Metric title: {name}
Metric description: {description}

Good examples:
{good}

Bad examples:
{bad}

Respond with JSON only: {{"1": "<what a score of 1 means>", "2": "...", "3": "...", "4": "...", "5": "..."}}"""

# which keys a row may use for each field (the MQM TSV layout's names included)
FIELDS = {
    "source": ("source", "src"),
    "output": ("output", "hypothesis", "predicted", "translation", "mt"),
    "reference": ("reference", "reference_refA", "ref", "references"),
    "score": ("score", "mqm_avg_score", "human", "rating", "da", "esa"),
}


@dataclass(frozen=True)
class Example:
    source: str
    output: str
    reference: str
    score: float

    def text(self) -> str:
        return f"- Source: {self.source}\n  Translation: {self.output}\n  Reference: {self.reference}"


class GenerationError(UserError):
    """The model's answer to a generation request could not be used (the cache keeps none of it)."""


def _pick(row: Mapping[str, Any], name: str) -> Any:
    for key in FIELDS[name]:
        if key in row and row[key] not in (None, ""):
            return row[key]
    return None


def _rows(path: Path) -> tuple[list[Mapping[str, Any]], str]:
    """Rows of a judgments file, or of a run card's ``results`` (scored by chrF); and what scored them."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read the examples: {exc}", file=str(path)) from exc
    if path.suffix.lower() in (".tsv", ".csv"):
        return list(csv.DictReader(text.splitlines(), delimiter="\t" if path.suffix.lower() == ".tsv" else ",")), \
            "human score"
    try:
        data: Any = json.loads(text) if path.suffix.lower() == ".json" else [json.loads(x) for x in text.splitlines()
                                                                            if x.strip()]
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc}", file=str(path)) from exc
    if isinstance(data, dict) and isinstance(data.get("results"), list):  # a run card
        public = [r for r in data["results"] if isinstance(r, dict) and not r.get("error")
                  and str(r.get("segment")) not in SECRET_SEGMENTS]  # secret entries never leave the machine
        rows: list[Mapping[str, Any]] = [{**r, "score": r.get("entry_chrf")} for r in public]
        return rows, "chrF of each entry"
    if isinstance(data, list) and all(isinstance(r, dict) for r in data):
        return data, "human score"
    raise UserError("expected rows with source, output, reference and score, or a run card", file=str(path))


def load_examples(path: Path) -> tuple[list[Example], str]:
    """Every usable row, and what its score is."""
    rows, scored_by = _rows(path)
    examples = []
    for i, row in enumerate(rows, 1):
        values = {name: _pick(row, name) for name in FIELDS}
        if values["output"] is None or values["score"] is None:
            raise UserError("a row needs an output (output/hypothesis) and a score (score/mqm_avg_score)",
                            file=str(path), entry=i)
        try:
            score = float(values["score"])
        except (TypeError, ValueError) as exc:
            raise UserError(f"score {values['score']!r} is not a number", file=str(path), entry=i) from exc
        reference = values["reference"]
        if isinstance(reference, list):
            reference = reference[0] if reference else ""
        examples.append(Example(str(values["source"] or ""), str(values["output"]), str(reference or ""), score))
    if len(examples) < 2:
        raise UserError(f"{len(examples)} usable example(s): generating criteria needs best and worst ones",
                        file=str(path))
    return examples, scored_by


def best_and_worst(examples: Sequence[Example], per_side: int) -> tuple[list[Example], list[Example]]:
    """The ``per_side`` highest- and lowest-scored examples (disjoint; ties broken by file order)."""
    order = sorted(range(len(examples)), key=lambda i: (-examples[i].score, i))
    k = min(per_side, len(examples) // 2)
    return [examples[i] for i in order[:k]], [examples[i] for i in order[::-1][:k]]


@dataclass(frozen=True)
class GenerateConfig:
    task: str
    model: str
    base_url: str
    n_single: int = 10
    n_rubric: int = 5
    per_side: int = 5
    api_key_env: str | None = None
    cache_path: str | None = None
    retry: RetryPolicy | None = None


def _parse_axes(content: str, n: int) -> list[tuple[str, str]]:
    for candidate in json_candidates(content):
        try:
            obj = json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("axes"), list):
            obj = obj["axes"]
        if isinstance(obj, list) and obj and all(isinstance(a, dict) and isinstance(a.get("name"), str)
                                                 and isinstance(a.get("description"), str) for a in obj):
            axes = [(a["name"].strip(), a["description"].strip()) for a in obj if a["name"].strip()]
            return axes[:n]
    raise GenerationError(f"the model did not answer with a JSON list of {{name, description}} axes: "
                          f"{content[:120]!r}")


def _parse_rubric(content: str, name: str) -> tuple[str, ...]:
    for candidate in json_candidates(content):
        try:
            obj = json.loads(candidate.strip())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and all(isinstance(obj.get(str(s)), str) and obj[str(s)].strip()
                                         for s in range(1, 6)):
            return tuple(obj[str(s)].strip() for s in range(1, 6))
    raise GenerationError(f"the rubric for {name!r} is not a JSON object with levels \"1\" to \"5\": "
                          f"{content[:120]!r}")


async def _generate(config: GenerateConfig, good: str, bad: str, target: str) -> list[JudgeSpec]:
    cache = ResponseCache(config.cache_path) if config.cache_path else None
    endpoint = resolve_endpoint(base_url=config.base_url, api_key_env=config.api_key_env)
    try:
        async with OpenAICompatClient(endpoint, retry=config.retry) as client:

            def key(prompt: str) -> str:
                return cache_key(kind="judge-generate-1", base_url=endpoint.base_url, model=config.model,
                                 messages=[{"role": "user", "content": prompt}], temperature=0.0)

            async def ask(prompt: str) -> str:
                if cache is not None and (hit := cache.get(key(prompt))) is not None:
                    return hit.content
                request = ChatRequest(model=config.model, messages=({"role": "user", "content": prompt},),
                                      temperature=0.0, max_tokens=2000)
                return (await client.chat(request)).content

            def remember(prompt: str, content: str) -> None:  # only answers that parsed are kept
                if cache is not None:
                    cache.put(key(prompt), content, config.model)

            n = max(config.n_single, config.n_rubric)
            prompt = AXES_PROMPT.format(task=config.task, target=target, good=good, bad=bad, n=n)
            content = await ask(prompt)
            axes = _parse_axes(content, n)
            remember(prompt, content)
            specs = [_spec(config, name, description, SINGLE) for name, description in axes[:config.n_single]]
            for name, description in axes[:config.n_rubric]:
                prompt = RUBRIC_PROMPT.format(task=config.task, name=name, description=description, good=good, bad=bad)
                content = await ask(prompt)
                rubric = _parse_rubric(content, name)
                remember(prompt, content)
                specs.append(_spec(config, name, description, RUBRIC, rubric))
            return specs
    finally:
        if cache is not None:
            cache.close()


def _spec(config: GenerateConfig, name: str, description: str, kind: str, rubric: tuple[str, ...] = ()) -> JudgeSpec:
    return JudgeSpec(id=judge_id(name, kind), kind=kind, criterion=name, description=description, task=config.task,
                     model=config.model, base_url=config.base_url, rubric=rubric, api_key_env=config.api_key_env)


def generate_judges(config: GenerateConfig, examples_path: Path, out_dir: Path) -> list[Path]:
    """Generate the judges, write one Metric Card per judge into ``out_dir``, return the files written."""
    if not config.task.strip():
        raise UserError("describe the task with --task, e.g. \"English to Catalan news, meaning first\"")
    if config.n_single < 0 or config.n_rubric < 0 or config.n_single + config.n_rubric == 0:
        raise UserError("ask for at least one criterion or rubric (--criteria, --rubrics)")
    examples, scored_by = load_examples(examples_path)
    good, bad = best_and_worst(examples, config.per_side)
    specs = run_sync(_generate(config, "\n".join(e.text() for e in good), "\n".join(e.text() for e in bad),
                               scored_by))
    ids = [s.id for s in specs]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise GenerationError(f"the model proposed the same criterion twice: {', '.join(duplicated)}")
    return write_cards(specs, out_dir, generated_by=config.model)

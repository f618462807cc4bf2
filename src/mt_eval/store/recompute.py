"""The store's own card for a submitted one: its outputs rescored against the registered dataset.

A sealed card proves only that it is consistent with itself: anyone can score outputs against references of
their choosing, patch ``dataset.sha256`` and reseal (issue 21). So ``publish`` trusts nothing of a card but
its outputs (``results[].predicted``, by entry id, with their errors, latencies and usage) and its method's
identity: every text and entry fact (source, references, segment, difficulty, register, variants) and the
dataset block are replaced by the registered dataset's, and the card is rebuilt through the one scoring
pipeline (``store.rescore.rebuild_card`` → ``runcard.builder.build_card``) with this store's metric versions.

The store keeps the submission itself when the rebuild gives exactly it (every field but ``environment``,
the machine it ran on, and so the hash): its seal and signatures stay those of the card the submitter
holds. Otherwise it keeps its rebuilt card, sealed by it, and reports each difference in one line (dataset
fields, texts that differ from the registered ones, each metric whose value or version changed). A card
the store rebuilds from exactly its own texts and metric versions yet differently contradicts itself (it was
edited and resealed): it is refused with ``verify``'s line naming the field, as before datasets were registered.

Secret segments (Benchmark Spec §6.4/§9.5): a self-run card with an entry the registered dataset puts in
gold_standard or held_out is refused whatever segment the card claims for it; those scores come only
through governance (``store/sovereign.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mt_eval.errors import UserError
from mt_eval.store.datasets import RegisteredCorpus
from mt_eval.store.rescore import change_log, rebuild_card

if TYPE_CHECKING:
    from mt_eval.metrics.comet import CometConfig
    from mt_eval.metrics.judges.metric import JudgeMetric

IGNORED = ("environment", "run_card_hash")  # where the store's rebuild of an honest card may differ
DATASET_KEYS = ("id", "version", "language_pair", "source_language", "target_language", "entry_count",
                "entry_ids_sha256")
TEXT_KEYS = (("source", "sources"), ("reference", "references"), ("segment", "segments"),
             ("difficulty", "difficulties"))
SHOWN_IDS = 5


class CardRefused(UserError):
    """A card the store will not take: refused, nothing written (exit 1, like a failing ``verify``)."""

    exit_code = 1


@dataclass(frozen=True)
class Recomputed:
    """What the store keeps for a submission: ``card`` (the submission itself when ``recomputed`` is false),
    its statistics sidecar's bytes, and each difference between the submission and the store's rebuild."""

    card: dict[str, Any]
    statistics: bytes
    recomputed: bool
    differences: tuple[str, ...] = ()


def _ids(ids: Sequence[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:SHOWN_IDS])
    return shown + (f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else "")


def check_entries(card: Mapping[str, Any], registered: RegisteredCorpus, path: str | None = None, *,
                  allow_secret: bool = False) -> None:
    """Every entry of the card is an entry of the registered dataset whose texts the store has, once, and a
    public one unless ``allow_secret`` (a governance store); else ``CardRefused``."""
    ids = [int(r["entry_id"]) for r in card["results"]]
    name = f"{registered.summary.dataset_id}@{registered.summary.version}"
    if dupes := sorted(i for i, n in Counter(ids).items() if n > 1):
        raise CardRefused(f"refused: entries {_ids(dupes)} appear more than once in results[]", file=path)
    if not allow_secret and (secret := [i for i in ids if i in registered.secret]):
        segments = ", ".join(sorted({registered.secret[i] for i in secret}))
        raise CardRefused(
            f"refused: {len(secret)} of its entries ({_ids(secret)}) are in {name}'s {segments} segment: Benchmark "
            "Spec §6.4/§9.5 scores them only through governance, never on a self-run card", file=path,
            hint="score the public segments only (--segment development,diagnostic), or submit the method "
                 "through governance")  # fmt: skip
    if unknown := [i for i in ids if i not in registered.by_id]:
        raise CardRefused(f"refused: entries {_ids(unknown)} are not in the registered dataset {name} (or, being "
                          "secret, their texts are not in this store)", file=path)


def with_registered_texts(card: Mapping[str, Any], registered: RegisteredCorpus) -> dict[str, Any]:
    """``card`` with every entry's texts and facts, and its dataset block, taken from the registered dataset,
    and no glossary: what the store rebuilds (the outputs, usage, latencies and method are the card's own)."""
    info = registered.dataset.info
    results = []
    for r in card["results"]:
        e = registered.by_id[int(r["entry_id"])]
        results.append({**r, "source": e.source, "reference": e.reference, "references": list(e.references),
                        "difficulty": e.difficulty, "provenance": e.provenance.value, "segment": e.segment.value,
                        "register": e.register.value if e.register else None, "variants": list(e.variants),
                        "morphological_analysis": e.morphological_analysis})  # fmt: skip
    dataset = {**{k: v for k, v in card["dataset"].items() if k != "exposure"}, "id": info.id,
               "version": info.version, "language_pair": info.language_pair,
               "source_language": info.source_language, "target_language": info.target_language,
               "sha256": registered.dataset.sha256}  # fmt: skip
    if info.exposure:  # the test set's exposure is the registered one: a card claiming a later release (to pass
        dataset["exposure"] = info.exposure  # leaderboard --clean-only) is rebuilt with the true one
    # the glossary terminology_adherence (weighted in the composite) reads is the submitter's own file, and a
    # registered dataset carries none: rescored without it, the metric is null rather than self-awarded
    return {**card, "dataset": dataset, "results": results, "terminology": None}


def _show(value: Any) -> str:
    return f"{value:.6g}" if isinstance(value, float) else repr(value)


def _text_differences(card: Mapping[str, Any], registered: RegisteredCorpus) -> list[str]:
    """One line per kind of entry fact (sources, references, segments, difficulties) the card misstates."""
    lines = []
    total = len(card["results"])
    for key, plural in TEXT_KEYS:
        wrong = []
        for r in card["results"]:
            e = registered.by_id[int(r["entry_id"])]
            if key == "reference":
                mine = r.get("references") or [r.get("reference")]
                ok = list(mine) == e.all_references
            else:
                theirs = e.segment.value if key == "segment" else getattr(e, key)
                ok = r.get(key) == theirs
            if not ok:
                wrong.append(int(r["entry_id"]))
        if wrong:
            lines.append(f"results: {len(wrong)} of {total} entries' {plural} differ from the registered dataset's "
                         f"(entries {_ids(wrong)})")
    return lines


def differences(card: Mapping[str, Any], new: Mapping[str, Any], registered: RegisteredCorpus) -> list[str]:
    """Each way the submission differs from the store's rebuild, one line each: dataset fields, misstated
    entry facts, every metric whose value or version changed, the composite, tier, rule and profile."""
    lines = [f"dataset.{k}: card says {card['dataset'].get(k)!r}, registered {new['dataset'].get(k)!r}"
             for k in DATASET_KEYS if card["dataset"].get(k) != new["dataset"].get(k)]
    lines += _text_differences(card, registered)
    log = change_log(card, new)
    for metric, change in (log.get("metrics") or {}).items():
        version = " (metric version changed)" if change["old_signature"] != change["new_signature"] else ""
        lines.append(f"{metric}: card says {_show(change['old'])}, recomputed {_show(change['new'])}{version}")
    lines += [f"{key}: card says {_show(change['old'])}, recomputed {_show(change['new'])}"
              for key, change in (log.get("scores") or {}).items()]
    versions = log["harness_version"]
    if versions["old"] != versions["new"]:
        lines.append(f"harness_version: card says {versions['old']!r}, the store runs {versions['new']!r}")
    covered = {"dataset", "results", "scores", "metrics", "harness_version", "fingerprint", "statistics", *IGNORED}
    lines += [f"{key}: differs from the store's rescoring" for key in sorted(set(card) | set(new))
              if key not in covered and card.get(key) != new.get(key)]
    return lines


def _same_inputs(card: Mapping[str, Any], new: Mapping[str, Any], registered: RegisteredCorpus) -> bool:
    """Whether the store rebuilt ``card`` from exactly its own texts, dataset block and metric versions: then
    a difference is the card contradicting itself (edited and resealed), which ``verify`` refuses too."""
    return (not any(card["dataset"].get(k) != new["dataset"].get(k) for k in DATASET_KEYS)
            and not _text_differences(card, registered) and card.get("harness_version") == new.get("harness_version")
            and all((card.get("metrics") or {}).get(m, {}).get("signature") == info.get("signature")
                    for m, info in (new.get("metrics") or {}).items()))  # fmt: skip


def _comparable(card: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in card.items() if k not in IGNORED}


def recompute(card: Mapping[str, Any], registered: RegisteredCorpus, *, judges: Sequence[JudgeMetric] = (),
              comet: CometConfig | None = None, path: str | None = None, allow_secret: bool = False) -> Recomputed:
    """The card the store keeps for the submission ``card`` on the ``registered`` dataset (``CardRefused``
    when an entry is unknown, repeated, or secret outside a governance store: ``allow_secret``).
    ``judges``/``comet``: as ``rebuild_card`` takes them."""
    from mt_eval.scoring.calibrated import from_card

    check_entries(card, registered, path, allow_secret=allow_secret)
    try:
        from_card(card)  # a calibrated profile's block, checked against its hash (rebuild_card composes under it)
    except UserError as exc:
        raise CardRefused(f"refused: {exc.message}", file=path) from None
    new, sidecar = rebuild_card(with_registered_texts(card, registered), judges, comet)
    if _comparable(card) == _comparable(new):
        return Recomputed(dict(card), sidecar, False)
    if _same_inputs(card, new, registered):  # so the rebuild is what verify computes: the card contradicts itself
        from mt_eval.runcard.verify import verify_card  # run only now, for its line naming the changed field

        if problems := verify_card(dict(card), path, judges=judges, comet=comet):
            raise CardRefused(f"refused, does not verify: {problems[0]}", file=path)
    found = differences(card, new, registered)
    if not found:  # e.g. per-entry FST facts or warnings: still not what the store computes
        keys = sorted(k for k in set(card) | set(new) if k not in IGNORED and card.get(k) != new.get(k))
        found = [f"{k}: differs from the store's rescoring" for k in keys]
    return Recomputed(new, sidecar, True, tuple(found))

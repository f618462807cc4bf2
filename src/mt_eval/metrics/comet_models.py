"""The named neural-metric models ``--comet-model NAME`` accepts, with the languages each was trained on.

A learned metric is only as good as the human judgments it was trained on: COMET's WMT models learned from
direct assessments of a few dozen (mostly high-resource) languages, AfriCOMET from African-language
judgments on an Africa-centric encoder. Scoring a language outside that set is extrapolation, which the
spec's low-resource caveat asks the card to say. So each model here records its training languages (BCP-47
primary subtags, as the language cards name them), and ``validated_for`` tells whether a target is among
them; the card carries the answer (``metrics.comet.CometScore.card_block``).

Models are never downloaded. A NAME resolves to a COMET model directory (``checkpoints/model.ckpt`` beside
``hparams.yaml``) found, in order, in ``$MT_EVAL_MODELS/<name>`` or in the Hugging Face cache where
``comet.download_model`` keeps what it fetched (``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
``~/.cache/huggingface/hub``: ``models--<org>--<repo>/snapshots/<revision>``). ``auto`` picks AfriCOMET for a
target among its African languages and wmt22-comet-da otherwise.

Sources of the language lists: the WMT17-20 news task language pairs behind wmt22-comet-da's training data
(Rei et al., WMT 2022), plus MLQE-PE's for CometKiwi; AfriCOMET (Wang et al., NAACL 2024, arXiv 2311.09828):
the AfriMTE languages with judgments and AfroXLMR-large's African pre-training languages.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from mt_eval.errors import UserError
from mt_eval.languages.card import normalize_code

AUTO = "auto"
MODELS_ENV = "MT_EVAL_MODELS"
CKPT = Path("checkpoints") / "model.ckpt"

_WMT_DA = frozenset({"en", "cs", "de", "et", "fi", "fr", "gu", "iu", "ja", "kk", "km", "lt", "lv", "pl", "ps", "ru",
                     "ta", "tr", "zh"})  # WMT17-20 direct assessments
_MLQE_PE = frozenset({"ne", "ro", "si"})  # the QE data CometKiwi adds (en-de, en-zh, et-en, ne-en, ro-en, ru-en, si-en)
AFRICAN = frozenset({"af", "am", "arz", "ha", "ig", "kik", "rw", "kin", "luo", "mg", "ny", "om", "pcm", "rn", "sn",
                     "so", "st", "sw", "tw", "twi", "xh", "yo", "zu"})
"""AfriCOMET's African languages: AfriMTE's judged languages (am, ha, ig, kik, rw, luo, so, sw, tw, xh, yo, zu
and Egyptian Arabic) with AfroXLMR-large's other African pre-training languages (af, mg, ny, om, pcm, rn, sn, st).
Kinyarwanda and Twi under both codes: the language cards keep ``kin`` and ``twi`` where BCP-47 prefers ``rw``/``tw``."""


def primary(code: str) -> str:
    """The canonical primary language subtag (``yor`` → ``yo``, ``de-AT`` → ``de``), as the language cards name it."""
    return normalize_code(code).split("-")[0].lower()


@dataclass(frozen=True)
class NamedModel:
    """One registered model: where it comes from, what it reads, which languages it was trained on."""

    name: str
    hub_id: str  # the Hugging Face repository it is published as (named on the card; never fetched here)
    languages: frozenset[str]
    reference_free: bool = False  # a quality-estimation model: reads (source, output), no reference
    needs: str | None = None  # set when this harness cannot run the model: what it would take
    aliases: tuple[str, ...] = ()

    def validated_for(self, target: str) -> bool:
        """Whether the target language (a BCP-47 code) is among the model's training languages."""
        return primary(target) in self.languages


MODELS: dict[str, NamedModel] = {m.name: m for m in (
    NamedModel("wmt22-comet-da", "Unbabel/wmt22-comet-da", _WMT_DA, aliases=("comet", "comet-da")),
    NamedModel("africomet-stl", "masakhane/africomet-stl", AFRICAN | {"en", "fr"}, aliases=("africomet",)),
    NamedModel("africomet-qe-stl", "masakhane/africomet-qe-stl", AFRICAN | {"en", "fr"}, reference_free=True,
               aliases=("africomet-qe",)),
    NamedModel("wmt22-cometkiwi-da", "Unbabel/wmt22-cometkiwi-da", _WMT_DA | _MLQE_PE, reference_free=True,
               aliases=("cometkiwi", "comet-kiwi", "kiwi")),
    NamedModel("metricx-24", "google/metricx-24-hybrid-large-v2p6", _WMT_DA, aliases=("metricx",),
               needs="MetricX is an mT5 regression model run by google-research/metricx's own code, not a COMET "
                     "checkpoint; this harness has no MetricX runner yet (score it with that code and import the "
                     "values, or use a COMET model)"),
)}


def lookup(name: str) -> NamedModel | None:
    """The registered model called ``name`` or one of its aliases (case-insensitive), else None."""
    key = name.strip().lower()
    for model in MODELS.values():
        if key == model.name or key in model.aliases:
            return model
    return None


def choose(target: str) -> NamedModel:
    """``auto``'s choice: AfriCOMET for a target among its African languages, wmt22-comet-da otherwise."""
    africomet = MODELS["africomet-stl"]
    return africomet if primary(target) in AFRICAN else MODELS["wmt22-comet-da"]


def search_dirs() -> list[Path]:
    """Where a NAME is looked for: ``$MT_EVAL_MODELS``, then the Hugging Face hub cache."""
    dirs = [Path(p).expanduser() for p in os.environ.get(MODELS_ENV, "").split(os.pathsep) if p]
    hub = os.environ.get("HF_HUB_CACHE") or (Path(os.environ["HF_HOME"]) / "hub" if os.environ.get("HF_HOME")
                                              else Path.home() / ".cache" / "huggingface" / "hub")
    return [*dirs, Path(hub)]


def locate(model: NamedModel) -> Path:
    """The model's directory on this machine, or one line saying where it was looked for and how to put it there."""
    if model.needs:
        raise UserError(f"--comet-model {model.name}: {model.needs}", field="comet_model")
    places = search_dirs()
    for base in places[:-1]:
        for name in (model.name, model.hub_id.replace("/", "--")):
            if (base / name / CKPT).is_file():
                return base / name
    snapshot = _hub_snapshot(places[-1] / f"models--{model.hub_id.replace('/', '--')}")
    if snapshot is not None:
        return snapshot
    raise UserError(f"--comet-model {model.name}: no checkpoint on this machine (looked in "
                    f"{', '.join(str(p) for p in places)}; models are never downloaded by mt-eval)",
                    field="comet_model", hint=f"put the model directory at ${MODELS_ENV}/{model.name} (from "
                    f"huggingface.co/{model.hub_id}), or give its path")


def _hub_snapshot(repo: Path) -> Path | None:
    """The cached snapshot ``refs/main`` points at, else the newest one holding a checkpoint."""
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    if ref.is_file() and (snapshots / ref.read_text(encoding="utf-8").strip() / CKPT).is_file():
        return snapshots / ref.read_text(encoding="utf-8").strip()
    found = [p for p in snapshots.glob("*") if (p / CKPT).is_file()] if snapshots.is_dir() else []
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def reads_reference(hparams: Path) -> bool:
    """Whether the checkpoint's model reads a reference (False: a quality-estimation model), from COMET's
    ``hparams.yaml``: its class and, for a unified model, the input segments it was trained on."""
    import yaml  # unbabel-comet's dependency: only reached with a checkpoint in hand

    data = yaml.safe_load(hparams.read_text(encoding="utf-8")) or {}
    kind = str(data.get("class_identifier", ""))
    if kind == "referenceless_regression_metric":
        return False
    segments = data.get("input_segments")
    return not (kind == "unified_metric" and isinstance(segments, list) and "ref" not in segments)

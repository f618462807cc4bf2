"""``comet_score`` (Scoring Spec §2.3, Appendix A): Unbabel's learned MT metric, from a local checkpoint.

COMET is trained on WMT human judgments of high-resource, mostly European language pairs; for the
low-resource languages this harness exists for it extrapolates, so the spec reports it *with a
low-resource warning flag* and keeps it *out of every composite*. Both are honoured here: the metric
is in no weight table (``scoring/profiles.py`` weights only the metrics it lists, and ``comet_score``
is listed nowhere but the card's score keys), and ``CometConfig.card_block`` carries
``low_resource_warning: true`` with the warning's text (``LOW_RESOURCE_WARNING``) for the card.

Opt-in and offline: the metric exists only with a ``CometConfig`` (``--comet-model PATH``), which names a
checkpoint on this machine (``…/checkpoints/model.ckpt`` beside ``…/hparams.yaml``, as COMET saves and as
a downloaded model is laid out); nothing is ever downloaded (``local_files_only``: the checkpoint's
encoder, ``pretrained_model`` in its hparams, must be a local directory or already in the Hugging Face
cache). ``unbabel-comet`` is imported only when a checkpoint is loaded (``pip install 'mt-eval[comet]'``).

Scoring goes through COMET's own public API, ``comet.load_from_checkpoint(path).predict(samples, gpus=0)``,
one (source, output, reference) triple per reference; an entry with several references takes the best
(as ``semantic_score`` does). An empty output (a failed entry, docs/decisions.md §1) scores 0 without
reaching the model: COMET on an empty string is a number about nothing, and it would be whatever the
model makes of padding (often more than a bad translation gets), so a failing method would be rewarded.
0 is the bottom of the DA-style scale current COMET models predict on (roughly 0–1); for older z-score
models whose scores go negative, an empty output is not necessarily the worst value, which the metric
card says. Statistics are (score, 1) per entry: the corpus value is the mean, as ``predict``'s
``system_score``, and bootstrap CIs and paired tests come from the generic code.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard
from mt_eval.metrics.base import Level, MetricContext, Status
from mt_eval.metrics.comet_models import AUTO, MODELS, choose, locate, lookup, reads_reference
from mt_eval.metrics.rates import RatioMetric

EXTRA = "pip install 'mt-eval[comet]'"
DEFAULT_BATCH = 16
CHECKPOINT = Path("checkpoints") / "model.ckpt"  # where COMET keeps the weights inside a model directory
EMPTY_SCORE = 0.0
LOW_RESOURCE_WARNING = (
    "comet_score is reported for transparency only: COMET is trained on WMT judgments of high-resource "
    "(mostly European) language pairs and is not calibrated for low-resource languages; it is not in the "
    "composite (Scoring Spec §2.3, Appendix A)")
# what prints while COMET loads and predicts (Lightning's trainer banner and tips, COMET's "Encoder model frozen")
_CHATTY_LOGGERS = ("pytorch_lightning", "lightning", "lightning.pytorch", "lightning_fabric", "comet")


def comet_version() -> str:
    """The installed unbabel-comet's version ("absent" when it is not installed)."""
    try:
        return metadata.version("unbabel-comet")
    except metadata.PackageNotFoundError:
        return "absent"


def installed() -> bool:
    """Whether ``import comet`` finds unbabel-comet: a regular package, not a namespace package that merely
    happens to be called ``comet`` (a directory of that name on ``sys.path``, such as this project's tests/comet)."""
    spec = importlib.util.find_spec("comet")
    return spec is not None and spec.origin is not None


def not_installed() -> UserError:
    return UserError("comet_score needs the unbabel-comet package, which is not installed here", hint=EXTRA,
                     field="comet_model")


_SHA256: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """sha256 of a file, memoised per (path, size, mtime) in this process (a COMET checkpoint is 2 GB)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _SHA256:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        _SHA256[key] = digest.hexdigest()
    return _SHA256[key]


@dataclass(frozen=True)
class CometConfig:
    """The COMET checkpoint a run scores ``comet_score`` with (``--comet-model NAME|DIR|auto``)."""

    checkpoint: str  # absolute path of the .ckpt file (links kept: COMET finds hparams.yaml two levels up)
    sha256: str  # of the checkpoint file: two checkpoints at one path are two metrics
    version: str  # unbabel-comet's version
    batch_size: int = DEFAULT_BATCH
    registered: str | None = None  # the registry's name for it (metrics/comet_models.py), None: unknown model
    reference_free: bool = False  # a quality-estimation model: scored on (source, output) only
    auto: bool = False  # ``auto``, not chosen yet: ``CometScore.prepare`` picks the model for the run's target

    @classmethod
    def parse(cls, path: str, batch_size: int = DEFAULT_BATCH, target: str | None = None) -> CometConfig:
        """A checked ``--comet-model``: a registered NAME (found on this machine, ``comet_models.locate``),
        ``auto`` (chosen for ``target``; without it, chosen when the run's target is known), or a COMET model
        directory (holding ``checkpoints/model.ckpt``) or the ``.ckpt`` file itself, with ``hparams.yaml`` two
        levels up; and unbabel-comet installed."""
        if not path or not path.strip():
            raise UserError("--comet-model needs a path to a COMET checkpoint or a registered model name",
                            field="comet_model")
        if path.strip().lower() == AUTO:
            if target is None:
                if not installed():
                    raise not_installed()
                return cls("", "", comet_version(), batch_size, auto=True)
            path = str(locate(choose(target)))
        elif (named := lookup(path)) is not None and not Path(path).expanduser().exists():
            path = str(locate(named))
        given = Path(os.path.abspath(Path(path).expanduser()))  # not resolve(): a Hugging Face cache links
        ckpt = given / CHECKPOINT if given.is_dir() else given  # model.ckpt to a blob that has no hparams.yaml
        if not ckpt.is_file():
            what = f"no {CHECKPOINT} in the directory" if given.is_dir() else "no such file"
            raise UserError(f"--comet-model {path!r}: {what} (COMET checkpoints are read from this machine, "
                            "never downloaded)", field="comet_model")
        if ckpt.suffix != ".ckpt":
            raise UserError(f"--comet-model {path!r}: not a COMET checkpoint (expected a .ckpt file or a model "
                            f"directory holding {CHECKPOINT})", field="comet_model")
        if len(ckpt.parents) < 2 or not (ckpt.parents[1] / "hparams.yaml").is_file():
            raise UserError(f"--comet-model {path!r}: no hparams.yaml beside the checkpoints/ folder (COMET "
                            "needs it to know the model's class)", field="comet_model")
        if not 1 <= batch_size <= 1024:
            raise UserError(f"COMET batch size must be between 1 and 1024, not {batch_size}", field="comet_model")
        if not installed():
            raise not_installed()
        model = lookup(cls._name_of(ckpt))
        return cls(str(ckpt), file_sha256(ckpt), comet_version(), batch_size, model.name if model else None,
                   not reads_reference(ckpt.parents[1] / "hparams.yaml"))

    @staticmethod
    def _name_of(ckpt: Path) -> str:
        """The registry name a checkpoint's directory suggests (``…/africomet-stl/checkpoints/model.ckpt``, or the
        hub cache's ``models--masakhane--africomet-stl``)."""
        parents = ckpt.parents
        if len(parents) > 3 and parents[2].name == "snapshots" and parents[3].name.startswith("models--"):
            hub_id = parents[3].name.removeprefix("models--").replace("--", "/")
            return next((m.name for m in MODELS.values() if m.hub_id == hub_id), hub_id)
        return parents[1].name if len(parents) > 1 else ckpt.stem

    @property
    def model_name(self) -> str:
        """The model's name: its directory's (``wmt22-comet-da/checkpoints/model.ckpt`` → ``wmt22-comet-da``), or
        the repository's for a Hugging Face cache (``models--Unbabel--wmt22-comet-da/snapshots/<commit>/…`` →
        ``Unbabel/wmt22-comet-da``)."""
        ckpt = Path(self.checkpoint)
        if ckpt.parent.name != "checkpoints":
            return ckpt.stem
        parents = ckpt.parents
        if len(parents) > 3 and parents[2].name == "snapshots" and parents[3].name.startswith("models--"):
            return parents[3].name.removeprefix("models--").replace("--", "/")
        return parents[1].name

    def card_block(self, target: str | None = None) -> dict[str, Any]:
        """What the run card records (never the path: it names a directory on someone's machine), and, for the
        run's ``target``, whether the model was trained on that language (the spec's low-resource caveat)."""
        block: dict[str, Any] = {
            "comet_model": self.model_name, "checkpoint_sha256": self.sha256, "comet_version": self.version,
            "low_resource_warning": True, "warning": LOW_RESOURCE_WARNING, "in_composite": False,
            "registered_model": self.registered, "reference_free": self.reference_free}
        model = MODELS.get(self.registered or "")
        if model is not None:
            block["training_languages"] = sorted(model.languages)
        if target is not None:
            validated = model is not None and model.validated_for(target)
            block["validated_for_target"] = validated
            if not validated:
                why = (f"{model.name} was trained on judgments for {len(model.languages)} languages, not {target}"
                       if model else "its training languages are unknown (not a registered model)")
                block["caveat"] = f"not validated for this language: {why}"
        return block


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Lightning's banners and tips and COMET's info lines go nowhere while a model loads or predicts."""
    loggers = [logging.getLogger(name) for name in _CHATTY_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


_LOADED: dict[tuple[str, str], Any] = {}


def load_model(config: CometConfig) -> Any:
    """The COMET model, loaded once per process and checkpoint content."""
    key = (config.checkpoint, config.sha256)
    if key in _LOADED:
        return _LOADED[key]
    try:
        with _quiet():  # torchmetrics 0.10 warns on import that pkg_resources is deprecated
            import comet
    except ImportError as exc:
        raise not_installed() from exc
    if not installed():
        raise not_installed()
    if file_sha256(Path(config.checkpoint)) != config.sha256:
        raise UserError(f"the COMET checkpoint {config.checkpoint} changed since it was chosen (sha256 "
                        f"{config.sha256[:12]}…)", field="comet_model")
    try:
        with _quiet():
            model = comet.load_from_checkpoint(config.checkpoint, local_files_only=True)
    except OSError as exc:  # the encoder named by hparams.yaml (pretrained_model) is not on this machine
        raise UserError(f"COMET checkpoint {config.model_name!r}: its encoder could not be loaded offline ({exc})"
                        .replace("\n", " "), hint="pretrained_model in hparams.yaml must be a local directory "
                        "or already in the Hugging Face cache", field="comet_model") from exc
    _LOADED[key] = model
    return model


class CometScore(RatioMetric):
    """Statistics (COMET score, 1) per entry: the mean, as a ratio of sums. Never weighted in a composite."""

    id = "comet_score"
    scale = 1.0
    higher_is_better = True
    level = Level.BOTH
    status = Status.IMPLEMENTED
    reads_source = True  # COMET reads (source, output, reference): null in a run without sources
    cost = 5000.0  # xlm-roberta-large on a CPU: a few segments a second, the heaviest metric by far
    recompute_tolerance = 0.001  # torch's CPU kernels differ between instruction sets (decisions §53)

    card_section = "comet"  # an opt-in metric (``metrics.opt_in``): the card's ``comet`` block

    def __init__(self, config: CometConfig) -> None:
        self.config = config
        self._memo: dict[tuple[str, str, str], float] = {}  # (src, mt, ref) -> score, filled by ``prefetch``
        self._target: str | None = None  # the run's target language, once scoring knows it

    def bind(self, target: LanguageCard) -> None:
        """The run's target: ``auto`` chooses its model now, and the card says whether the model knows it."""
        self._target = target.code
        if self.config.auto:
            self.config = CometConfig.parse(AUTO, self.config.batch_size, target=target.code)

    def prepare(self, ctx: MetricContext) -> None:
        self.bind(ctx.target)

    def card_block(self) -> dict[str, Any]:
        return self.config.card_block(self._target)

    def preflight(self, entries: Sequence[Any]) -> None:
        """Nothing left to check: ``CometConfig.parse`` found the checkpoint and unbabel-comet, and the model
        runs on this machine."""

    def signature(self, target: LanguageCard) -> str | None:
        if self.config.auto:
            self.bind(target)
        refs = "none" if self.config.reference_free else "max"
        return (f"comet:{self.config.version}|model:{self.config.model_name}|sha256:{self.config.sha256}"
                f"|refs:{refs}|empty:{EMPTY_SCORE:g}|warning:low-resource")

    def _triples(self, hypotheses: Sequence[str], ctx: MetricContext) -> list[tuple[int, tuple[str, str, str]]]:
        """(entry index, (source, output, reference)) for every non-empty output and each of its references (one
        triple with an empty reference for a quality-estimation model, which never reads it)."""
        return [(i, (ctx.entries[i].source, h, r)) for i, h in enumerate(hypotheses) if h.strip()
                for r in ([""] if self.config.reference_free else ctx.entries[i].all_references)]

    def prefetch(self, hypotheses: Sequence[str], ctx: MetricContext) -> None:
        """Score every triple ``statistics`` will need, here: torch must not first run in a forked worker
        (scoring/extraction.py), and the model is loaded only when something is left to score."""
        self.bind(ctx.target)  # prefetch may come before prepare: ``auto`` must have chosen its model by now
        missing = list(dict.fromkeys(t for _, t in self._triples(hypotheses, ctx) if t not in self._memo))
        if not missing:
            return
        model = load_model(self.config)
        samples = [{"src": s, "mt": m, **({} if self.config.reference_free else {"ref": r})} for s, m, r in missing]
        with _quiet():
            prediction = model.predict(samples, batch_size=self.config.batch_size, gpus=0, progress_bar=False)
        scores = [float(x) for x in prediction.scores]
        if len(scores) != len(missing) or not all(np.isfinite(scores)):
            raise UserError(f"COMET model {self.config.model_name!r} returned {len(scores)} scores for "
                            f"{len(missing)} segments, or a score that is not a finite number", field="comet_model")
        self._memo.update(zip(missing, scores, strict=True))

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> np.ndarray:
        n = len(hypotheses)
        stats = np.zeros((n, 2))
        stats[:, 1] = 1.0
        stats[:, 0] = EMPTY_SCORE  # an empty output scores EMPTY_SCORE, never shown to the model
        self.bind(ctx.target)
        triples = self._triples(hypotheses, ctx)
        if not triples:
            return stats
        self.prefetch(hypotheses, ctx)
        best = np.full(n, -np.inf)
        for i, triple in triples:
            best[i] = max(best[i], self._memo[triple])
        scored = np.isfinite(best)
        stats[scored, 0] = best[scored]
        return stats

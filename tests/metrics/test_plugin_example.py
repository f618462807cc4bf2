"""The docs/plugins.md example, installed through a real entry-point declaration.

``plugin_example/pyproject.toml`` declares the three entry points; ``pip install`` would turn those
tables into ``<dist>.dist-info/entry_points.txt``. The fixture writes exactly that file (generated
from the pyproject, so the two cannot drift) into a temporary directory on ``sys.path``; from then
on ``importlib.metadata.entry_points`` — the call the registries make — finds the plugin.
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from mt_eval import plugins
from mt_eval.analyzers.registry import open_analyser
from mt_eval.api import score_predictions
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import LanguageCard, clear_cache, language_card
from mt_eval.metrics import registry
from mt_eval.metrics.base import Level, Metric, MetricContext
from mt_eval.metrics.hooks import apply_hooks, available_hooks
from mt_eval.metrics.registry import available_metrics
from mt_eval.scoring.extraction import extract_statistics
from mt_eval.scoring.intervals import BootstrapConfig

PLUGIN_DIR = Path(__file__).with_name("plugin_example")


def _entry_points_txt(pyproject: Path) -> str:
    tables = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["entry-points"]
    return "".join(f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
                   for group, eps in tables.items())


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    project = tomllib.loads((PLUGIN_DIR / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    site = tmp_path / "site-packages"
    dist = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(_entry_points_txt(PLUGIN_DIR / "pyproject.toml"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(PLUGIN_DIR))  # the module itself
    monkeypatch.syspath_prepend(str(site))  # its distribution metadata
    plugins.clear_cache()  # entry points are scanned once per process: rescan with the plugin
    yield site
    plugins.clear_cache()  # and forget it again once it is off sys.path


def test_not_registered_without_installation() -> None:
    assert "source_copy_rate" not in available_metrics()
    assert "strip_preamble" not in available_hooks()


def test_plugin_metric_appears_in_a_run(installed: Path, tmp_path: Path) -> None:
    assert "source_copy_rate" in available_metrics()
    sources = ["Good morning.", "The river is high.", "Thank you very much."]
    dataset = Dataset(
        info=DatasetInfo(id="plugin-demo", source_language="en", target_language="fr"),
        entries=[Entry(id=i + 1, source=s, reference=r) for i, (s, r) in
                 enumerate(zip(sources, ["Bonjour.", "La rivière est haute.", "Merci beaucoup."], strict=True))],
        sha256="0" * 64,
    )
    outputs = tmp_path / "out.txt"
    outputs.write_text("Bonjour.\nThe river is high.\nMerci beaucoup.\n", encoding="utf-8")  # line 2 untranslated
    scored = score_predictions(dataset, outputs, out=tmp_path / "card.json", bootstrap=BootstrapConfig(n_resamples=0))
    card, path = scored.card, scored.path
    assert path is not None
    meta = card["metrics"]["source_copy_rate"]
    assert meta == {"status": "implemented", "level": "both", "scale": 1.0, "higher_is_better": False,
                    "weight": None, "signature": None}  # not in a profile: reported, never in the composite
    assert [r["metrics"]["source_copy_rate"] for r in card["results"]] == [0.0, 1.0, 0.0]
    assert json.loads(path.read_text(encoding="utf-8"))["metrics"]["source_copy_rate"]["weight"] is None


def test_plugin_metric_in_the_metric_table(installed: Path) -> None:
    from mt_eval.methods.base import Translation
    from mt_eval.scoring.pipeline import score_outputs

    dataset = Dataset(info=DatasetInfo(id="d", source_language="en", target_language="es"),
                      entries=[Entry(id=1, source="Hello.", reference="Hola."),
                               Entry(id=2, source="Yes.", reference="Sí.")], sha256="0" * 64)
    translations = [Translation(entry_id=1, text="Hello."), Translation(entry_id=2, text="Sí.")]
    table, _ = score_outputs(dataset, translations, language_card("es"), language_card("en"),
                                  only=["exact_match_rate", "source_copy_rate"])
    assert table.values() == {"exact_match_rate": 0.5, "source_copy_rate": 0.5}


def test_plugin_hook_runs_before_the_repaired_compliance_pass(installed: Path) -> None:
    hooks = available_hooks()
    assert list(hooks)[:2] == ["restore_placeholders", "normalise_quotes"] and "strip_preamble" in hooks
    es = language_card("es")
    # built-ins first (the dropped placeholder comes back), then the plugin strips the label
    assert apply_hooks("Traducción: Hola", "Hello {name}", es) == "Hola {name}"
    assert apply_hooks("Translation: «Hola», {name}", "“Hello”, {name}", es) == "«Hola», {name}"


def test_plugin_analyser_kind(installed: Path, tmp_path: Path) -> None:
    wordlist = tmp_path / "words.txt"
    wordlist.write_text("niwâpamâw\natim\n", encoding="utf-8")
    analyser = open_analyser(f"wordlist:{wordlist}")
    assert analyser.kind == "wordlist"
    assert analyser.analyse("atim") == ("atim<wl>",) and analyser.analyse("dog") == ()
    assert analyser.accepts("Atim", sentence_initial=True)


def test_card_can_declare_a_plugin_analyser(installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wordlist = tmp_path / "words.txt"
    wordlist.write_text("niwâpamâw\natim\n", encoding="utf-8")
    cards = tmp_path / "cards"
    cards.mkdir()
    (cards / "crk.json").write_text(json.dumps({"code": "crk", "name": "Plains Cree", "scripts": ["Latn"],
                                                "analyser": f"wordlist:{wordlist}"}), encoding="utf-8")
    monkeypatch.setenv("MT_EVAL_LANGUAGE_CARDS", str(cards))
    clear_cache()
    try:
        assert language_card("crk").profile == "A"
    finally:
        monkeypatch.delenv("MT_EVAL_LANGUAGE_CARDS")
        clear_cache()


def test_scan_is_cached_until_cleared(installed: Path) -> None:
    assert "source_copy_rate" in available_metrics()
    # the cached scan does not see the plugin leave sys.path; clear_cache() makes it rescan
    sys.path.remove(str(installed))
    assert "source_copy_rate" in available_metrics()
    plugins.clear_cache()
    assert "source_copy_rate" not in available_metrics()
    sys.path.insert(0, str(installed))  # monkeypatch removes it again


class DuckRate:
    """A plugin metric that satisfies the protocol's required members without inheriting MetricBase."""

    id = "duck_rate"
    scale = 1.0
    higher_is_better = True
    level = "both"
    status = "implemented"

    def applies_to(self, target: LanguageCard) -> bool:
        return True

    def statistics(self, hypotheses: Sequence[str], ctx: MetricContext) -> list[list[float]]:
        return [[float(h.startswith("B")), 1.0] for h in hypotheses]

    def aggregate(self, sums: np.ndarray) -> np.ndarray:
        return sums[..., 0] / sums[..., 1]

    def entry_values(self, stats: np.ndarray) -> np.ndarray | None:
        return self.aggregate(stats)


def test_a_plugin_need_not_inherit_the_base_class(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._BUILTINS, "duck_rate", DuckRate)
    (metric,) = registry.metrics_for(language_card("fr"), ["duck_rate"])
    assert isinstance(metric, Metric) and metric.cost == 1.0 and metric.derives_from is None
    assert metric.signature(language_card("fr")) is None and metric.level is Level.BOTH
    ctx = MetricContext([Entry(id=1, source="a", reference="b"), Entry(id=2, source="c", reference="d")],
                        language_card("fr"), language_card("en"))
    stats = extract_statistics([metric], ["Bonjour", "Salut"], ctx)["duck_rate"]
    assert stats.dtype == np.float64 and float(metric.aggregate(stats.sum(axis=0))) == 0.5


def test_a_plugin_missing_a_member_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._BUILTINS, "duck_rate", type("Half", (), {"id": "duck_rate", "scale": 1.0}))
    with pytest.raises(UserError, match="lacks higher_is_better, level, status, applies_to, statistics"):
        registry.metrics_for(language_card("fr"), ["duck_rate"])


def test_a_plugin_id_must_match_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry._BUILTINS, "other_name", DuckRate)
    with pytest.raises(UserError, match="registered as 'other_name' has id 'duck_rate'"):
        registry.metrics_for(language_card("fr"), ["other_name"])

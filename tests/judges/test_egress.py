"""No metric whose egress is remote scores a secret (gold_standard/held_out) entry: checked where the
scoring pipeline chooses its metrics, so a plugin installed through a real entry point is covered too."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from mt_eval import plugins
from mt_eval.corpus.models import Dataset, DatasetInfo, Entry
from mt_eval.errors import UserError
from mt_eval.languages.card import language_card
from mt_eval.methods.base import Translation
from mt_eval.scoring.egress import metric_egress
from mt_eval.scoring.pipeline import score_outputs

PLUGIN = textwrap.dedent('''
    import numpy as np

    class Probe:
        """A plugin metric that says it sends text away; it records every output it was given."""
        id = "remote_probe_rate"
        scale = 1.0
        higher_is_better = True
        level = "both"
        status = "implemented"
        egress = "remote"
        seen = []

        def applies_to(self, target):
            return True

        def statistics(self, hypotheses, ctx):
            Probe.seen.extend(hypotheses)
            return np.ones((len(hypotheses), 2))

        def aggregate(self, sums):
            return sums[..., 0] / sums[..., 1]

        def entry_values(self, stats):
            return stats[:, 0] / stats[:, 1]
''')


@pytest.fixture
def probe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type]:
    site = tmp_path / "site"
    dist = site / "remote_probe-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: remote-probe\nVersion: 1.0\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text("[mt_eval.metrics]\nremote_probe_rate = remote_probe:Probe\n",
                                           encoding="utf-8")
    (site / "remote_probe.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    plugins.clear_cache()
    import remote_probe

    remote_probe.Probe.seen.clear()
    yield remote_probe.Probe
    plugins.clear_cache()


def _dataset(segments: list[str]) -> Dataset:
    entries = [Entry(id=i + 1, source=f"Source {i}.", reference=f"Referencia {i}.", segment=s)
               for i, s in enumerate(segments)]
    return Dataset(info=DatasetInfo(id="egress", source_language="en", target_language="es"), entries=entries,
                   sha256="0" * 64)


def _score(dataset: Dataset, only: list[str] | None = None) -> list[str]:
    translations = [Translation(e.id, f"Salida {e.id}.") for e in dataset.entries]
    table, _ = score_outputs(dataset, translations, language_card("es"), language_card("en"), only=only)
    return list(table.metrics)


@pytest.mark.parametrize("secret", ["held_out", "gold_standard"])
def test_a_remote_plugin_metric_never_scores_a_secret_entry(probe: type, secret: str) -> None:
    dataset = _dataset(["development", secret, "diagnostic"])
    with pytest.raises(UserError, match=r"1 secret \(gold_standard/held_out\) entries would be sent off this "
                       r"machine by remote_probe_rate \(egress: remote\)"):
        _score(dataset, only=["chrf", "remote_probe_rate"])
    assert probe.seen == []  # refused before the metric saw a single output


def test_the_same_plugin_scores_public_entries_and_local_metrics_score_secret_ones(probe: type) -> None:
    assert "remote_probe_rate" in _score(_dataset(["development", "diagnostic"]), only=["remote_probe_rate"])
    assert probe.seen == ["Salida 1.", "Salida 2."]
    # every built-in is local (its metric card says so): secret entries are scored as before
    assert "chrf" in _score(_dataset(["held_out", "gold_standard"]), only=["chrf", "exact_match_rate"])


def test_egress_is_read_from_the_metric_then_its_card(probe: type) -> None:
    from mt_eval.metrics.registry import as_metric
    from mt_eval.metrics.sacre import ChrF

    assert metric_egress(as_metric("remote_probe_rate", probe())) == "remote"  # through PluginMetric.inner
    assert metric_egress(ChrF()) == "local"  # from metrics/cards/chrf.toml

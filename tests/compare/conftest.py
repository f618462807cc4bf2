"""Session fixtures: real cards over NTREX-128 English→Spanish (first 300 segments).

Cards: ``a``, ``b``, ``near_a`` (degraded references, see ``compare_helpers``), ``other_data``
(system ``a`` on a corpus one reference longer: a different dataset), ``subset`` (``b`` scored
on entries 1-150 only) and, where Apertium is installed, ``apertium`` and ``apertium_degraded``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from compare_helpers import N_LINES, NTREX, make_card, read_lines, systems_from, text_pair, write_lines

from mt_eval.api import evaluate_card
from mt_eval.corpus import select_entries
from mt_eval.methods.registry import build_method
from xdist_shared import built_once


@pytest.fixture(scope="session")
def ntrex_text() -> tuple[list[str], list[str]]:
    src, ref = NTREX / "newstest2019-src.eng.txt", NTREX / "newstest2019-ref.spa.txt"
    if not (src.is_file() and ref.is_file()):
        pytest.skip(f"NTREX-128 data not found at {NTREX}")
    return read_lines(src, N_LINES), read_lines(ref, N_LINES)


@pytest.fixture(scope="session")
def hyps(ntrex_text: tuple[list[str], list[str]]) -> dict[str, list[str]]:
    return systems_from(ntrex_text[1])


@pytest.fixture(scope="session")
def cards(tmp_path_factory: pytest.TempPathFactory, ntrex_text, hyps) -> dict[str, Path]:
    """Paths of real, sealed cards (same dataset unless the name says otherwise)."""

    def build(tmp: Path) -> dict[str, Path]:
        src, ref = ntrex_text
        _, _, dataset = text_pair(tmp, src, ref)
        out: dict[str, Path] = {}
        for name, lines in hyps.items():
            out[name] = tmp / f"{name}.json"
            make_card(dataset, write_lines(tmp / f"{name}.txt", lines), out[name])
        # The same system on a different corpus (one more segment): dataset.sha256 differs.
        more_src = read_lines(NTREX / "newstest2019-src.eng.txt", N_LINES + 1)
        more_ref = read_lines(NTREX / "newstest2019-ref.spa.txt", N_LINES + 1)
        _, _, other = text_pair(tmp, more_src, more_ref, tag="_more")
        longer = systems_from(more_ref)["a"]
        out["other_data"] = tmp / "other_data.json"
        make_card(other, write_lines(tmp / "a_more.txt", longer), out["other_data"])
        # System b on the same corpus but only entries 1-150: a different entry set.
        subset = select_entries(dataset, ids="1-150")
        method = build_method(f"predictions:{tmp / 'b.txt'}", dataset=dataset)
        out["subset"] = tmp / "subset.json"
        evaluate_card(subset, method, runs_dir=tmp / "runs", out=out["subset"], selection={"ids": "1-150"})
        return out

    return built_once(tmp_path_factory, "compare-cards", build)  # once per run, not per xdist worker


def _apertium_reason() -> str | None:
    binary = shutil.which("apertium")
    if binary is None:
        return "the 'apertium' command is not installed (apt-get install apertium apertium-eng-spa)"
    listed = subprocess.run([binary, "-l"], capture_output=True, text=True, check=False).stdout.split()
    return None if "eng-spa" in listed else "Apertium pair eng-spa is not installed (apt-get install apertium-eng-spa)"


@pytest.fixture(scope="session")
def apertium_cards(tmp_path_factory: pytest.TempPathFactory, ntrex_text) -> dict[str, Path]:
    """Real Apertium eng-spa output and a copy with every fourth word dropped (the baseline)."""
    reason = _apertium_reason()
    if reason:
        pytest.skip(reason)

    def build(tmp: Path) -> dict[str, Path]:
        src, ref = ntrex_text
        _, _, dataset = text_pair(tmp, src, ref)
        card, _ = evaluate_card(dataset, build_method("apertium:eng-spa", dataset=dataset), runs_dir=tmp / "runs",
                                out=tmp / "apertium.json")  # fmt: skip
        outputs = [r["predicted"] for r in card["results"]]
        degraded = [" ".join(w for i, w in enumerate(o.split()) if i % 4 != 3) for o in outputs]
        make_card(dataset, write_lines(tmp / "degraded.txt", degraded), tmp / "apertium_degraded.json")
        write_lines(tmp / "apertium.txt", outputs)
        return {"apertium": tmp / "apertium.json", "apertium_degraded": tmp / "apertium_degraded.json",
                "apertium_txt": tmp / "apertium.txt", "degraded_txt": tmp / "degraded.txt"}

    return built_once(tmp_path_factory, "compare-apertium", build)  # once per run, not per xdist worker


@pytest.fixture(scope="session")
def cli_app():
    """The real ``mt-eval`` app."""
    from mt_eval.cli import app

    return app

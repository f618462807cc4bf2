"""Helpers the CLI tests import (a module, not conftest: several conftest.py files share that name)."""

from __future__ import annotations

from pathlib import Path


def write_text_pair(ntrex: Path, tmp: Path, iso3: str, n: int, suffixes: tuple[str, str]) -> dict[str, Path]:
    """The first ``n`` NTREX-128 lines (English source, ``iso3`` reference) and a system output that
    misses each reference's last word, as plain-text files in ``tmp``; keys src, ref, hyp, dir."""
    src = (ntrex / "newstest2019-src.eng.txt").read_text(encoding="utf-8").splitlines()[:n]
    ref = (ntrex / f"newstest2019-ref.{iso3}.txt").read_text(encoding="utf-8").splitlines()[:n]
    hyp = [" ".join(r.split()[:-1]) or r for r in ref]
    paths = {"src": tmp / f"src.{suffixes[0]}", "ref": tmp / f"ref.{suffixes[1]}", "hyp": tmp / f"hyp.{suffixes[1]}",
             "dir": tmp}
    for key, lines in (("src", src), ("ref", ref), ("hyp", hyp)):
        paths[key].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths

"""HFST optimized-lookup (``.hfstol``, the GiellaLT format) through one long-lived process.

``hfst-optimized-lookup`` (Debian package ``hfst``) answers each input line with one line per
analysis (``word<TAB>analysis[<TAB>weight]``) and a blank line, flushing per input, so words are
streamed through one process. An unknown word comes back as ``word<TAB>word<TAB>+?``.
"""

from __future__ import annotations

from collections.abc import Sequence

from mt_eval.analyzers.base import Analyser, OwnedProcess, file_version


class HfstAnalyser(Analyser):
    kind = "hfst"

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.process = OwnedProcess(["hfst-optimized-lookup", "-u", path], text=True)

    @property
    def version(self) -> str:
        return file_version("hfst-optimized-lookup", self.path)

    def _analyse_batch(self, words: Sequence[str]) -> list[tuple[str, ...]]:
        proc = self.process.get()
        assert proc.stdin is not None and proc.stdout is not None
        clean = [w.replace("\n", " ").replace("\t", " ") for w in words]
        proc.stdin.write("".join(w + "\n" for w in clean))  # < pipe buffer: never blocks
        proc.stdin.flush()
        result: list[tuple[str, ...]] = []
        for _ in clean:
            analyses: list[str] = []
            line = proc.stdout.readline()
            while line == "\n":  # an unknown word is followed by extra blank lines: skip them
                line = proc.stdout.readline()
            while line not in ("\n", ""):
                parts = line.rstrip("\n").split("\t")
                if len(parts) >= 2 and not parts[-1].endswith("+?") and not parts[1].endswith("+?"):
                    analyses.append(parts[1])
                line = proc.stdout.readline()
            if line == "":
                raise RuntimeError("hfst-optimized-lookup exited while answering")
            result.append(tuple(analyses))
        return result

    def close(self) -> None:
        self.process.close()

"""Plain parallel text: one segment per line in a source file and a reference file.

This is how WMT-style test sets (e.g. NTREX-128) ship, so they can be evaluated without
conversion. Line *i* of both files is entry id *i* (from 1). Lines end at ``\\n`` only (a
trailing ``\\r`` is dropped): ``str.splitlines`` would also split at U+2028 or form feeds inside
a sentence and silently misalign the two files.

SHA-256 rule: a run card has one ``dataset.sha256`` but a text pair is two files, so the hash is
``sha256(hex(sha256(source_bytes)) + hex(sha256(reference_bytes)))``: the lowercase hex digests
of the two files' raw bytes, concatenated (source first) as ASCII, hashed again. It changes when
either file changes and when the files are swapped, and anyone can recompute it with
``sha256sum``.

Every entry gets ``provenance: corpus`` (extracted from a parallel corpus, Benchmark Spec §2.5)
and the default segment ``development``.
"""

from __future__ import annotations

from pathlib import Path

from mt_eval.corpus.building import LanguageArgs, build_info, finish
from mt_eval.corpus.models import Dataset, Entry, Provenance
from mt_eval.corpus.problems import Problems, decode_utf8, read_bytes, sha256_bytes
from mt_eval.errors import CorpusError, UserError


def text_pair_sha256(source_bytes: bytes, reference_bytes: bytes) -> str:
    """The dataset hash of a text pair (rule in the module docstring)."""
    combined = sha256_bytes(source_bytes) + sha256_bytes(reference_bytes)
    return sha256_bytes(combined.encode("ascii"))


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def load_text_pair(
    source_file: str | Path,
    reference_file: str | Path,
    source_lang: str,
    target_lang: str,
    dataset_id: str | None = None,
) -> Dataset:
    """Load a source/reference file pair as a dataset with ids 1..n."""
    src_path, ref_path = Path(source_file), Path(reference_file)
    src_problems, ref_problems = Problems(str(src_path)), Problems(str(ref_path))
    collected: list[UserError] = []
    texts: list[str] = []
    raw: list[bytes] = []
    for path, problems in ((src_path, src_problems), (ref_path, ref_problems)):
        try:
            data = read_bytes(path, problems)
            texts.append(decode_utf8(data, problems))
            raw.append(data)
        except CorpusError as exc:
            collected.extend(exc.problems)
    if collected:
        raise CorpusError(collected)
    src_lines, ref_lines = _lines(texts[0]), _lines(texts[1])
    if len(src_lines) != len(ref_lines):
        raise CorpusError(
            [
                UserError(
                    f"line counts differ: {src_path} has {len(src_lines)} lines, {ref_path} has {len(ref_lines)} lines"
                )
            ]
        )
    problems = Problems(str(src_path))
    entries: list[Entry] = []
    for n, (src, ref) in enumerate(zip(src_lines, ref_lines, strict=True), start=1):
        if not src.strip():
            problems.add("source line is empty", line=n, entry=n, field="source")
        if not ref.strip():
            problems.add("reference line is empty", line=n, entry=n, field="reference", file=str(ref_path))
        entries.append(Entry(id=n, source=src, reference=ref, provenance=Provenance.CORPUS))
    args = LanguageArgs(source_lang, target_lang, dataset_id)
    default_id = f"{src_path.stem}+{ref_path.stem}"
    info = build_info(None, args, default_id, problems)
    sha = text_pair_sha256(raw[0], raw[1])
    return finish(info, entries, sha, f"{src_path} + {ref_path}", problems)

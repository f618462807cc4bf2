"""Plain parallel text: one segment per line in a source file and a reference file.

This is how WMT-style test sets (e.g. NTREX-128) ship, so they can be evaluated without
conversion. Line *i* of both files is entry id *i* (from 1). Lines end at ``\\n`` only (a
trailing ``\\r`` is dropped): ``str.splitlines`` would also split at U+2028 or form feeds inside
a sentence and silently misalign the two files.

Several reference files (``--reference-file`` repeated) give each entry every reference, line *i*
of each file (``Entry.references``); sacrebleu's metrics then score against all of them. Without a
source file (``score`` from references and outputs alone, as sacrebleu is used) every source is
empty and the metrics that read the source are null.

SHA-256 rule: a run card has one ``dataset.sha256`` but a text pair is two files or more, so the hash
is ``sha256(hex(sha256(source_bytes)) + hex(sha256(reference_bytes)) + ...)``: the lowercase hex
digests of the files' raw bytes, concatenated (source first, references in the order given) as
ASCII, hashed again; without a source the text hashed starts with ``no-source:`` instead of the
source digest. It changes when any file changes and when files are swapped, and anyone can
recompute it with ``sha256sum``. One source and one reference hash as they always have.

Every entry gets ``provenance: corpus`` (extracted from a parallel corpus, Benchmark Spec §2.5)
and the default segment ``development``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from mt_eval.corpus.building import LanguageArgs, build_info, finish
from mt_eval.corpus.models import Dataset, Entry, Provenance
from mt_eval.corpus.problems import Problems, decode_utf8, read_bytes, sha256_bytes
from mt_eval.errors import CorpusError, UserError


def text_pair_sha256(source_bytes: bytes | None, *reference_bytes: bytes) -> str:
    """The dataset hash of a text pair (rule in the module docstring)."""
    head = sha256_bytes(source_bytes) if source_bytes is not None else "no-source:"
    combined = head + "".join(sha256_bytes(r) for r in reference_bytes)
    return sha256_bytes(combined.encode("ascii"))


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def _read_all(paths: list[Path]) -> tuple[list[str], list[bytes]]:
    """Every file decoded, or one ``CorpusError`` with every file's problems."""
    collected: list[UserError] = []
    texts: list[str] = []
    raw: list[bytes] = []
    for path in paths:
        problems = Problems(str(path))
        try:
            data = read_bytes(path, problems)
            texts.append(decode_utf8(data, problems))
            raw.append(data)
        except CorpusError as exc:
            collected.extend(exc.problems)
    if collected:
        raise CorpusError(collected)
    return texts, raw


def load_text_pair(
    source_file: str | Path | None,
    reference_file: str | Path | Sequence[str | Path],
    source_lang: str | None,
    target_lang: str,
    dataset_id: str | None = None,
) -> Dataset:
    """Load a source file (or none) and one or more reference files as a dataset with ids 1..n."""
    ref_paths = [Path(reference_file)] if isinstance(reference_file, str | Path) else [Path(p) for p in reference_file]
    if not ref_paths:
        raise UserError("give at least one reference file")
    src_path = Path(source_file) if source_file is not None else None
    paths = ([src_path] if src_path else []) + ref_paths
    texts, raw = _read_all(paths)
    columns = [_lines(t) for t in texts]
    counts = {len(c) for c in columns}
    if len(counts) > 1:
        said = ", ".join(f"{p} has {len(c)} lines" for p, c in zip(paths, columns, strict=True))
        raise CorpusError([UserError(f"line counts differ: {said}")])
    sources = columns[0] if src_path else [""] * len(columns[0])
    ref_columns = columns[1:] if src_path else columns
    problems = Problems(str(paths[0]))
    entries: list[Entry] = []
    for n, (src, *refs) in enumerate(zip(sources, *ref_columns, strict=True), start=1):
        if src_path and not src.strip():
            problems.add("source line is empty", line=n, entry=n, field="source")
        for ref, path in zip(refs, ref_paths, strict=True):
            if not ref.strip():
                problems.add("reference line is empty", line=n, entry=n, field="reference", file=str(path))
        if all(r.strip() for r in refs):
            entries.append(Entry(id=n, source=src, reference=refs[0], references=refs if len(refs) > 1 else [],
                                 provenance=Provenance.CORPUS))
    args = LanguageArgs(source_lang, target_lang, dataset_id)
    default_id = "+".join(p.stem for p in paths)
    info = build_info(None, args, default_id, problems)
    sha = text_pair_sha256(raw[0] if src_path else None, *(raw[1:] if src_path else raw))
    return finish(info, entries, sha, " + ".join(str(p) for p in paths), problems)

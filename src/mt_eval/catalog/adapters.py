"""Adapters: an id becomes the upstream files to fetch and a parser of those files in upstream's own format.

Each ``plan_*`` returns a :class:`Plan`; ``Plan.convert`` reads the fetched files (in the order of
``Plan.urls``) and returns the segments, each a source with its references, numbered by upstream's own
line or segment order so an entry id points back into the file it came from.
"""

from __future__ import annotations

import csv
import io
import re
import tarfile
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mt_eval.catalog.entries import FAMILIES, NTREX_RAW, Exposure, Family
from mt_eval.errors import UserError
from mt_eval.languages import normalize_code


@dataclass(frozen=True)
class Segment:
    """One converted segment: ``id`` is its 1-based position upstream (line, row or XML segment order)."""

    id: int
    source: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    dataset_id: str
    family: Family
    source_language: str
    target_language: str
    urls: tuple[str, ...]
    convert: Callable[[list[Path]], list[Segment]]
    md5: dict[str, str] = field(default_factory=dict)
    """Checksums an upstream registry pins (sacrebleu's md5 for WMT tarballs), checked besides sha256."""
    exposure: Exposure | None = None
    """This test set's own exposure where it differs from the family's (each WMT year has its own)."""

    @property
    def facts(self) -> Exposure:
        return self.exposure or self.family.exposure


def bcp47(code: str) -> str:
    """Our corpus schema's language code for an upstream one (ISO 639-3, ``eng_Latn``, ``zho-CN``)."""
    lang, _, script = code.replace("-", "_").partition("_")
    try:
        base = normalize_code(lang)
    except UserError:
        return code
    # Only Chinese needs its script or region kept to pick the right language card and tokenizer.
    return f"{base}-{script}" if base == "zh" and script else base


def _lines(data: bytes, where: str) -> list[str]:
    """Lines of a one-segment-per-line file. Split on "\\n" only: NTREX lines contain U+2028, which
    ``splitlines`` would split; a trailing "\\r" (CRLF upstream) is dropped."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UserError(f"not UTF-8 at byte {exc.start}", file=where, hint="the upstream file is damaged") from None
    if text.endswith("\n"):
        text = text[:-1]
    return [line.removesuffix("\r") for line in text.split("\n")]


def _parallel(sources: list[str], references: list[str], where: str) -> list[Segment]:
    if len(sources) != len(references):
        raise UserError(f"source has {len(sources)} lines, reference {len(references)}", file=where,
                        hint="a truncated or mismatched download; delete the cache folder and fetch again")
    pairs = enumerate(zip(sources, references, strict=True), start=1)
    return [Segment(n, s.strip(), (r.strip(),)) for n, (s, r) in pairs if s.strip() and r.strip()]


def _text_pair(paths: list[Path]) -> list[Segment]:
    return _parallel(_lines(paths[0].read_bytes(), str(paths[0])), _lines(paths[1].read_bytes(), str(paths[1])),
                     str(paths[1]))


def _pair(arg: str, usage: str) -> tuple[str, str]:
    src, sep, tgt = arg.partition("-") if "_" not in arg else _split_flores(arg)
    if not sep or not src or not tgt:
        raise UserError(f"expected a language pair SRC-TGT, got '{arg}'", hint=f"usage: {usage}")
    return src, tgt


def _split_flores(arg: str) -> tuple[str, str, str]:
    match = re.fullmatch(r"([a-z]{3}_[A-Za-z]{4})-([a-z]{3}_[A-Za-z]{4})", arg)
    return (match.group(1), "-", match.group(2)) if match else ("", "", "")


def plan_ntrex(family: Family, dataset_id: str, args: list[str]) -> Plan:
    if len(args) != 1:
        raise UserError(f"unknown catalogue id '{dataset_id}'", hint=f"usage: {family.usage}")
    src, tgt = _pair(args[0], family.usage)
    if src != "eng" or not re.fullmatch(r"[a-z]{3}(-[A-Za-z]+)?", tgt):
        raise UserError(f"NTREX-128 translates from English: '{args[0]}'", hint=f"usage: {family.usage}")
    urls = (f"{NTREX_RAW}/newstest2019-src.eng.txt", f"{NTREX_RAW}/newstest2019-ref.{tgt}.txt")
    return Plan(dataset_id, family, "en", bcp47(tgt), urls, _text_pair)


_FLORES = "https://huggingface.co/datasets/openlanguagedata/flores_plus/resolve/main"


def _flores_rows(path: Path) -> dict[int, str]:
    try:
        import pyarrow.parquet as pq  # optional: the catalog extra
    except ImportError:
        raise UserError("reading FLORES+ needs pyarrow", hint="pip install 'mt-eval[catalog]'") from None
    try:
        table = pq.read_table(path, columns=["id", "text"])
    except Exception as exc:  # pyarrow raises its own ArrowInvalid/OSError family for a damaged file
        raise UserError(f"not a FLORES+ parquet file: {exc}", file=str(path),
                        hint="delete it from the cache and fetch again") from None
    ids = [int(i) for i in table.column("id").to_pylist()]  # an int column, or numeric strings in some exports
    if len(set(ids)) != len(ids):
        raise UserError("FLORES+ file repeats sentence ids (several variants of the language in one file?)",
                        file=str(path), hint="pick the variant's own file")
    return dict(zip(ids, (str(t) for t in table.column("text").to_pylist()), strict=True))


def _flores_convert(paths: list[Path]) -> list[Segment]:
    src, ref = _flores_rows(paths[0]), _flores_rows(paths[1])
    if set(src) != set(ref):
        raise UserError(f"FLORES+ files disagree on their sentence ids ({len(src)} vs {len(ref)})", file=str(paths[1]))
    return [Segment(i, src[i].strip(), (ref[i].strip(),)) for i in sorted(src) if src[i].strip() and ref[i].strip()]


def plan_flores(family: Family, dataset_id: str, args: list[str]) -> Plan:
    if len(args) != 2 or args[0] not in ("dev", "devtest"):
        raise UserError(f"unknown catalogue id '{dataset_id}'", hint=f"usage: {family.usage}")
    src, tgt = _pair(args[1], family.usage)
    urls = (f"{_FLORES}/{args[0]}/{src}.parquet", f"{_FLORES}/{args[0]}/{tgt}.parquet")
    return Plan(dataset_id, family, bcp47(src), bcp47(tgt), urls, _flores_convert)


def plan_wmt(family: Family, dataset_id: str, args: list[str]) -> Plan:
    """A WMT test set exactly as sacrebleu's registry describes it: its URL, md5, file within the tarball and
    reference choice come from ``sacrebleu.DATASETS``, and sacrebleu's own XML reader parses it."""
    from sacrebleu.dataset import DATASETS
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    if len(args) != 2:
        raise UserError(f"unknown catalogue id '{dataset_id}'", hint=f"usage: {family.usage}")
    name, pair = args
    dataset = DATASETS.get(name)
    if dataset is None:
        raise UserError(f"sacrebleu has no test set '{name}'", hint="sacrebleu --list shows them")
    if not isinstance(dataset, WMTXMLDataset):
        raise UserError(f"'{name}' is not a WMT XML release (WMT21 and later)",
                        hint="use sacrebleu -t to fetch older sets, then pass the text files")
    if pair not in dataset.langpairs:
        raise UserError(f"sacrebleu's {name} has no pair '{pair}'",
                        hint=f"pairs: {', '.join(sorted(dataset.langpairs))}")
    meta = dataset.langpairs[pair]
    member = meta["path"] if isinstance(meta, dict) else meta[0]
    allowed = dataset._get_langpair_allowed_refs(pair)  # sacrebleu's own choice of reference(s)
    if not dataset.data:
        raise UserError(f"sacrebleu's {name} names no download URL")
    url = dataset.data[0]
    md5 = {url: dataset.md5[0]} if dataset.md5 else {}

    def convert(paths: list[Path]) -> list[Segment]:
        try:
            with tarfile.open(paths[0]) as tar:
                handle = tar.extractfile(member)
                if handle is None:
                    raise KeyError(member)
                fields = WMTXMLDataset._unwrap_wmt21_or_later(io.BytesIO(handle.read()))
        except (tarfile.TarError, KeyError, OSError) as exc:
            raise UserError(f"cannot read {member} from the WMT tarball: {exc}", file=str(paths[0]),
                            hint="delete it from the cache and fetch again") from None
        refs = [fields[f] for f in allowed if f in fields] or [fields["ref"]]
        clean = WMTXMLDataset._clean
        return [Segment(n, clean(src), tuple(clean(r[n - 1]) for r in refs))
                for n, src in enumerate(fields["src"], start=1)
                if clean(src) and all(clean(r[n - 1]) for r in refs)]

    src, tgt = pair.split("-", 1)
    return Plan(dataset_id, family, bcp47(src), bcp47(tgt), (url,), convert, md5, _wmt_exposure(name, family))


# The month of each WMT conference, when its findings and references were published (sources were public
# from the task's test week, a few months earlier); an unknown year counts from its January.
_WMT_CONFERENCE = {"wmt21": "2021-11", "wmt22": "2022-12", "wmt23": "2023-12", "wmt24": "2024-11"}


def _wmt_exposure(name: str, family: Family) -> Exposure:
    year = re.match(r"wmt(\d\d)", name)
    released = _WMT_CONFERENCE.get(name.split("/")[0]) or (f"20{year.group(1)}-01" if year else "unknown")
    return Exposure(released=released, inclusion=family.exposure.inclusion, sources=family.exposure.sources,
                    note=f"{name}: references public from the WMT conference month")


_ANLP = "https://raw.githubusercontent.com/AmericasNLP/americasnlp2021/main"
_ANLP_DIRS = {"aym": "aymara-spanish", "bzd": "bribri-spanish", "cni": "ashaninka-spanish", "gn": "guarani-spanish",
              "hch": "wixarika-spanish", "nah": "nahuatl-spanish", "oto": "hñähñu-spanish", "quy": "quechua-spanish",
              "shp": "shipibo_konibo-spanish", "tar": "raramuri-spanish"}


def plan_americasnlp(family: Family, dataset_id: str, args: list[str]) -> Plan:
    if len(args) != 2 or args[0] not in ("dev", "test"):
        raise UserError(f"unknown catalogue id '{dataset_id}'", hint=f"usage: {family.usage}")
    src, tgt = _pair(args[1], family.usage)
    if src != "es" or tgt not in _ANLP_DIRS:
        raise UserError(f"AmericasNLP 2021 translates Spanish into {', '.join(_ANLP_DIRS)}: '{args[1]}'",
                        hint=f"usage: {family.usage}")
    if args[0] == "test":  # one shared Spanish source, one reference file per language
        urls = (f"{_ANLP}/test_data/test.es", f"{_ANLP}/test_data/test.{tgt}")
    else:
        folder = urllib.parse.quote(_ANLP_DIRS[tgt])
        urls = (f"{_ANLP}/data/{folder}/dev.es", f"{_ANLP}/data/{folder}/dev.{tgt}")
    return Plan(dataset_id, family, "es", bcp47(tgt), urls, _text_pair)


_TATOEBA = "https://raw.githubusercontent.com/Helsinki-NLP/Tatoeba-Challenge/master/data/test"


def plan_tatoeba(family: Family, dataset_id: str, args: list[str]) -> Plan:
    if len(args) != 1:
        raise UserError(f"unknown catalogue id '{dataset_id}'", hint=f"usage: {family.usage}")
    src, tgt = _pair(args[0], family.usage)
    first, second = sorted((src, tgt))  # upstream keeps one folder per unordered pair
    swapped = src != first

    def convert(paths: list[Path]) -> list[Segment]:
        """``test.txt``: srclang, trglang, source, target, tab-separated; a source with several accepted
        translations appears on consecutive rows, so they become one entry with several references."""
        grouped: dict[str, list[str]] = {}
        reader = csv.reader(io.StringIO("\n".join(_lines(paths[0].read_bytes(), str(paths[0])))),
                            delimiter="\t", quoting=csv.QUOTE_NONE)
        for n, row in enumerate(reader, start=1):
            if not row:
                continue
            if len(row) != 4:
                raise UserError(f"expected 4 tab-separated columns, got {len(row)}", file=str(paths[0]), entry=n)
            source, target = (row[3], row[2]) if swapped else (row[2], row[3])
            if source.strip() and target.strip() and target.strip() not in grouped.setdefault(source.strip(), []):
                grouped[source.strip()].append(target.strip())
        return [Segment(n, s, tuple(refs)) for n, (s, refs) in enumerate(grouped.items(), start=1)]

    return Plan(dataset_id, family, bcp47(src), bcp47(tgt), (f"{_TATOEBA}/{first}-{second}/test.txt",), convert)


PLANNERS: dict[str, Callable[[Family, str, list[str]], Plan]] = {
    "ntrex128": plan_ntrex, "flores-plus": plan_flores, "wmt": plan_wmt, "americasnlp2021": plan_americasnlp,
    "tatoeba": plan_tatoeba,
}


def is_catalog_id(text: str) -> bool:
    """Whether a ``--corpus`` value names a catalogue entry rather than a file."""
    name, sep, _ = text.partition(":")
    return bool(sep) and name in FAMILIES and "/" not in text and "\\" not in text


def plan(dataset_id: str) -> Plan:
    name, _, rest = dataset_id.strip().partition(":")
    family = FAMILIES.get(name)
    if family is None or not rest:
        raise UserError(f"unknown catalogue id '{dataset_id}'",
                        hint=f"families: {', '.join(FAMILIES)}; mt-eval datasets list shows them")
    return PLANNERS[name](family, dataset_id.strip(), rest.split(":"))

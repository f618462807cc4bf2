"""The judgment importers on the real WMT21 TED MQM files and on small hand-written files, and the located,
one-line refusal of malformed ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_paths import MQM_TED
from mt_eval.errors import UserError
from mt_eval.judgments import load_judgments

HEADER = "lp\tdoc\tseg_id\tsystem\tsource\treference_refA\thypothesis\tmqm_avg_score\n"


def test_ted_mqm_files() -> None:
    """README: 529 segments × 14 systems (en-de, ref-A included) and × 15 (zh-en, ref-A and ref-B)."""
    ende = load_judgments(MQM_TED / "ted_ende.src_ref_hyp_mqm.tsv")
    assert ende.scale == "mqm" and ende.datasets() == ["en-de"] and len(ende.rows) == 7406
    assert len(ende.systems()) == 13 and "ref-A" not in ende.systems()
    segments = ende.segments()
    assert len(segments) == 13 * 529 and all(s.score <= 0 for s in segments)
    assert len(ende.segments(include_human=True)) == 14 * 529
    zhen = load_judgments(MQM_TED / "ted_zhen.src_ref_hyp_mqm.tsv", "mqm")
    assert zhen.datasets() == ["zh-en"] and len(zhen.segments()) == 13 * 529
    first = next(s for s in zhen.segments() if s.entry == "84")
    assert first.source and first.reference and first.hypothesis is not None


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_mqm_layout_variants(tmp_path: Path) -> None:
    """``lp`` as en-de, no ``doc`` column, a quote inside an unquoted field."""
    path = _write(tmp_path, "m.tsv", "lp\tseg_id\tsystem\tsource\treference_refA\thypothesis\tmqm_avg_score\n"
                  'en-de\t7\tsysA\tHe said "hi\tEr sagte\tEr sagte "hallo\t-1.5\n'
                  "en-de\t7\tref-B\tHe said\tEr sagte\tEr meinte\t-0.0\n")
    table = load_judgments(path)
    assert [(r.dataset, r.entry, r.system, r.score, r.human) for r in table.rows] == [
        ("en-de", "7", "sysA", -1.5, False), ("en-de", "7", "ref-B", 0.0, True)]
    assert table.rows[0].hypothesis == 'Er sagte "hallo'


@pytest.mark.parametrize(("body", "where", "says"), [
    ("ende\ttalk\t1\tA\ts\tr\th\t2.0\n", "m.tsv:2", "must be ≤ 0"),
    ("ende\ttalk\t1\tA\ts\tr\th\tbad\n", "m.tsv:2", "not a number"),
    ("ende\ttalk\t1\tA\ts\tr\th\tnan\n", "m.tsv:2", "must be ≤ 0"),
    ("english\ttalk\t1\tA\ts\tr\th\t-1\n", "m.tsv:2", "not a language pair"),
    ("ende\ttalk\t1\tA\ts\tr\th\n", "m.tsv:2", "7 fields, the header has 8"),
    ("ende\ttalk\t1\tA\ts\tr\th\t-1\nende\ttalk\t1\tA\ts\tr\th\t-2\n", "m.tsv:3", "judged twice"),
    ("ende\ttalk\t1\tA\t\tr\th\t-1\n", "m.tsv:2", "field 'source'"),
])
def test_malformed_mqm_is_refused_with_its_line(tmp_path: Path, body: str, where: str, says: str) -> None:
    path = _write(tmp_path, "m.tsv", HEADER + body)
    with pytest.raises(UserError) as exc:
        load_judgments(path, "mqm")
    assert where in exc.value.one_line() and says in exc.value.one_line()
    assert "\n" not in exc.value.one_line()


def test_missing_column_and_unknown_header(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"m.tsv:1.*missing column\(s\) mqm_avg_score"):
        load_judgments(_write(tmp_path, "m.tsv", HEADER.replace("\tmqm_avg_score", "") + "x\n"), "mqm")
    with pytest.raises(UserError, match="cannot tell the judgments format"):
        load_judgments(_write(tmp_path, "x.csv", "a,b\n1,2\n"))
    with pytest.raises(UserError, match="not found"):
        load_judgments(tmp_path / "absent.tsv")
    with pytest.raises(UserError, match="not UTF-8"):
        (tmp_path / "b.tsv").write_bytes(b"lp\tscore\n\xff\n")
        load_judgments(tmp_path / "b.tsv", "da")


def test_da_and_esa_scores(tmp_path: Path) -> None:
    path = _write(tmp_path, "da.csv", "dataset,entry,system,score,rater\nnews,1,A,71.5,r1\nnews,1,A,80,r2\n"
                  'news,1,B,"12",r1\n')
    table = load_judgments(path)
    assert table.scale == "da"
    [a, b] = table.segments()
    assert (a.system, a.score, a.raters) == ("A", pytest.approx(75.75), 2) and b.score == 12.0
    assert load_judgments(path, "esa").scale == "esa"
    with pytest.raises(UserError, match=r"da.csv:2: field 'score': score 101 must be in \[0, 100\]"):
        load_judgments(_write(tmp_path, "da.csv", "dataset,entry,system,score\nnews,1,A,101\n"), "da")


def test_simpeval_sheet(tmp_path: Path) -> None:
    """One row per output, one column per rater; an empty rating is skipped, not read as 0."""
    path = _write(tmp_path, "simp.csv", "original_id,original,system,generation,rating_1,rating_2,rating_3\n"
                  "5,The cat sat.,gpt,A cat sat.,80,,90\n5,The cat sat.,human,The cat sat down.,60,70,65\n")
    table = load_judgments(path)
    assert table.scale == "simpeval" and table.datasets() == ["simp"]
    assert [(r.system, r.rater, r.score) for r in table.rows][:2] == [("gpt", "rating_1", 80.0),
                                                                      ("gpt", "rating_3", 90.0)]
    gpt = next(s for s in table.segments() if s.system == "gpt")
    assert gpt.score == 85.0 and gpt.raters == 2 and gpt.hypothesis == "A cat sat."

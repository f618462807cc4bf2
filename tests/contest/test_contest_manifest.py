"""Creating a contest: the deterministic, disjoint split (checked against an independent re-shuffle), sizes that
do not fit refused, the secret half sealed only under a consent record, the manifest pinned by the log."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest

from mt_eval.contest.manifest import create_contest, load_contest, split_ids
from mt_eval.errors import UserError
from mt_eval.sovereign.vault import open_segment
from support.contest import CORPUS, DEV, SECRET, SEED, custodian, make_contest, record_consent


def _ids(path: Path) -> list[int]:
    return [e["id"] for e in json.loads(path.read_text(encoding="utf-8"))["entries"]]


def test_split_is_the_seeded_shuffle_and_disjoint() -> None:
    ids = list(range(1, 201))
    dev, secret = split_ids(list(reversed(ids)), 7, 30, 50)  # input order does not matter: ids are sorted first
    expected = sorted(ids)
    random.Random(7).shuffle(expected)  # the rule, written out independently
    assert (dev, secret) == (expected[:30], expected[30:80])
    assert not set(dev) & set(secret) and len(set(dev)) == 30 and len(set(secret)) == 50
    assert split_ids(ids, 7, 30, 50) == (dev, secret)  # deterministic
    assert split_ids(ids, 8, 30, 50) != (dev, secret)  # the seed decides


@pytest.mark.parametrize(("dev", "secret", "words"), [(150, 51, "201 entries; the corpus has 200"),
                                                      (0, 10, "at least one entry"), (10, 0, "at least one entry")])
def test_sizes_that_do_not_fit_are_refused(dev: int, secret: int, words: str) -> None:
    with pytest.raises(UserError, match=words):
        split_ids(list(range(1, 201)), 1, dev, secret)


def test_create_writes_dev_seals_secret_and_pins_the_manifest(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    root, m = made.root, made.manifest
    dev = _ids(root / "dev.json")
    secret = [e.id for e in open_segment(root / "vault", made.key, "gold_standard").entries]
    expected_dev, expected_secret = split_ids(_ids(CORPUS), SEED, DEV, SECRET)
    assert sorted(dev) == sorted(expected_dev) and sorted(secret) == sorted(expected_secret)
    assert m.secret_ids_sha256 == hashlib.sha256(json.dumps(sorted(secret)).encode()).hexdigest()
    assert m.dev_sha256 == hashlib.sha256((root / "dev.json").read_bytes()).hexdigest()
    assert (m.dataset, m.primary_metric, m.licence, m.languages) == ("ntrex128-eng-spa-demo", "chrf_plus_plus",
                                                                     "CC-BY-SA-4.0", "en→es")
    # no secret text nor secret id in anything public
    corpus = {e["id"]: e for e in json.loads(CORPUS.read_text(encoding="utf-8"))["entries"]}
    public = (root / "dev.json").read_text(encoding="utf-8") + (root / "contest.json").read_text(encoding="utf-8")
    assert not [i for i in secret if corpus[i]["reference"] in public or corpus[i]["source"] in public]
    assert load_contest(root) == m


def test_edited_manifest_is_refused(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    path = made.root / "contest.json"
    data = json.loads(path.read_text())
    data["threshold"] = 0.0  # lower the bar after entrants read the rules
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="not the manifest the contest was created with"):
        load_contest(made.root)


def test_seal_without_consent_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no community consent record") as info:
        make_contest(tmp_path, consent=False)
    assert "\n" not in str(info.value)
    root = tmp_path / "contest"
    assert not (root / "vault").exists() and not (root / "contest.json").exists() and not (root / "dev.json").exists()


def test_consent_for_other_segments_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "c"
    _key, recipient = custodian(tmp_path)
    record_consent(root, tmp_path, segments="held_out")
    with pytest.raises(UserError, match="covers segments held_out"):
        create_contest(root, CORPUS, contest_id="c", title="t", organiser="o", seed=1, dev_size=5, secret_size=5,
                       threshold=10, recipients=[recipient])


def test_existing_contest_and_bad_fields_are_refused(tmp_path: Path) -> None:
    made = make_contest(tmp_path)
    with pytest.raises(UserError, match="never written over"):
        create_contest(made.root, CORPUS, contest_id="again", title="t", organiser="o", seed=1, dev_size=5,
                       secret_size=5, threshold=10, recipients=[made.recipient])
    with pytest.raises(UserError, match="field 'id'"):
        make_contest(tmp_path, name="Bad_Id")
    with pytest.raises(UserError, match="primary metric 'nonsense'"):
        make_contest(tmp_path, name="m", primary_metric="nonsense")


def test_cli_create_show_list(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from mt_eval.cli import app

    runner = CliRunner()
    root = tmp_path / "contests" / "eng-spa"
    key, recipient = custodian(tmp_path)
    args = ["contest", "create", str(root), "--corpus", str(CORPUS), "--id", "eng-spa", "--title", "eng→spa",
            "--organiser", "Council", "--seed", "3", "--dev-size", "10", "--secret-size", "15", "--threshold", "25",
            "--recipient", recipient]  # fmt: skip
    refused = runner.invoke(app, args)  # no consent recorded yet
    assert refused.exit_code == 2 and "no community consent record" in refused.output
    assert len(refused.output.strip().splitlines()) == 1
    record_consent(root, tmp_path)
    made = runner.invoke(app, args)
    assert made.exit_code == 0, made.output
    assert "10 dev entries" in made.output and "15 secret entries" in made.output
    shown = runner.invoke(app, ["contest", "show", str(root)])
    assert shown.exit_code == 0 and "results: hidden until close" in shown.output and "no entries yet" in shown.output
    as_json = json.loads(runner.invoke(app, ["contest", "show", str(root), "--json"]).stdout)
    assert (as_json["id"], as_json["results_hidden"], as_json["dev_size"]) == ("eng-spa", True, 10)
    listed = runner.invoke(app, ["contest", "list", str(tmp_path / "contests")])
    assert listed.exit_code == 0 and "eng-spa" in listed.output and "open" in listed.output
    other = [str(tmp_path / "other") if a == str(root) else "150" if a == "10" else "60" if a == "15" else a
             for a in args]
    small = runner.invoke(app, other)
    assert small.exit_code == 2 and "the corpus has 200" in small.output, small.output
    assert key.is_file()


def test_cli_create_without_a_seed_draws_a_64_bit_one(tmp_path: Path) -> None:
    """A small seed is found from dev.json's public ids by trying seeds (decisions §84): without --seed the
    command draws one no search reaches, records it in the organiser's manifest, and the split follows it."""
    from typer.testing import CliRunner

    from mt_eval.cli import app
    from mt_eval.contest.manifest import load_contest, split_ids
    from mt_eval.corpus.loaders import load_corpus

    root = tmp_path / "contests" / "drawn"
    _, recipient = custodian(tmp_path)
    record_consent(root, tmp_path)
    made = CliRunner().invoke(app, ["contest", "create", str(root), "--corpus", str(CORPUS), "--id", "drawn",
                                    "--title", "drawn", "--organiser", "Council", "--dev-size", "10",
                                    "--secret-size", "15", "--threshold", "25", "--recipient", recipient])
    assert made.exit_code == 0, made.output
    seed = load_contest(root).seed
    assert seed >= 2**32  # fails with probability 2**-31 for a fair 63-bit draw
    dev, _ = split_ids([e.id for e in load_corpus(CORPUS).entries], seed, 10, 15)
    assert sorted(e.id for e in load_corpus(root / "dev.json").entries) == sorted(dev)

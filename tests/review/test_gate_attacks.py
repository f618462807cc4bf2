"""Issue 21, item 4: the review gate attacked as a script and a sybil would, each attack first written as a
failing test against the real offline HTML file, the real CLI and the real store.

* the offline batch carried every reference (even with ``--reference never``): a script compared outputs
  with it and found the degraded controls;
* controls sat in entries with one item more than the rest: counting items found them without reading;
* three scripted accounts rated the controls 0 and everything else 3 with identical timings and were all
  accepted by quality control; the gate said accepted;
* ``review create`` (CLI) let gold_standard/held_out texts into a campaign;
* a reviewer could review the card they submitted, and a name typed into ``review export`` counted as a
  reviewer of the community.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from review_helpers import cli, invited, truths
from sqlalchemy import select

from mt_eval.review.gate import review_verdict
from mt_eval.review.offline import RESULT_FORMAT
from mt_eval.review.report import campaign_report
from mt_eval.store import open_store
from mt_eval.store.models import ReviewItem

BATCH_JSON = re.compile(r'<script type="application/json" id="batch">(.*?)</script>', re.S)


def _create(db: str, hashes: dict[str, str], name: str, *extra: object, size: int = 60) -> None:
    made = cli("review", "create", "--db", db, "--card", hashes["near"], "--card", hashes["half"], "--size", size,
               "--seed", 3, "--name", name, *extra)
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]


def _export(db: str, campaign: str, reviewer: str, folder: Path) -> tuple[str, dict]:
    """The reviewer's offline HTML file as ``review export`` writes it, and the batch JSON inside it."""
    path = folder / f"{campaign}-{reviewer}.html"
    done = cli("review", "export", campaign, "--reviewer", reviewer, "-o", path, "--db", db)
    assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    html = path.read_text(encoding="utf-8")
    found = BATCH_JSON.search(html)
    assert found
    raw = found.group(1)
    for safe, char in (("\\u003c", "<"), ("\\u003e", ">"), ("\\u0026", "&")):
        raw = raw.replace(safe, char)
    return html, json.loads(raw)


@pytest.mark.parametrize("policy", ["never", "after"])
def test_the_offline_file_carries_no_reference(published: tuple[str, dict[str, str]], tmp_path: Path,
                                                policy: str) -> None:
    sqlite_db, hashes = published
    _create(sqlite_db, hashes, f"es-{policy}", "--reference", policy)
    html, batch = _export(sqlite_db, f"es-{policy}", "ana", tmp_path)
    with open_store(sqlite_db) as store, store.session() as session:
        references = set(session.scalars(select(ReviewItem.reference)).all())
    shown = {i["text"] for g in batch["groups"] for i in g["items"]}
    hidden = references - shown  # a reference that is also some output's text is shown as that output
    assert len(hidden) >= 8  # the test has teeth: these references differ from every text shown
    assert not [r for r in hidden if json.dumps(r, ensure_ascii=False)[1:-1] in html or r in html]
    assert all(set(g) == {"n", "source", "items"} for g in batch["groups"])


def _auc(positive: list[float], negative: list[float]) -> float:
    """P(feature of a control > feature of a real output), ties counted half (the Mann-Whitney AUC)."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positive for n in negative)
    return wins / (len(positive) * len(negative))


def _words(text: str) -> set[str]:
    return set(text.lower().split())


def _overlap(a: str, b: str) -> float:
    wa, wb = _words(a), _words(b)
    return len(wa & wb) / max(1, len(wa | wb))


def test_controls_are_not_found_by_the_features_the_script_used(published: tuple[str, dict[str, str]],
                                                                tmp_path: Path) -> None:
    """The script's features: the number of items of an entry, the item's place in it, its length, how
    close it is to the entry's reference (no longer in the file) and, within its entry, to the entry's
    other outputs. None of them separates the degraded controls from the real outputs: AUC near 0.5.

    What still works is at the level of the entry: outputs of an entry holding a degraded control agree
    less with each other (decisions §50). It does not say which item is the control."""
    sqlite_db, hashes = published
    _create(sqlite_db, hashes, "es-features", "--controls", 0.2, size=80)
    _, batch = _export(sqlite_db, "es-features", "ana", tmp_path)
    known = truths(sqlite_db)
    features: dict[str, dict[str, list[float]]] = {}

    def add(name: str, kind: str, value: float) -> None:
        features.setdefault(name, {"control_bad": [], "output": []}).setdefault(kind, []).append(value)

    for group in batch["groups"]:
        items = group["items"]
        closeness = [max((_overlap(i["text"], o["text"]) for o in items if o is not i), default=0.0) for i in items]
        for place, item in enumerate(items):
            kind = known[item["hash"]][0]
            if kind == "control_good":
                continue
            add("items of the entry", kind, len(items))
            add("place in the entry", kind, place)
            add("words", kind, len(item["text"].split()))
            add("characters", kind, len(item["text"]))
            add("closeness to the reference", kind, _overlap(item["text"], group.get("reference", "")))
            add("closeness to the entry's other outputs, within the entry", kind,
                closeness[place] - sum(closeness) / len(closeness))
    bad = features["words"]["control_bad"]
    assert len(bad) >= 15  # enough controls for the AUCs to mean something
    for name, split in features.items():
        auc = _auc(split["control_bad"], split["output"])
        assert 0.25 <= auc <= 0.75, (name, auc)


def _script(batch: dict) -> set[str]:
    """The sybil script's control finder, from the file alone. It used the entries with more items than the
    rest and the reference; without them, what still works is each entry's agreement between its outputs
    (or, with the reference, closeness to it): every item of the least agreeing entries, about one in ten
    items (the share the README gives), is taken for a control."""
    def agreement(group: dict) -> float:
        texts = [i["text"] for i in group["items"]] + ([group["reference"]] if "reference" in group else [])
        pairs = [(a, b) for n, a in enumerate(texts) for b in texts[n + 1:]]
        return min((_overlap(a, b) for a, b in pairs), default=1.0)

    sizes = [len(g["items"]) for g in batch["groups"]]
    usual = max(set(sizes), key=sizes.count)
    odd = [g for g in batch["groups"] if len(g["items"]) > usual]
    if not odd:
        wanted = round(0.1 * sum(sizes))
        for group in sorted(batch["groups"], key=agreement):
            if sum(len(g["items"]) for g in odd) >= wanted:
                break
            odd.append(group)
    found = set()
    for group in odd:
        if "reference" in group:  # the old file: the item near the reference but not it
            words = len(group["reference"].split())
            found.update(i["hash"] for i in group["items"]
                         if i["text"] != group["reference"] and len(i["text"].split()) == words)
        else:
            found.update(i["hash"] for i in group["items"])
    return found


def _sybil_result(batch: dict, flagged: set[str], token: str, reviewer: str) -> dict:
    """0 for what the script takes for a control, 3 for everything else, one identical timing script."""
    items = [i["hash"] for g in batch["groups"] for i in g["items"]]
    return {"format": RESULT_FORMAT, "campaign": batch["uid"], "reviewer": reviewer, "token": token,
            "ratings": [{"item": h, "value": 0 if h in flagged else 3, "comment": None, "seconds": 6.0,
                         "rated_at": f"2026-11-23T10:{n // 60:02d}:{n % 60:02d}Z"} for n, h in enumerate(items)]}


@pytest.mark.parametrize("oracle", [False, True], ids=["script", "script-knowing-every-control"])
def test_the_sybil_script_does_not_pass_the_gate(published: tuple[str, dict[str, str]], tmp_path: Path,
                                                 oracle: bool) -> None:
    """Three accounts, each properly invited by the admin with its own verified identity, run one script:
    controls found by whatever feature still works (or, worse, known outright), 0 for them and 3 for
    everything else, identical timings. Quality control flags every one of them; the gate does not accept."""
    sqlite_db, hashes = published
    _create(sqlite_db, hashes, "es-sybil", size=40)
    known = truths(sqlite_db)
    found: dict[str, int] = {}
    for name in ("syb1", "syb2", "syb3"):
        invited(sqlite_db, name, campaign="es-sybil")
        _, batch = _export(sqlite_db, "es-sybil", name, tmp_path)
        flagged = ({h for h, (k, _) in known.items() if k == "control_bad"} if oracle else _script(batch))
        found[name] = sum(known[h][0] == "control_bad" for h in flagged)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(_sybil_result(batch, flagged, batch["token"], name)), encoding="utf-8")
        done = cli("review", "import", path, "--db", sqlite_db)
        assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    with open_store(sqlite_db) as store:
        near = review_verdict(store, hashes["near"])
        report = campaign_report(store, "es-sybil", n_resamples=50)
    assert not near.accepted and near.reviewers == 0, near
    checks = {c.reviewer: c for c in report.checks}
    assert all(not checks[n].passed for n in found)
    for name in found:
        reason = checks[name].reason
        assert "straight-lining" in reason and "identical timings" in reason, reason
        assert "timing pattern identical to" in reason and "rated at the same moments" in reason, reason
        if oracle:  # the same answer key under three names
            assert "identical ratings" in reason, reason
    print(f"controls found by the script: {found} of {sum(k == 'control_bad' for k, _ in known.values())}")


SOVEREIGN_CORPUS = Path(__file__).resolve().parents[2] / "examples" / "ntrex128-eng-spa-sovereign.json"


@pytest.fixture(scope="module")
def secret_card(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real card over the shipped corpus with 50 gold_standard and 20 held_out entries (every segment)."""
    tmp = tmp_path_factory.mktemp("secret-card")
    entries = json.loads(SOVEREIGN_CORPUS.read_text(encoding="utf-8"))["entries"]
    hyp = tmp / "hyp.jsonl"
    hyp.write_text("".join(json.dumps({"entry_id": e["id"], "predicted": e["reference"]}) + "\n" for e in entries),
                   encoding="utf-8")
    done = cli("score", "-c", SOVEREIGN_CORPUS, "-p", hyp, "--bootstrap", 20, "--system", "gold-leak",
               "--runs-dir", tmp / "runs", "-o", tmp / "card.json")
    assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    return tmp / "card.json"


def test_cli_review_create_keeps_secret_segments_out(secret_card: Path, sqlite_db: str) -> None:
    """``publish`` now refuses a self-run card with secret entries, but a store can still hold one (stored
    before that rule, or by a governance store): the campaign itself must keep them out."""
    from mt_eval.store.insert import insert_card

    card = json.loads(secret_card.read_text(encoding="utf-8"))
    with open_store(sqlite_db) as store, store.session() as session:
        insert_card(session, card, None)
    card_hash = card["run_card_hash"]
    refused = cli("review", "create", "--db", sqlite_db, "--card", card_hash, "--size", 200, "--name", "leak")
    assert refused.exit_code == 2, refused.output  # type: ignore[attr-defined]
    assert "gold_standard or held_out" in refused.output  # type: ignore[attr-defined]
    with open_store(sqlite_db) as store, store.session() as session:
        assert not session.scalars(select(ReviewItem.id)).all()  # nothing was written


def test_a_reviewer_cannot_review_the_card_they_submitted(verified: dict, sqlite_db: str, tmp_path: Path) -> None:
    from mt_eval.store.publish import publish as publish_cards

    with open_store(sqlite_db) as store:
        publish_cards(store, [verified["near"]], submitter="ana")
        publish_cards(store, [verified["half"]], submitter="someone-else")
    hashes = {k: str(p.card["run_card_hash"]) for k, p in verified.items()}
    _create(sqlite_db, hashes, "es-self", size=30)
    refused = cli("review", "export", "es-self", "--reviewer", "ana", "-o", tmp_path / "ana.html", "--db", sqlite_db)
    assert refused.exit_code == 2 and "submitted" in refused.output, refused.output  # type: ignore[attr-defined]
    with pytest.raises(Exception, match="submitted"):  # nor through an invitation to that campaign
        invited(sqlite_db, "ana", campaign="es-self")


def test_only_invited_reviewers_with_distinct_verified_identities_count(published: tuple[str, dict[str, str]],
                                                                       tmp_path: Path) -> None:
    """Three attentive reviewers typed into ``review export`` are no community: the gate counts reviewers
    an admin invited, each with an identity of their own that accepting the invitation verified."""
    from review_helpers import review

    from mt_eval.errors import UserError

    sqlite_db, hashes = published
    _create(sqlite_db, hashes, "es-community")
    for seed, name in enumerate(("ana", "ben", "cem")):
        done = cli("review", "import", review(sqlite_db, "es-community", name, "attentive", seed, tmp_path,
                                              account=False), "--db", sqlite_db)
        assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    with open_store(sqlite_db) as store:
        verdict = review_verdict(store, hashes["near"])
        report = campaign_report(store, "es-community", n_resamples=50)
    assert not verdict.accepted and verdict.reviewers == 0, verdict
    assert all("not invited" in c.reason for c in report.checks), report.checks
    invited(sqlite_db, "dan", identity="Dan.Doe+review@Example.org")
    with pytest.raises(UserError, match="identity"):  # the same person under another name and address tag
        invited(sqlite_db, "dan2", identity="dan.doe@example.org")
    for seed, name in enumerate(("ana", "ben", "cem")):  # now invited, each with an identity of their own
        invited(sqlite_db, name)
        done = cli("review", "import", review(sqlite_db, "es-community", name, "attentive", seed, tmp_path),
                   "--db", sqlite_db)
        assert done.exit_code == 0, done.output  # type: ignore[attr-defined]
    with open_store(sqlite_db) as store:
        verdict = review_verdict(store, hashes["near"])
    assert verdict.accepted and verdict.reviewers == 3, verdict


def test_online_an_entrys_reference_appears_only_once_the_entry_is_rated(published: tuple[str, dict[str, str]]
                                                                         ) -> None:
    """On the web, an entry's reference appeared beside the first rated item while the entry's other item
    (maybe a control) was still unrated. Now it appears once every item of the entry is rated."""
    from fastapi.testclient import TestClient
    from review_helpers import PASSWORD

    from mt_eval.web.app import create_app

    sqlite_db, hashes = published
    _create(sqlite_db, hashes, "es-web", size=12)
    invited(sqlite_db, "ana", campaign="es-web")
    with TestClient(create_app(sqlite_db, n_resamples=50)) as client:
        form = client.get("/login").text
        csrf = re.search(r'name="csrf" value="([0-9a-f]{64})"', form)
        assert csrf
        signed = client.post("/login", data={"csrf": csrf.group(1), "name": "ana", "password": PASSWORD},
                             follow_redirects=False)
        assert signed.status_code == 303, signed.text
        campaigns = client.get("/review").text
        uid = re.search(r'href="/review/([0-9a-f]{16})"', campaigns)
        assert uid
        first = client.get(f"/review/{uid.group(1)}")  # redirected to the first item
        item = first.url.path.rsplit("/", 1)[1]
        token = re.search(r'name="csrf" value="([0-9a-f]{64})"', first.text)
        assert token and 'id="reference"' not in first.text
        rated = client.post(f"/review/{uid.group(1)}/{item}", data={"csrf": token.group(1), "value": "2",
                                                                   "seconds": "7.5"})
        assert rated.status_code == 200 and 'id="rated"' in rated.text
        assert 'id="reference"' not in rated.text and 'id="reference-hidden"' in rated.text  # the entry is not done
        second = client.get(f"/review/{uid.group(1)}")
        other = second.url.path.rsplit("/", 1)[1]
        assert other != item and 'id="reference"' not in second.text
        done = client.post(f"/review/{uid.group(1)}/{other}", data={"csrf": token.group(1), "value": "3",
                                                                    "seconds": "9.1"})
        assert done.status_code == 200 and 'id="reference"' in done.text  # every item of the entry rated
        again = client.get(f"/review/{uid.group(1)}/{item}")
        assert 'id="reference"' in again.text and "Change my rating" not in again.text

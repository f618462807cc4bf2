"""A contest's manifest and its creation: a deterministic dev/secret split of one corpus, the secret half sealed
to the custodians under the community's consent record, the public half written as ``dev.json``.

A contest root folder holds::

    contest.json   the manifest (``ContestManifest``); its sha256 is recorded by the log's contest.create event,
                   so an edited manifest is refused by ``load_contest``
    governance/    the contest's own Governance folder: the hash-chained audit log is its whole state
                   (``state.py``), with the consent records, submitters and approvals
    dev.json       the public development split (an ordinary corpus)
    vault/         the secret split, sealed by ``sovereign.consent.seal_with_consent`` (the §75 consent gate)
    entries/<n>/   one folder per entry (``entries.py``)

The split is ``random.Random(seed).shuffle`` of the corpus's entry ids in ascending order: the first ``dev_size``
ids are the dev split, the next ``secret_size`` the secret split (every other entry is left out of the
contest). Anyone holding the corpus and the seed can redo it, which is the point: the organiser cannot pick a
secret half that favours one entrant after seeing the entries. The manifest names neither the secret ids nor
their texts, only the SHA-256 of the sorted id list (a public corpus plus the ids would give the secret texts
away); the organiser proves the split by re-running it.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import tempfile
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from mt_eval.corpus.loaders import load_corpus
from mt_eval.corpus.models import Dataset, Segment
from mt_eval.errors import UserError
from mt_eval.runcard.signing import write_atomic
from mt_eval.sovereign.consent import seal_with_consent
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.vault import read_manifest

MANIFEST, DEV, VAULT, GOVERNANCE, ENTRIES = "contest.json", "dev.json", "vault", "governance", "entries"
KIND = "mt-eval contest"
DEV_SEGMENT = Segment.DEVELOPMENT.value
SECRET_SEGMENT = Segment.GOLD_STANDARD.value
"""The vault segment holding the secret split: ``sovereign.vault.open_segment(root/vault, key, SECRET_SEGMENT)``."""
DEFAULT_METRIC = "chrf_plus_plus"
VISIBILITIES = ("public", "private", "team")
DEFAULT_MAX_ARTEFACT_MB = 256  # sovereign/bundle.py's MAX_BYTES: one size rule for bundles wherever they come from
_ID = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")


class ContestManifest(BaseModel):
    """The rules of one contest, fixed at creation (the log pins its sha256).

    ``visibility``: ``public`` (listed; any account may submit), ``team`` (listed; only ``members`` submit),
    ``private`` (only the organiser and ``members`` see it or submit). ``results_hidden_until_close``: no
    secret-split score, rank or per-entry value is shown to anyone but the organiser before ``close``.
    ``anonymise``: entrants are shown as "Entrant 1..N" (order of submission); names go to the organiser only."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["mt-eval contest"] = "mt-eval contest"
    version: Literal[1] = 1
    id: str
    title: str = Field(min_length=1, max_length=200)
    organiser: str = Field(min_length=1, max_length=200)
    dataset: str
    dataset_sha256: str
    source_language: str
    target_language: str
    licence: str = Field(min_length=1, max_length=200)
    seed: int
    dev_size: int = Field(ge=1)
    secret_size: int = Field(ge=1)
    dev_ids_sha256: str
    secret_ids_sha256: str
    dev_sha256: str
    primary_metric: str = DEFAULT_METRIC
    threshold: float
    """Qualifier threshold on the primary metric, in its native scale (chrF++: 0–100), on the dev split."""
    custodians: tuple[str, ...] = Field(min_length=1)
    """The age recipients the secret split is sealed to (a quorum vault: its custody record's one recipient)."""
    quorum: int = Field(default=1, ge=1)
    """Custodian approvals an entry needs before it runs on the secret split (a quorum vault's threshold)."""
    visibility: Literal["public", "private", "team"] = "public"
    members: tuple[str, ...] = ()
    results_hidden_until_close: bool = True
    anonymise: bool = True
    require_signatures: bool = False
    max_artefact_mb: int = Field(default=DEFAULT_MAX_ARTEFACT_MB, ge=1, le=DEFAULT_MAX_ARTEFACT_MB)
    deadline: str | None = None
    created_at: str

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not _ID.fullmatch(value):
            raise ValueError("a contest id is 1-63 lowercase letters, digits and '-' (it names URLs and folders)")
        return value

    @field_validator("deadline")
    @classmethod
    def _date(cls, value: str | None) -> str | None:
        return None if value is None else date.fromisoformat(value).isoformat()

    @property
    def languages(self) -> str:
        return f"{self.source_language}→{self.target_language}"

    def visible_to(self, account: str | None) -> bool:
        """Whether ``account`` (None: nobody signed in) may see the contest at all."""
        return self.visibility != "private" or (account is not None and account in (self.organiser, *self.members))

    def may_submit(self, account: str | None) -> bool:
        """Whether ``account`` may submit an entry (public: any account; team/private: the members)."""
        if account is None:
            return False
        return self.visibility == "public" or account in self.members


def governance(root: Path) -> Governance:
    """The contest's Governance (its audit log is the contest's state)."""
    return Governance(Path(root) / GOVERNANCE)


def require_use(root: Path, manifest: ContestManifest, use: str, doing: str) -> None:
    """The community's consent in force for ``use`` of the secret split (``sovereign.consent.USES``): a council
    that allowed evaluation alone has not allowed its contest to be ranked or its cards published."""
    from mt_eval.corpus.models import DatasetInfo
    from mt_eval.sovereign.consent import require_consent

    info = DatasetInfo(id=manifest.dataset, source_language=manifest.source_language,
                       target_language=manifest.target_language)
    require_consent(governance(root), info, [SECRET_SEGMENT], use=use, doing=doing)


def _ids_sha256(ids: Sequence[int]) -> str:
    return hashlib.sha256(json.dumps(sorted(ids)).encode("ascii")).hexdigest()


def split_ids(ids: Sequence[int], seed: int, dev_size: int, secret_size: int) -> tuple[list[int], list[int]]:
    """The (dev, secret) entry ids: ``random.Random(seed)`` shuffles the sorted ids, dev takes the first
    ``dev_size``, secret the next ``secret_size``; refused when they do not fit (one line)."""
    if dev_size < 1 or secret_size < 1:
        raise UserError(f"--dev-size {dev_size} / --secret-size {secret_size}: each split needs at least one entry")
    if dev_size + secret_size > len(ids):
        raise UserError(f"--dev-size {dev_size} + --secret-size {secret_size} = {dev_size + secret_size} entries; "
                        f"the corpus has {len(ids)}", hint="make the splits smaller")
    order = sorted(ids)
    random.Random(seed).shuffle(order)
    return order[:dev_size], order[dev_size:dev_size + secret_size]


def _split_corpus(dataset: Dataset, dev: Sequence[int], secret: Sequence[int]) -> dict[str, Any]:
    """The corpus the vault seals: dev entries in the development segment, secret ones in the secret segment,
    in the original order (segments reassigned: the contest's split, not the corpus's, decides what is secret)."""
    where = {**dict.fromkeys(dev, Segment.DEVELOPMENT), **dict.fromkeys(secret, Segment.GOLD_STANDARD)}
    entries = [e.model_copy(update={"segment": where[e.id]}).model_dump(mode="json", exclude_defaults=True)
               for e in dataset.entries if e.id in where]
    for entry in entries:  # exclude_defaults drops the development segment; keep it explicit
        entry.setdefault("segment", DEV_SEGMENT)
    return {"dataset": dataset.info.model_dump(mode="json", exclude_none=True), "entries": entries}


def _refuse_existing(root: Path) -> None:
    if (root / MANIFEST).exists() or (root / VAULT).exists() or (root / DEV).exists():
        raise UserError("already holds a contest; a contest is never written over", file=str(root))
    if root.exists() and not root.is_dir():
        raise UserError("exists and is not a folder", file=str(root))
    extra = sorted(p.name for p in root.iterdir() if p.name != GOVERNANCE) if root.is_dir() else []
    if extra:
        raise UserError(f"holds {', '.join(extra[:3])}: a contest root is new, empty, or holds only its "
                        f"{GOVERNANCE}/ folder (with the consent record)", file=str(root))


def create_contest(root: Path, corpus: Path, *, contest_id: str, title: str, organiser: str, seed: int,
                   dev_size: int, secret_size: int, threshold: float, recipients: Sequence[str],
                   custody: dict[str, Any] | None = None, licence: str | None = None,
                   primary_metric: str = DEFAULT_METRIC, visibility: str = "public", members: Sequence[str] = (),
                   results_hidden_until_close: bool = True, anonymise: bool = True,
                   require_signatures: bool = False, max_artefact_mb: int = DEFAULT_MAX_ARTEFACT_MB,
                   deadline: str | None = None) -> ContestManifest:
    """Create the contest at ``root``: split ``corpus``, seal the secret split (refused without the community's
    consent record in ``root/governance`` covering the secret segment), write dev.json and contest.json, and
    record ``contest.create`` with the manifest's sha256. Every check runs before anything is written."""
    from mt_eval.store.datasets import check_primary_metric  # the store's own rule for a ranking key

    root = Path(root)
    _refuse_existing(root)
    dataset = load_corpus(corpus)
    licence = (licence or dataset.info.license or "").strip()
    if not licence:
        raise UserError("no licence: the corpus names none", file=str(corpus), field="--licence",
                        hint="give the licence entrants accept with --licence")
    if visibility not in VISIBILITIES:
        raise UserError(f"--visibility {visibility!r}: one of {', '.join(VISIBILITIES)}", field="--visibility")
    metric = check_primary_metric(primary_metric)
    dev, secret = split_ids([e.id for e in dataset.entries], seed, dev_size, secret_size)
    quorum = int(custody["threshold"]) if custody is not None else 1
    fields: dict[str, Any] = {
        "id": contest_id, "title": title.strip(), "organiser": organiser.strip(), "dataset": dataset.info.id,
        "dataset_sha256": dataset.sha256, "source_language": dataset.info.source_language,
        "target_language": dataset.info.target_language, "licence": licence, "seed": seed, "dev_size": dev_size,
        "secret_size": secret_size, "dev_ids_sha256": _ids_sha256(dev), "secret_ids_sha256": _ids_sha256(secret),
        "dev_sha256": "0" * 64, "primary_metric": metric, "threshold": threshold,
        "custodians": tuple(recipients), "quorum": quorum, "visibility": visibility,
        "members": tuple(m.strip() for m in members if m.strip()),
        "results_hidden_until_close": results_hidden_until_close, "anonymise": anonymise,
        "require_signatures": require_signatures, "max_artefact_mb": max_artefact_mb, "deadline": deadline,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }  # fmt: skip
    _validated(fields, str(root / MANIFEST))  # refuse a bad field before sealing anything
    gov = governance(root)
    # The split corpus holds the secret texts in clear: it lives in a private temporary folder for the
    # seal only (the original corpus is in clear on this machine anyway) and is removed whatever happens.
    with tempfile.TemporaryDirectory(prefix="mt-eval-contest-") as tmp:
        split = Path(tmp) / f"{dataset.info.id}.json"
        split.write_text(json.dumps(_split_corpus(dataset, dev, secret), ensure_ascii=False), encoding="utf-8")
        root.mkdir(parents=True, exist_ok=True)
        try:
            seal_with_consent(gov, split, [SECRET_SEGMENT], list(recipients), root / VAULT, custody)
        except UserError:
            if (root / VAULT).is_dir() and not any((root / VAULT).iterdir()):
                (root / VAULT).rmdir()
            raise
    public = (root / VAULT / read_manifest(root / VAULT).manifest["public"]["file"]).read_bytes()
    write_atomic(root / DEV, public)  # the vault's public half is the dev split, byte for byte
    manifest = _validated({**fields, "dev_sha256": hashlib.sha256(public).hexdigest()}, str(root / MANIFEST))
    data = manifest_bytes(manifest)
    write_atomic(root / MANIFEST, data)
    gov.record({"kind": "contest.create", "contest": manifest.id, "manifest_sha256": hashlib.sha256(data).hexdigest(),
                "dev_sha256": manifest.dev_sha256, "secret_ids_sha256": manifest.secret_ids_sha256,
                "who": manifest.organiser})  # fmt: skip
    return manifest


def manifest_bytes(manifest: ContestManifest) -> bytes:
    return (json.dumps(manifest.model_dump(mode="json"), ensure_ascii=False, indent=1, sort_keys=True) + "\n").encode()


def _validated(fields: dict[str, Any], where: str) -> ContestManifest:
    try:
        return ContestManifest.model_validate(fields)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "manifest"
        raise UserError(f"{err['msg']}", file=where, field=name) from None


def read_manifest_file(root: Path) -> tuple[ContestManifest, str]:
    """The manifest at ``root`` and its file's sha256 (no log check: ``load_contest`` does that)."""
    path = Path(root) / MANIFEST
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError("not a contest: no contest.json", file=str(root), hint="mt-eval contest create") from None
    except OSError as exc:
        raise UserError(f"cannot read: {exc.strerror or exc}", file=str(path)) from None
    try:
        fields = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise UserError("not readable JSON (damaged?)", file=str(path)) from None
    if not isinstance(fields, dict):
        raise UserError("not a contest manifest", file=str(path))
    return _validated(fields, str(path)), hashlib.sha256(data).hexdigest()


def load_contest(root: Path, events: Sequence[Mapping[str, Any]] | None = None) -> ContestManifest:
    """The contest's manifest, refused (one line) when the log fails verification or when the file is not the
    one its contest.create event recorded; ``events``: the log's events when the caller has read them already."""
    manifest, digest = read_manifest_file(root)
    logged = governance(root).events() if events is None else events
    created = [e for e in logged if e.get("kind") == "contest.create"]
    if not created:
        raise UserError("the contest's audit log has no contest.create event", file=str(Path(root) / GOVERNANCE))
    if created[0].get("manifest_sha256") != digest:
        raise UserError("contest.json is not the manifest the contest was created with (edited after creation); "
                        "refused", file=str(Path(root) / MANIFEST))
    return manifest

"""Run a bundle over a dataset in the sandbox, entry by entry, classifying every failure.

One sandboxed process serves entries one at a time (a request line in, a reply line out, each under
the per-entry wall clock and all under the per-run one). A failure costs only its entry: the process
is killed and the next entry starts a fresh sandbox (up to ``max_restarts``), so well-behaved entries
still get scores. Each failure is one class of :data:`~mt_eval.sovereign.release.ERROR_CLASSES`,
decided from what the harness observed (its own deadline, the exit status, the signal, the broker's
refusals, and — for memory and disk, which a process reports itself — the kept stderr). The texts of
requests and replies are never logged here; the report holds entry ids, classes and counts.

Scoring happens outside the sandbox through the normal pipeline (:func:`mt_eval.runcard.builder.build_card`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mt_eval.corpus.models import Dataset
from mt_eval.errors import UserError
from mt_eval.methods.base import MethodIdentity, Translation
from mt_eval.sovereign.broker import Broker, BrokerConfig, gateway_models, policy_egress
from mt_eval.sovereign.bundle import Bundle
from mt_eval.sovereign.consent import check_not_withdrawn, require_consent
from mt_eval.sovereign.custody import Share, gold_run_key
from mt_eval.sovereign.governance import Governance
from mt_eval.sovereign.protocol import ProtocolError, parse_reply, request_line
from mt_eval.sovereign.public_card import store_full_card
from mt_eval.sovereign.release import (
    ReleaseSchema,
    SecretIndex,
    leak_check,
    release_schema,
    released_text,
    result_document,
)
from mt_eval.sovereign.sandbox import (
    SANDBOX_UID,
    SandboxPolicy,
    Worker,
    WorkerDied,
    WorkerOverflow,
    WorkerTimeout,
    entry_command,
    new_workdir,
    sandbox_argv,
    seccomp_program,
    stage,
)
from mt_eval.sovereign.submitters import verify_submission
from mt_eval.sovereign.vault import open_segment

FULL_CARD_STATISTICS = "full_card.stats.npz"  # named on a gold run's full card; never written
_MEMORY_MARKS = (b"MemoryError", b"Cannot allocate memory", b"std::bad_alloc", b"out of memory")
_DISK_MARKS = (b"No space left on device", b"File too large", b"Disk quota exceeded")


@dataclass
class SandboxReport:
    """What the governance side learns about a run (entry ids and classes, never texts)."""

    outcomes: dict[int, str] = field(default_factory=dict)  # entry id -> "ok" or an error class
    egress_refusals: dict[int, list[str]] = field(default_factory=dict)
    starts: int = 0
    exit_statuses: list[int] = field(default_factory=list)
    stderr: bytes = b""
    stderr_dropped: int = 0
    egress: dict[str, Any] = field(default_factory=lambda: {"mode": "none"})
    elapsed_seconds: float = 0.0

    def errors(self) -> dict[str, int]:
        """Entries per error class; an entry whose LLM call was refused counts once as refused_egress
        (or budget_exhausted) even though its output is scored."""
        counts = Counter(v for v in self.outcomes.values() if v != "ok")
        for reasons in self.egress_refusals.values():
            counts["budget_exhausted" if "budget_exhausted" in reasons else "refused_egress"] += 1
        return dict(counts)

    def status(self, strict: bool) -> str:
        """``ok`` when some entry was translated (``strict``: every entry, and no refused egress);
        else the most frequent error class (ties: the first alphabetically)."""
        errors = self.errors()
        if not self.outcomes:
            return "no_entries"
        ok = sum(1 for v in self.outcomes.values() if v == "ok")
        if (ok == len(self.outcomes) and not errors) or (ok and not strict):
            return "ok"
        return max(sorted(errors), key=lambda k: errors[k])

    def as_log(self) -> dict[str, Any]:
        return {"outcomes": {str(k): v for k, v in self.outcomes.items()},
                "egress_refusals": {str(k): v for k, v in self.egress_refusals.items()},
                "starts": self.starts, "exit_statuses": self.exit_statuses, "errors": self.errors(),
                "stderr_bytes_dropped": self.stderr_dropped, "egress": self.egress,
                "elapsed_seconds": round(self.elapsed_seconds, 3)}


def classify(returncode: int, stderr: bytes, killed_by_us: bool) -> str:
    """The error class of a sandbox that stopped before answering (bwrap reports a signal as 128+N)."""
    sig = returncode - 128 if returncode > 128 else -returncode if returncode < 0 else 0
    if stderr.startswith(b"bwrap: "):  # bubblewrap itself could not set the sandbox up
        return "sandbox_failed"
    if sig == signal.SIGXCPU:
        return "timeout"
    if sig == signal.SIGXFSZ or any(m in stderr for m in _DISK_MARKS):
        return "exceeded_disk"
    if any(m in stderr for m in _MEMORY_MARKS) or (sig == signal.SIGKILL and not killed_by_us):
        return "exceeded_memory"
    return "crashed"


@dataclass
class _Session:
    """The current worker and how many have been started."""

    argv: list[str]
    policy: SandboxPolicy
    report: SandboxReport
    worker: Worker | None = None

    def get(self) -> Worker | None:
        if self.worker is None:
            if self.report.starts > self.policy.max_restarts:
                return None
            self.worker = Worker(self.argv, self.policy)
            self.report.starts += 1
        return self.worker

    def retire(self, kill: bool) -> tuple[int, bytes, bool]:
        worker, self.worker = self.worker, None
        assert worker is not None
        if kill:
            worker.kill()
        worker.close()
        self.report.stderr += bytes(worker.stderr)
        self.report.stderr = self.report.stderr[-self.policy.log_bytes:]
        self.report.stderr_dropped += worker.stderr_dropped
        code = worker.proc.returncode if worker.proc.returncode is not None else -1
        self.report.exit_statuses.append(code)
        return code, bytes(worker.stderr), worker.killed


def execute(bundle: Bundle, dataset: Dataset, policy: SandboxPolicy, workdir: Path,
            egress: BrokerConfig | None = None) -> tuple[list[Translation], SandboxReport]:
    """Translate every entry of ``dataset`` with ``bundle`` in the sandbox; failures as ``Translation.error``."""
    models = gateway_models(bundle, egress)  # a model the governance policy does not allow: refused before staging
    staged = stage(bundle, workdir)
    report = SandboxReport()
    broker_cm: contextlib.AbstractContextManager[Broker | None] = contextlib.nullcontext()
    if bundle.manifest.egress == "gateway":
        if egress is None:
            raise UserError('the bundle declares egress = "gateway" but no provider is configured',
                            hint="give --provider-url and --provider-key-env")
        (workdir / "run").mkdir(mode=0o700)  # only the sandbox's uid reaches the socket (and its budget)
        if os.geteuid() == 0:
            os.chown(workdir / "run", SANDBOX_UID, SANDBOX_UID)
        socket = workdir / "run" / "llm.sock"
        staged = replace(staged, socket=socket)
        broker_cm = Broker(replace(egress, models=models), socket)
    session = _Session(sandbox_argv(staged, policy, entry_command(bundle)), policy, report)
    src, tgt = dataset.info.source_language, dataset.info.target_language
    translations: list[Translation] = []
    start = time.monotonic()
    with broker_cm as broker:
        try:
            for entry in dataset.entries:
                left = policy.wall_seconds_per_run - (time.monotonic() - start)
                t0 = time.monotonic()
                if broker is not None:
                    broker.current_entry = entry.id
                text, outcome = _one(session, request_line(entry, src, tgt), entry.id,
                                     min(policy.wall_seconds_per_entry, left))
                if outcome == "sandbox_failed" and report.starts == 1:  # the machine, not the method
                    # bubblewrap's message is not quoted: a method could print "bwrap: <a secret source>"
                    raise UserError("the sandbox could not start (bubblewrap refused its setup)",
                                    hint="check `bwrap --unshare-all --die-with-parent true` on this machine; "
                                         "it needs user namespaces")
                report.outcomes[entry.id] = outcome
                translations.append(Translation(entry.id, text, None if outcome == "ok" else outcome,
                                                latency_seconds=time.monotonic() - t0))
        finally:
            if session.worker is not None:
                session.retire(kill=False)
            if broker is not None:
                report.egress = {"mode": "gateway", **broker.config.as_card(), **broker.counters.as_card()}
                report.egress_refusals = dict(broker.counters.refused_entries)
                _attribute_usage(translations, broker, bundle)
    report.elapsed_seconds = time.monotonic() - start
    return translations, report


def _attribute_usage(translations: list[Translation], broker: Broker, bundle: Bundle) -> None:
    """Each entry's LLM requests and the usage the provider reported for them, onto its result (the
    card's tokens and cost blocks then count them, as for any LLM method)."""
    counters = broker.counters
    for t in translations:
        if counters.entry_requests[t.entry_id]:
            t.usage = counters.entry_usage.get(t.entry_id, t.usage)
            t.extra["attempts"] = counters.entry_requests[t.entry_id]
            t.model_id = ", ".join(bundle.manifest.models)


def _one(session: _Session, line: bytes, entry_id: int, timeout: float) -> tuple[str, str]:
    """One entry's (translation, outcome)."""
    if timeout <= 0:
        return "", "timeout"
    worker = session.get()
    if worker is None:  # restarts used up: the rest fail with the last failure's class
        statuses = session.report.outcomes.values()
        return "", next((v for v in reversed(list(statuses)) if v != "ok"), "crashed")
    try:
        return parse_reply(worker.exchange(line, timeout), entry_id), "ok"
    except WorkerTimeout:  # our own deadline: whatever the process was doing, it ran out of time
        session.retire(kill=True)
        return "", "timeout"
    except WorkerDied:
        return "", classify(*session.retire(kill=False))
    except (WorkerOverflow, ProtocolError):
        session.retire(kill=True)
        return "", "protocol_error"


def identity_for(bundle: Bundle, policy: SandboxPolicy, egress_mode: str) -> MethodIdentity:
    """The method as the card records it: the bundle's name, class and version, pinned by its sha256."""
    m = bundle.manifest
    return MethodIdentity(name=m.name, method_class=m.method_class, version=m.version,
                          model_slug=", ".join(m.models) or m.name, provider="sovereign-sandbox",
                          config={"bundle_sha256": bundle.sha256, "egress": egress_mode,
                                  "sandbox": policy.as_card(), "terms_version": m.terms_version,
                                  **({"development_data": m.development_data} if m.development_data else {})})


def score(dataset: Dataset, bundle: Bundle, translations: list[Translation], report: SandboxReport,
          policy: SandboxPolicy, condition: str) -> dict[str, Any]:
    """The sealed full card (texts included: it stays with governance), scored outside the sandbox."""
    gateway = report.egress.get("mode") == "gateway"  # the broker counted what the provider reported
    return score_translations(dataset, identity_for(bundle, policy, str(report.egress["mode"])), translations,
                              report.elapsed_seconds, condition, cost_source="provider" if gateway else None)


def score_translations(dataset: Dataset, identity: MethodIdentity, translations: list[Translation],
                       elapsed_seconds: float, condition: str, cost_source: str | None = None) -> dict[str, Any]:
    """A sovereign full card of any method's translations (a bundle's, or a contest's weights-only model run
    in-process), so every entry of a vault is scored, sealed and ranked alike."""
    from mt_eval.analyzers.registry import require_analyser
    from mt_eval.languages.card import language_card
    from mt_eval.metrics.embeddings import SemanticConfig
    from mt_eval.metrics.semantic import DEFAULT_BACKEND, SemanticScore
    from mt_eval.runcard.builder import RunInfo, build_card
    from mt_eval.scoring.pipeline import source_warnings

    target, source = language_card(dataset.info.target_language), language_card(dataset.info.source_language)
    require_analyser(target)
    info = RunInfo(str(uuid.uuid4()), datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), elapsed_seconds,
                   condition, warnings=source_warnings(dataset, target, source), cost_source=cost_source)
    # the card seals its statistics' sha256 (the bytes are not kept: governance rank rebuilds them from
    # results[] and ranks only when they hash the same, i.e. under the metric versions that scored the run)
    # the metrics ``mt-eval run`` scores by default: semantic_score with the bundled e5 too (§72; local, on CPU,
    # here outside the sandbox), so a bundle's card scores what the same method's ordinary run does
    semantic = SemanticScore(SemanticConfig.parse(DEFAULT_BACKEND, None, None))
    card, _ = build_card(dataset, identity, translations, info, target, source,
                         statistics_file=FULL_CARD_STATISTICS, opt_in=[semantic])
    return card


@dataclass
class Evaluation:
    """One preflight or run: the released document, the governance-side report, the full card."""

    result: dict[str, Any]
    released: str  # RESULT.json's exact text
    report: SandboxReport
    card: dict[str, Any] | None


def _evaluate(bundle: Bundle, dataset: Dataset, policy: SandboxPolicy, egress: BrokerConfig | None,
              segment: str, strict: bool, organisation: str | None, release: ReleaseSchema) -> Evaluation:
    workdir = new_workdir()
    try:
        translations, report = execute(bundle, dataset, policy, workdir / "stage", egress)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    status = report.status(strict)
    card = score(dataset, bundle, translations, report, policy, f"sovereign:{segment}") \
        if any(v == "ok" for v in report.outcomes.values()) else None
    sovereign = {"bundle_sha256": bundle.sha256, "method": bundle.manifest.name,
                 "version": bundle.manifest.version, "terms_version": bundle.manifest.terms_version,
                 "segment": segment, "entries": len(dataset.entries), "sandbox": policy.as_card(),
                 "egress": {k: v for k, v in report.egress.items() if k in ("mode", "provider", "models")},
                 "organisation": organisation}
    document = result_document(status, card, report.errors(), len(dataset.entries), sovereign, release)
    return Evaluation(document, released_text(document, release), report, card)


def preflight(bundle: Bundle, dataset: Dataset, governance_dir: Path, policy: SandboxPolicy,
              egress: BrokerConfig | None = None, *, signature: Path) -> Evaluation:
    """Run ``bundle`` on the public development entries of ``dataset``; passes when every entry is
    answered without a refused LLM call. Only a bundle signed by a registered submitter key
    (``signature``: ``submitters.verify_submission``). Recorded in the governance log either way (the
    gold run looks for a passed preflight of the same sha256)."""
    public = [e for e in dataset.entries if e.segment.value == "development"]
    if not public:
        raise UserError("the corpus has no development entries to preflight on", file=dataset.path or None)
    gov = Governance(governance_dir)
    check_not_withdrawn(gov, dataset.info)  # a community that withdrew consent is not evaluated at all
    submitter = verify_submission(gov, bundle, signature)
    egress = policy_egress(egress, gov.policy())  # the policy's models, never the caller's or the bundle's
    evaluation = _evaluate(bundle, dataset.model_copy(update={"entries": public}), policy, egress,
                           "development", True, gov.policy().organisation,
                           release_schema(gov.policy().public_breakdowns, preflight=True))
    gov.record({"kind": "preflight", "bundle_sha256": bundle.sha256, "method": bundle.manifest.name,
                "segment": "development", "status": evaluation.result["status"], "submitter": submitter.name,
                "submitter_key": submitter.key})
    return evaluation


def run(bundle: Bundle, vault_dir: Path, identity: Path | Sequence[Share], segment: str, governance_dir: Path,
        policy: SandboxPolicy, egress: BrokerConfig | None = None, *, signature: Path) -> Evaluation:
    """A gold run: only a bundle signed by a registered submitter key (``signature``) whose sha256 passed
    preflight, within that key's budget; the result
    passes the leak check before it is returned. The audit line records the released text's hash.

    ``identity``: a custodian's identity file, or for a vault held by quorum the custodians' shares
    (and then their approvals in the log: ``custody.gold_run_key``; the run's line consumes them)."""
    if seccomp_program() is None:  # without it a method can ptrace the sandbox's own init (docs/decisions.md §37)
        raise UserError("a gold run needs the seccomp filter, and libseccomp is not available here",
                        hint="apt-get install libseccomp2")
    gov = Governance(governance_dir)
    submitter = verify_submission(gov, bundle, signature)
    egress = policy_egress(egress, gov.policy())  # the policy's models, never the caller's or the bundle's
    if not gov.preflight_passed(bundle.sha256):
        raise UserError(f"bundle {bundle.sha256[:12]}… has not passed preflight",
                        hint="mt-eval sovereign preflight BUNDLE --corpus PUBLIC first (any change to a file "
                             "changes the sha256)")
    gov.check_allowed(bundle.sha256, bundle.manifest.name, submitter.key, submitter.name)
    key, custody = gold_run_key(vault_dir, identity, gov, bundle.sha256, segment)
    dataset = open_segment(vault_dir, key, segment)
    require_consent(gov, dataset.info, [segment], doing="run on")  # before the method sees one entry
    release = release_schema(gov.policy().public_breakdowns)  # what may leave: docs/decisions.md §44
    evaluation = _evaluate(bundle, dataset, policy, egress, segment, False, gov.policy().organisation, release)
    secrets = SecretIndex([t for e in dataset.entries for t in (e.source, e.reference, *e.references)])
    event = {"kind": "run", "bundle_sha256": bundle.sha256, "method": bundle.manifest.name, "segment": segment,
             "status": evaluation.result["status"], "run_card_hash": (evaluation.card or {}).get("run_card_hash"),
             "submitter": submitter.name, "submitter_key": submitter.key, **custody}
    try:
        leak_check(evaluation.released, secrets)
    except UserError:  # the run happened and counts; nothing is released
        gov.record({**event, "status": "release_refused"})
        raise
    audit = gov.record({**event, "result_sha256": hashlib.sha256(evaluation.released.encode()).hexdigest()})
    evaluation.result["sovereign"]["audit_line_sha256"] = audit
    evaluation.released = released_text(evaluation.result, release)
    leak_check(evaluation.released, secrets)
    if evaluation.card is not None:  # the full card, texts and all, stays with governance, encrypted
        store_full_card(evaluation.card, vault_dir, governance_dir)
    return evaluation


def write_logs(evaluation: Evaluation, directory: Path) -> list[Path]:
    """The sandbox report and the method's kept stderr (mode 0600): for the developer after a
    preflight (public data), for governance only after a gold run."""
    import json

    directory.mkdir(parents=True, exist_ok=True)
    paths = [directory / "sandbox_report.json", directory / "stderr.log"]
    blobs = [json.dumps(evaluation.report.as_log(), indent=2).encode() + b"\n", evaluation.report.stderr]
    for path, blob in zip(paths, blobs, strict=True):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(blob)
    return paths

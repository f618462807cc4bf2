"""Sovereign evaluation commands: ``submission check|sign``, ``sovereign preflight`` and ``sovereign run``.

The work is in ``mt_eval.sovereign`` (bundle, sandbox, broker, runner, release); these commands parse
options and write files. ``run`` prints the status only: RESULT.json is the one thing a submitter gets.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from mt_eval.cli.common import fail, opt, out

if TYPE_CHECKING:
    from mt_eval.sovereign.broker import BrokerConfig

sovereign_app = typer.Typer(help="Sovereign evaluation: a submitted bundle runs in a sandbox, only scores leave.",
                            no_args_is_help=True)
submission_app = typer.Typer(help="Submission bundles (method.toml and what it names).", no_args_is_help=True)

GovernanceOpt = Annotated[Path, opt("Governance directory (audit log, policy.toml, sandbox.toml).", "--governance")]
ProviderOpt = Annotated[str | None, opt("Egress gateway: the governance-configured provider's OpenAI-compatible "
                                        "base URL (only for bundles with egress = \"gateway\").", "--provider-url")]
KeyEnvOpt = Annotated[str | None, opt("Name of the variable holding the provider API key (the method never "
                                      "sees it).", "--provider-key-env")]
TokensOpt = Annotated[int, opt("Egress budget: prompt + completion tokens for the whole run.", "--token-budget")]
CostOpt = Annotated[float, opt("Egress budget in USD for the whole run.", "--cost-budget")]
ResultOpt = Annotated[Path, opt("Where RESULT.json goes.", "--out", "-o")]
SignatureOpt = Annotated[Path | None, opt("The submission signature (mt-eval submission sign); default: BUNDLE.sig "
                                          "beside the bundle.", "--signature")]


BundleArg = Annotated[Path, typer.Argument(help="The bundle: a directory with method.toml, or a .tar.gz/.zip of one.")]


@submission_app.command("check")
def check(bundle: BundleArg) -> None:
    """Check a bundle: method.toml's fields, the files it names, pinned wheels; every problem, located.

    Prints the bundle's sha256 when it is fine (the hash preflight and run insist on).

    Example: mt-eval submission check examples/bundles/glossary-python
    """
    from mt_eval.sovereign.bundle import check_bundle

    found, problems = check_bundle(bundle)
    if problems or found is None:
        fail([p.one_line() for p in problems], 2)
        return
    m = found.manifest
    out.print(f"{escape(m.name)} {escape(m.version)}: ok ({len(found.files())} files, egress {m.egress})")
    out.print(f"sha256 {found.sha256}", highlight=False)


@submission_app.command("sign")
def sign(
    bundle: BundleArg,
    key: Annotated[Path, opt("Your submitter private key (mt-eval keys new); governance registers its .pub.",
                             "--key", "-k")],
    output: Annotated[Path | None, opt("Where the signature goes (default: BUNDLE.sig beside the bundle).",
                                       "--out", "-o")] = None,
    signer: Annotated[str | None, opt("The name the signature declares (default: the one in KEY's .pub).",
                                      "--signer")] = None,
) -> None:
    """Sign a bundle as its submitter: an Ed25519 signature of the bundle's sha256, in a detached file.

    preflight and run accept a bundle only with a valid signature by a key governance registered
    (mt-eval governance submitter add); any change to a file of the bundle needs a new signature.

    Example: mt-eval submission sign examples/bundles/glossary-python --key alice.key
    """
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.submitters import sign_submission

    found = load_bundle(bundle)
    path, signature = sign_submission(found, bundle, key, output, signer)
    out.print(f"signed bundle {found.sha256[:12]}… with key {signature.key_id}: {escape(str(path))}", highlight=False)


def _signature(bundle: Path, signature: Path | None) -> Path:
    from mt_eval.sovereign.submitters import default_signature

    return signature if signature is not None else default_signature(bundle)


def _egress(url: str | None, key_env: str | None, tokens: int, cost: float) -> BrokerConfig | None:
    from mt_eval.sovereign.broker import egress_config

    return egress_config(url, key_env, tokens, cost)


@sovereign_app.command("preflight")
def preflight(
    bundle: BundleArg,
    corpus: Annotated[Path, opt("The public corpus (a vault's public.json): its development entries.", "--corpus")],
    governance: GovernanceOpt = Path("governance"),
    result: ResultOpt = Path("PREFLIGHT.json"),
    logs: Annotated[Path, opt("Where the sandbox report and the method's stderr go.", "--logs")] = Path(
        "preflight-logs"),
    provider_url: ProviderOpt = None,
    provider_key_env: KeyEnvOpt = None,
    token_budget: TokensOpt = 200_000,
    cost_budget: CostOpt = 5.0,
    signature: SignatureOpt = None,
) -> None:
    """Run a bundle on the public development segment in the same sandbox, with the same limits, as
    a gold run, and give the developer everything: the result, the sandbox report, stderr.

    A gold run accepts only a bundle (by sha256) whose preflight passed: every entry answered.

    Example: mt-eval sovereign preflight examples/bundles/glossary-python --corpus vault/public.json
    """
    from mt_eval.corpus.loaders import load_corpus
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.runner import preflight as run_preflight
    from mt_eval.sovereign.runner import write_logs
    from mt_eval.sovereign.sandbox import load_policy

    found = load_bundle(bundle)
    egress = _egress(provider_url, provider_key_env, token_budget, cost_budget)
    evaluation = run_preflight(found, load_corpus(corpus), governance, load_policy(governance), egress,
                               signature=_signature(bundle, signature))
    result.write_text(evaluation.released, encoding="utf-8")
    written = write_logs(evaluation, logs)
    status = evaluation.result["status"]
    out.print(f"preflight {'passed' if status == 'ok' else 'failed: ' + status}; result {escape(str(result))}, "
              f"logs {escape(str(written[0].parent))}")
    out.print(f"bundle sha256 {found.sha256}", highlight=False)
    if status != "ok":
        raise typer.Exit(1)


@sovereign_app.command("run")
def run(
    bundle: Annotated[Path, opt("The bundle directory (its sha256 must have passed preflight).", "--bundle")],
    vault: Annotated[Path, opt("The sealed vault directory.", "--vault")],
    identity: Annotated[Path | None, opt("A custodian identity file (mt-eval vault keygen).", "--identity")] = None,
    share: Annotated[list[Path] | None, opt("For a vault held by quorum: a custodian's share file, once per "
                                            "custodian (as many as the threshold; each must have approved "
                                            "this run: mt-eval governance approve).", "--share")] = None,
    segment: Annotated[str, opt("The secret segment to run on.", "--segment")] = "gold_standard",
    governance: GovernanceOpt = Path("governance"),
    result: ResultOpt = Path("RESULT.json"),
    provider_url: ProviderOpt = None,
    provider_key_env: KeyEnvOpt = None,
    token_budget: TokensOpt = 200_000,
    cost_budget: CostOpt = 5.0,
    signature: SignatureOpt = None,
) -> None:
    """Run a preflighted bundle on a vault segment in the sandbox; only RESULT.json leaves.

    RESULT.json: status (ok or an error class), the composite (steps of 0.01) and chrF++ (whole points),
    failed entries as none/few/many, only the breakdowns policy.toml declares public, the sovereign block.
    The full card goes to the governance directory, encrypted; the sandbox report and the method's stderr
    to GOVERNANCE/sandbox-logs/ (never to the submitter). Every run counts against the submitter key's
    budget. A vault held by quorum opens only with
    --share files (the identity is rebuilt in memory) and after as many custodians' approvals of this
    bundle and segment since its last run; the run consumes them.

    Example: mt-eval sovereign run --bundle B --vault vault --share c1.share --share c2.share --out RESULT.json
    """
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.custody import identity_or_shares
    from mt_eval.sovereign.runner import run as run_gold
    from mt_eval.sovereign.runner import write_logs
    from mt_eval.sovereign.sandbox import load_policy

    key = identity_or_shares(identity, share or [])
    found = load_bundle(bundle)
    egress = _egress(provider_url, provider_key_env, token_budget, cost_budget)
    evaluation = run_gold(found, vault, key, segment, governance, load_policy(governance), egress,
                          signature=_signature(bundle, signature))
    result.write_text(evaluation.released, encoding="utf-8")
    write_logs(evaluation, governance / "sandbox-logs" / evaluation.result["sovereign"]["audit_line_sha256"][:16])
    out.print(f"status {evaluation.result['status']}; result {escape(str(result))}")

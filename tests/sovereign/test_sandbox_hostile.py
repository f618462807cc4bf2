"""The hostile bundle suite: one bundle, one attack per entry, tiny limits; every attempt is blocked
and named (by what it obtained, or by the sandbox report's error class) while the well-behaved entries
between them are still answered and scored.

References: the host itself (the files and the server the attacks aim at exist and are readable from
here), the kernel's answers inside the sandbox, and the report's classes against what each attack does.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from mt_eval.sovereign.bundle import load_bundle
from mt_eval.sovereign.runner import SandboxReport, execute, score
from mt_eval.sovereign.sandbox import new_workdir
from support.fake_openai import FakeOpenAI
from support.sovereign import REPO, TINY, small_dataset, write_policy


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory, sealed: Path, custodians: list) -> dict:
    """Run the hostile bundle once over 30 real entries; every test reads this one run."""
    tmp = tmp_path_factory.mktemp("hostile")
    governance = write_policy(tmp / "governance")
    (governance / "audit.jsonl").write_text('{"kind": "run"}\n')
    with FakeOpenAI() as server:  # a live TCP server on the host's loopback: the sandbox must not reach it
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        attacks = {
            2: ("read", str(sealed / "secret.age")), 3: ("read", str(custodians[0].key)),
            4: ("read", "/etc/shadow"), 5: ("read", str(REPO / "src/mt_eval/sovereign/vault.py")),
            6: ("read", str(governance / "audit.jsonl")), 7: ("listdir", str(Path.home())),
            8: ("tcp", ["127.0.0.1", port]), 9: ("tcp", ["1.1.1.1", 443]), 10: ("udp", ["8.8.8.8", 53]),
            11: ("dns", "example.com"), 12: ("listdir", "/proc/1/root"), 13: ("read", "/proc/1/root/etc/shadow"),
            14: ("unshare", None), 15: ("ptrace", None), 16: ("fork_bomb", None), 17: ("allocate", None),
            18: ("spin", None), 19: ("fill_tmp", None), 20: ("sleep", None), 21: ("stdout_source", None),
            22: ("stderr_source", None), 23: ("malformed", None), 24: ("wrong_id", None), 25: ("exit", None),
            26: ("environ", None),
        }
        bundle_dir = tmp / "hostile"
        subprocess.run(["cp", "-r", str(REPO / "tests/sovereign/bundles/hostile"), str(bundle_dir)], check=True)
        (bundle_dir / "attacks.json").write_text(json.dumps(attacks))
        dataset = small_dataset(30)
        bundle = load_bundle(bundle_dir)
        translations, report = execute(bundle, dataset, TINY, new_workdir() / "stage")
        assert not server.requests  # nothing reached the host's server
    texts = {t.entry_id: t.text for t in translations}
    return {"texts": texts, "report": report, "attacks": attacks, "dataset": dataset, "bundle": bundle,
            "translations": translations}


def _outcome(run: dict, entry: int) -> str:
    report: SandboxReport = run["report"]
    return report.outcomes[entry]


@pytest.mark.parametrize("entry", [2, 3, 4, 5, 6])
def test_files_outside_the_sandbox_do_not_exist_in_it(hostile_run: dict, entry: int) -> None:
    path = Path(hostile_run["attacks"][entry][1])
    assert path.read_bytes()  # the file is real and readable here, outside
    assert hostile_run["texts"][entry] == "BLOCKED:FileNotFoundError"
    assert _outcome(hostile_run, entry) == "ok"


def test_the_users_home_and_proc_1_root_show_the_sandbox_only(hostile_run: dict) -> None:
    assert hostile_run["texts"][7] == "BLOCKED:FileNotFoundError"  # /root is not mounted
    listed = hostile_run["texts"][12].removeprefix("LISTED:").split(",")
    assert set(listed) <= {"bundle", "harness", "tmp", "proc", "dev", "usr", "bin", "lib", "lib64", "etc", "run"}
    assert "work" not in listed and "root" not in listed and "run" not in listed  # egress none: no broker socket
    assert hostile_run["texts"][13] == "BLOCKED:FileNotFoundError"


@pytest.mark.parametrize("entry", [8, 9, 10, 11])
def test_no_network_tcp_udp_or_dns(hostile_run: dict, entry: int) -> None:
    assert hostile_run["texts"][entry].startswith("BLOCKED:")


def test_no_new_namespaces_and_no_process_of_the_harness_in_sight(hostile_run: dict) -> None:
    assert hostile_run["texts"][14] == "BLOCKED:unshare"
    # only the sandbox's own processes are visible (its init, the method), and tracing them is refused
    count, verdict = hostile_run["texts"][15].removeprefix("PIDS:").split(":", 1)
    assert int(count) <= 3 and verdict == "BLOCKED:Operation not permitted"


def test_the_method_sees_an_empty_environment(hostile_run: dict) -> None:
    env = hostile_run["texts"][26]
    names = {pair.split("=")[0] for pair in env.removeprefix("ENV:").split("READ:")[0].split(",")}
    assert names <= {"PATH", "HOME", "LANG", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "MT_EVAL_LLM_SOCKET", "PWD"}


@pytest.mark.parametrize(("entry", "named"), [
    (16, "timeout"), (17, "exceeded_memory"), (18, "timeout"), (19, "exceeded_disk"), (20, "timeout"),
    (21, "protocol_error"), (23, "protocol_error"), (24, "protocol_error"), (25, "crashed")])
def test_disruptive_attempts_are_named_in_the_report(hostile_run: dict, entry: int, named: str) -> None:
    assert _outcome(hostile_run, entry) == named
    assert hostile_run["texts"][entry] == ""  # a failed entry is scored as empty output


def test_the_fork_bomb_stops_at_the_process_limit(hostile_run: dict) -> None:
    forked = [int(line.split()[1]) for line in hostile_run["report"].stderr.decode().splitlines()
              if line.startswith("forked ")]
    assert forked and forked[0] < TINY.processes


def test_printing_a_source_on_stderr_goes_to_the_governance_log_only(hostile_run: dict) -> None:
    source = hostile_run["dataset"].entries[21].source
    assert source in hostile_run["report"].stderr.decode()
    assert _outcome(hostile_run, 22) == "ok"


def test_well_behaved_entries_are_answered_and_scored(hostile_run: dict) -> None:
    dataset, texts = hostile_run["dataset"], hostile_run["texts"]
    quiet = [e for e in dataset.entries if e.id not in hostile_run["attacks"]]
    assert len(quiet) == 5
    for entry in quiet:
        assert texts[entry.id] == entry.source and _outcome(hostile_run, entry.id) == "ok"
    report = hostile_run["report"]
    assert report.errors() == {"timeout": 3, "exceeded_memory": 1, "exceeded_disk": 1, "protocol_error": 3,
                               "crashed": 1}
    # 3 timeouts and 3 protocol errors: ties go alphabetically
    assert report.status(strict=False) == "ok" and report.status(strict=True) == "protocol_error"
    card = score(dataset, hostile_run["bundle"], hostile_run["translations"], report, TINY, "test")
    assert card["scores"]["composite"] is not None and card["scores"]["errors"] == 9


def test_no_sandbox_process_survives_the_run(hostile_run: dict) -> None:
    ps = subprocess.run(["ps", "-u", "65534", "-o", "args="], capture_output=True, text=True).stdout
    assert "hostile.py" not in ps and "mt-eval-sandbox" not in ps


FILL = '''import json, os, sys

PLACES = ["/", "/dev", "/dev/shm", "/run", "/tmp", os.environ["HOME"], "/bundle", "/deps", "/harness", "/var",
          "/etc", "/usr", "/proc"]


def fill(place, files_at_most):
    """Write 1 MiB files (under RLIMIT_FSIZE) until refused; the bytes that landed, then removed."""
    made = []
    try:
        for i in range(files_at_most):
            made.append(os.path.join(place, "fill-%d" % i))
            with open(made[-1], "wb") as fh:
                fh.write(b"x" * (1 << 20))
    except OSError:
        pass
    landed = sum(os.path.getsize(p) for p in made if os.path.isfile(p))
    for p in made:
        try:
            os.remove(p)
        except OSError:
            pass
    return landed


for line in sys.stdin:
    request = json.loads(line)
    landed = {place: fill(place, int(request["source"])) for place in PLACES}
    print(json.dumps({"entry_id": request["entry_id"], "predicted": json.dumps(landed)}), flush=True)
'''


def test_every_writable_filesystem_in_the_sandbox_stops_at_the_tmpfs_cap(tmp_path: Path) -> None:
    """Memory filesystems without a size were the root, /dev and /dev/shm (240 MiB written to each):
    a method writing three times the cap to every folder it can see lands at most the cap anywhere,
    and nothing at all where the sandbox is read-only."""
    from dataclasses import replace

    root = tmp_path / "fill"
    root.mkdir()
    (root / "fill.py").write_text(FILL)
    (root / "README.md").write_text("# fill\n")
    (root / "method.toml").write_text('name = "fill"\nversion = "1"\nmethod_class = "custom-plugin"\n'
                                      'terms_version = "sovereign-terms-1"\n'
                                      '[entry]\ncommand = ["python3", "fill.py"]\n')
    cap = TINY.tmpfs_mb << 20
    entry = small_dataset(1).entries[0]
    dataset = small_dataset(1).model_copy(update={"entries": [entry.model_copy(update={
        "source": str(3 * TINY.tmpfs_mb)})]})
    translations, report = execute(load_bundle(root), dataset, replace(TINY, wall_seconds_per_entry=30),
                                   new_workdir() / "stage")
    assert report.errors() == {}, report.stderr
    landed = json.loads(translations[0].text)
    print("bytes landed per place:", landed)
    assert all(0 <= n <= cap for n in landed.values()), landed
    assert landed["/tmp"] > cap // 2 and landed["/dev/shm"] > cap // 2  # writable, and stopped at the cap
    assert {p for p, n in landed.items() if n} == {"/tmp", "/dev/shm"}  # $HOME is /tmp

"""The Ray executor on a real local Ray cluster (``ray start --head --num-cpus 2``, two worker
processes): the same sweep gives the same cards as the local executor; without Ray, one line."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sweep_helpers import FAST, FakeOpenAI, LocalSweep, Oracle, cards_in, expected, write_sweep
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.sweep.execute import Outcome, write_back
from mt_eval.sweep.plan import load_plan
from mt_eval.sweep.ray_executor import key_variables

LATENCY = ("avg_latency_seconds", "median_latency_seconds", "p95_latency_seconds")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    proc: subprocess.Popen[bytes]
    log: Path
    address: str


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Cluster]:
    """A head node with 2 CPUs in a process group of its own, every port chosen free (other Ray
    clusters on this machine are left alone), started without waiting for it; the group is ended,
    and only it, afterwards."""
    tmp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    port = _free_port()
    ports = {f"--{name}": str(_free_port()) for name in (
        "dashboard-port", "dashboard-agent-listen-port", "dashboard-agent-grpc-port",
        "metrics-export-port", "runtime-env-agent-port", "node-manager-port", "object-manager-port")}
    log = Path(tmp) / "start.log"
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}
    with log.open("wb") as sink:
        proc = subprocess.Popen([str(Path(sys.executable).with_name("ray")), "start", "--head", "--num-cpus", "2",
                                 "--port", str(port), "--temp-dir", tmp, "--include-dashboard=false",
                                 "--disable-usage-stats", "--block", *(x for kv in ports.items() for x in kv)],
                                stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        yield Cluster(proc, log, f"127.0.0.1:{port}")
    finally:
        for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
            try:
                os.killpg(proc.pid, sig)  # the cluster's own group: gcs, raylet, its workers
            except ProcessLookupError:
                break
            try:
                proc.wait(wait)
                time.sleep(0.5)
                os.killpg(proc.pid, 0)  # raises once no process of the group is left
            except (subprocess.TimeoutExpired, PermissionError):
                continue
            except ProcessLookupError:
                break
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_address(ray_cluster: Cluster) -> str:
    """The cluster's address once it is up (it starts while the local sweep runs)."""
    deadline = time.monotonic() + 60
    while b"will now block forever" not in ray_cluster.log.read_bytes():  # printed once the node is up
        assert ray_cluster.proc.poll() is None and time.monotonic() < deadline, \
            ray_cluster.log.read_text(errors="replace")[-2000:]
        time.sleep(0.2)
    return ray_cluster.address


def _comparable(card: dict[str, object]) -> dict[str, object]:
    scores = dict(card["scores"])  # type: ignore[call-overload]
    for key in LATENCY:
        scores.pop(key)
    return scores


@pytest.mark.slow  # a local Ray cluster: the slow stage (CI's second stage runs it on every submission)
def test_ray_executor_gives_the_local_executor_s_cards(ray_cluster: Cluster, local_sweep: LocalSweep,
                                                       ray_address: str, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["sweep", str(local_sweep.file), "--executor", "ray", "--ray-address", ray_address,
                                      "--runs-dir", str(runs), "--no-cache", "-j", "2", "--concurrency", "4", *FAST],
                                terminal_width=400)
    assert result.exit_code == 0, result.output
    remote, local = cards_in(runs / "demo"), cards_in(local_sweep.root)
    assert sorted(remote) == sorted(local) and len(remote) == 13
    for folder, card in remote.items():
        mine = local[folder]
        assert card["run_id"] != mine["run_id"]  # a run of its own…
        assert card["fingerprint"] == mine["fingerprint"]  # …of the same configuration…
        assert _comparable(card) == _comparable(mine)  # …with identical scores, intervals and breakdowns
        assert [r["predicted"] for r in card["results"]] == [r["predicted"] for r in mine["results"]]
    workers = set(re.findall(r"\bran\s+\S+:(\d+)\s", result.stdout))
    assert len(workers) >= 2 and str(os.getpid()) not in workers, result.stdout  # cells ran in Ray workers


def test_ray_missing_is_one_line_and_nothing_written(local_sweep: LocalSweep, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` now fails as on a machine without it
    result = CliRunner().invoke(app, ["sweep", str(local_sweep.file), "--executor", "ray", "--ray-address",
                                      "127.0.0.1:1", "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --executor ray needs Ray, which is not installed (pip install 'ray>=2.9', or use the default "
        "--executor local)"]
    assert not (tmp_path / "runs").exists()


def test_the_driver_writes_the_card_a_remote_worker_sent(local_sweep: LocalSweep, tmp_path: Path) -> None:
    """On a cluster whose workers have other disks, the card exists only as the bytes a task returned."""
    _, cells = load_plan(local_sweep.file)
    sent = local_sweep.root / cells[-1].slug / "run_card.json"
    target = tmp_path / "driver" / cells[-1].slug / "run_card.json"
    write_back(Outcome(cells[-1], "ran", target, 0.0, card=sent.read_bytes(),
                       statistics=sent.with_name("run_card.stats.npz").read_bytes()))
    assert target.read_bytes() == sent.read_bytes() and not list(target.parent.glob("*.tmp"))
    verified = CliRunner().invoke(app, ["verify", str(target)])
    assert verified.exit_code == 0, verified.output  # the seal and its statistics sidecar, as written there


@pytest.mark.slow  # a local Ray cluster: the slow stage (CI's second stage runs it on every submission)
def test_ray_tasks_get_the_key_variable_their_cells_name(ray_address: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The cluster was started without the key: only the driver has it, and hands it to its tasks."""
    monkeypatch.setenv("MT_EVAL_SWEEP_RAY_KEY", "sk-sweep-test")
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-not-named")
    with FakeOpenAI(responder=Oracle(), api_key="sk-sweep-test") as server:
        file = write_sweep(tmp_path, server.base_url, name="keyed", models=("test/good",), temperatures=(0.0,),
                           prompts=False, apertium=False, method=('api_key_env = "MT_EVAL_SWEEP_RAY_KEY"',))
        _, cells = load_plan(file)
        assert key_variables(cells) == {"MT_EVAL_SWEEP_RAY_KEY": "sk-sweep-test"}  # nothing it does not name
        result = CliRunner().invoke(app, ["sweep", str(file), "--executor", "ray", "--ray-address", ray_address,
                                          "--runs-dir", str(tmp_path / "runs"), "--no-cache", *FAST])
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 6 and {r.status for r in server.requests} == {200}
    (card,) = cards_in(tmp_path / "runs" / "keyed").values()
    assert card["scores"]["errors"] == 0
    assert all(r["predicted"] == expected("test/good", 0.0, False, r["source"], r["reference"])
               for r in card["results"])

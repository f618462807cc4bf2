"""The bubblewrap sandbox a submitted method runs in: policy, staging, command line, one worker process.

What the sandbox sees (everything else does not exist in it): ``/usr``, ``/bin``, ``/lib*`` and the
dynamic-linker cache read-only; the bundle (a private copy, so the bytes hashed are the bytes run)
read-only at ``/bundle``, its working directory; the harness shim at ``/harness``; installed wheels at
``/deps``; with ``egress = "gateway"`` the broker's Unix socket at ``/run/mt-eval/llm.sock``. The only
writable places are two private tmpfs of ``tmpfs_mb`` each, ``/tmp`` (also ``$HOME``) and ``/dev/shm``:
the root and ``/dev`` (memory filesystems bwrap makes, without a size) are remounted read-only last.
New user, PID, IPC, UTS, cgroup and network namespaces (no network device but loopback), no
capabilities (bounding set empty), nested user namespaces disabled (so ``unshare`` fails),
``--die-with-parent``, ``--new-session``, an empty environment. When the harness runs as root the
sandbox is started as uid/gid 65534: a root-owned process is exempt from ``RLIMIT_NPROC`` (measured: a
fork bomb is not stopped), and files outside the sandbox stay unreadable even if a bind were ever
wrong. rlimits (CPU seconds, address space, processes, file size, open files, no core files) are set
before ``bwrap`` starts and inherited. A seccomp filter (:mod:`~mt_eval.sovereign.seccomp`) refuses
:data:`BLOCKED_SYSCALLS`: without it the method could ptrace the sandbox's own init (same uid) and
stop it.

Nothing of a bundle runs outside the sandbox: its wheels are unpacked by PyPA's ``installer`` in a
sandbox of their own (the same namespaces, seccomp and rlimits, as uid 65534, wheelhouse read-only,
``/deps`` the one writable folder), never by pip on the host and never as root (:func:`stage`).

Methods run on the system's ``/usr/bin/python3`` (the harness's interpreter may live where the
sandbox uid cannot read, e.g. under ``/root``); a Python bundle imports a staged copy of the method
protocol (``mt_eval/methods/base.py``, ``errors.py``: standard library only), never the harness.

Limits, honestly: ``RLIMIT_AS`` is per process (no cgroup here to cap the sandbox's total memory),
``RLIMIT_NPROC`` counts every process of the sandbox uid on the machine, and the two tmpfs are memory
(at most ``2 × tmpfs_mb``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import resource
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mt_eval.errors import UserError
from mt_eval.sovereign.bundle import Bundle, copy_bundle, scan_bundle
from mt_eval.sovereign.seccomp import BLOCKED_SYSCALLS, seccomp_program
from mt_eval.sovereign.wheels import wheel_refusal

SANDBOX_UID = 65534  # nobody
SOCKET_IN_SANDBOX = "/run/mt-eval/llm.sock"
_SYSTEM_DIRS = ("/usr", "/bin", "/lib", "/lib64", "/etc/alternatives", "/etc/ld.so.cache")
# the files of the harness a Python bundle's class imports (stdlib-only modules), staged at /harness
_SHIM_MODULES = ("errors.py", "methods/base.py", "sovereign/shim.py")


@dataclass(frozen=True)
class SandboxPolicy:
    """The declared limits, recorded on the card's ``sovereign`` block; preflight and run use the same."""

    wall_seconds_per_entry: float = 60.0
    wall_seconds_per_run: float = 3600.0
    cpu_seconds: int = 600
    memory_mb: int = 2048  # RLIMIT_AS of every process in the sandbox
    processes: int = 64  # RLIMIT_NPROC (for the sandbox uid)
    file_size_mb: int = 64  # RLIMIT_FSIZE
    open_files: int = 256
    tmpfs_mb: int = 128
    max_restarts: int = 20  # a method that keeps failing is not restarted for ever
    log_bytes: int = 256 * 1024  # stderr kept for the governance log; the rest is counted, not kept

    def as_card(self) -> dict[str, Any]:
        return {**asdict(self), "runtime": "bubblewrap",
                "namespaces": ["user", "pid", "ipc", "uts", "net", "cgroup"], "capabilities": "none",
                "seccomp_blocked": list(BLOCKED_SYSCALLS) if seccomp_program() else []}


@dataclass(frozen=True)
class Staged:
    """A bundle copied for one evaluation, with the harness shim and the installed wheels beside it."""

    root: Path
    bundle: Path
    harness: Path
    deps: Path | None
    socket: Path | None = None


def bwrap_binary() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise UserError("bubblewrap is not installed", hint="apt-get install bubblewrap")
    return found


def stage(bundle: Bundle, workdir: Path) -> Staged:
    """Copy the bundle (the safe walk of :func:`~mt_eval.sovereign.bundle.copy_bundle`, no ``__pycache__``)
    and the shim modules, and unpack the pinned wheels in the sandbox (:func:`_unpack_wheels`)."""
    workdir.mkdir(parents=True, exist_ok=True)
    os.chmod(workdir, 0o755)  # the sandbox uid must traverse it
    dest = workdir / "bundle"
    # the bytes run are the bytes hashed (and preflighted): a bundle changed after it was loaded, or a link,
    # FIFO or hard link made since it was checked, is refused here rather than run under an old sha256
    changed = UserError("the bundle changed after it was checked (its files no longer hash to "
                        f"{bundle.sha256[:12]}…); nothing ran", file=str(bundle.root))
    try:
        copy_bundle(bundle.root, dest)
    except (UserError, OSError):
        raise changed from None
    copied = scan_bundle(dest)
    if copied.problems or copied.sha256 != bundle.sha256:
        raise changed
    harness = workdir / "harness"
    package = Path(__file__).resolve().parents[1]
    for rel in _SHIM_MODULES:
        (harness / "mt_eval" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(package / rel, harness / "mt_eval" / rel)
    for pkg in ("", "methods", "sovereign"):  # bare packages: the real ones import the whole harness
        (harness / "mt_eval" / pkg / "__init__.py").write_text("")
    _make_readable(workdir)
    deps = None
    if bundle.manifest.dependencies is not None:
        deps = _unpack_wheels(dest / bundle.manifest.dependencies.wheelhouse, workdir,
                              bundle.manifest.dependencies.wheelhouse)
        _make_readable(deps)
    return Staged(workdir, dest, harness, deps)


def _make_readable(top: Path) -> None:
    """Folders 0755, files 0644 (0755 when executable): the sandbox uid reads what was staged."""
    for path in [top, *top.rglob("*")]:
        if not path.is_symlink():
            os.chmod(path, 0o755 if path.is_dir() or os.access(path, os.X_OK) else 0o644)


INSTALL_POLICY = SandboxPolicy(wall_seconds_per_run=300.0)  # the limits wheels are unpacked under
_FAILED = re.compile(rb"FAILED (\d+) (record|unpack)\n?")
_WHY = {b"record": "does not unpack (its RECORD does not match its files)", b"unpack": "does not unpack"}


def _unpack_wheels(house: Path, workdir: Path, house_rel: str) -> Path:
    """Unpack the wheelhouse into ``workdir/deps`` with PyPA's ``installer``, inside the sandbox, as its
    uid: a wheel's files are written and none of its code runs, nothing runs as root, and no pip, index,
    configuration or environment of the host is involved. Each wheel's zip directory is checked here
    first (:func:`~mt_eval.sovereign.wheels.wheel_refusal`); a failure is a fixed message naming the
    wheel (the unpacking's own output is never shown)."""
    import installer

    wheels = sorted(p.name for p in house.iterdir())
    for name in wheels:
        if (why := wheel_refusal(house / name)) is not None:
            raise UserError(f"the wheel {why}; nothing ran", file=f"{house_rel}/{name}")
    tools = workdir / "tools"
    shutil.copytree(Path(installer.__file__).parent, tools / "installer",
                    ignore=shutil.ignore_patterns("__pycache__", "*.exe"))  # .exe: Windows launchers
    shutil.copyfile(Path(__file__).with_name("unpack_wheels.py"), tools / "unpack_wheels.py")
    deps = workdir / "deps"
    deps.mkdir(mode=0o755)
    _make_readable(tools)
    if os.geteuid() == 0:
        os.chown(deps, SANDBOX_UID, SANDBOX_UID)  # written by the sandbox uid, never by root
    argv = [*_namespace_argv(INSTALL_POLICY), "--ro-bind", str(tools), "/tools", "--ro-bind", str(house), "/wheels",
            "--bind", str(deps), "/deps", *_env("/tools"), *_SEAL, "--chdir", "/tmp", "--",
            "/usr/bin/python3", "-I", "/tools/unpack_wheels.py", *wheels]
    code, out = run_once(argv, INSTALL_POLICY, INSTALL_POLICY.wall_seconds_per_run)
    if code != 0:
        failed = _FAILED.fullmatch(out)
        if failed is not None and int(failed.group(1)) < len(wheels):
            raise UserError(f"the wheel {_WHY[failed.group(2)]}; nothing ran",
                            file=f"{house_rel}/{wheels[int(failed.group(1))]}")
        raise UserError("the bundle's wheels did not unpack in the sandbox; nothing ran", file=house_rel)
    return deps


def _namespace_argv(policy: SandboxPolicy) -> list[str]:
    """What every sandbox shares: namespaces, uid, the system read-only, /proc, /dev, capped tmpfs."""
    argv = [bwrap_binary(), "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--cap-drop", "ALL", "--clearenv", "--hostname", "sandbox",
            "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID)]
    for path in _SYSTEM_DIRS:
        argv += ["--ro-bind-try", path, path]
    cap = str(policy.tmpfs_mb * 1024 * 1024)
    return [*argv, "--proc", "/proc", "--dev", "/dev", "--size", cap, "--tmpfs", "/dev/shm",
            "--size", cap, "--tmpfs", "/tmp"]


# last on the command line, once every mount point exists: the root and /dev are themselves memory
# filesystems with no size limit (240 MiB written to each, measured), so both become read-only; the
# capped /tmp and /dev/shm stay writable, and device nodes such as /dev/null still work
_SEAL = ("--remount-ro", "/dev", "--remount-ro", "/")


def _env(pythonpath: str, socket: str = "") -> list[str]:
    argv: list[str] = []
    for key, value in (("PATH", "/usr/bin:/bin"), ("HOME", "/tmp"), ("LANG", "C.UTF-8"),
                       ("PYTHONPATH", pythonpath), ("PYTHONDONTWRITEBYTECODE", "1"), ("MT_EVAL_LLM_SOCKET", socket)):
        argv += ["--setenv", key, value]
    return argv


def sandbox_argv(staged: Staged, policy: SandboxPolicy, command: list[str]) -> list[str]:
    """The ``bwrap`` command line (read it to audit the sandbox; tests assert on its effects)."""
    argv = [*_namespace_argv(policy),
            "--ro-bind", str(staged.bundle), "/bundle", "--ro-bind", str(staged.harness), "/harness"]
    pythonpath = "/harness"
    if staged.deps is not None:
        argv += ["--ro-bind", str(staged.deps), "/deps"]
        pythonpath = "/deps:/harness"
    if staged.socket is not None:
        argv += ["--bind", str(staged.socket), SOCKET_IN_SANDBOX]
    argv += _env(pythonpath, SOCKET_IN_SANDBOX if staged.socket else "")
    return [*argv, *_SEAL, "--chdir", "/bundle", "--", *command]


def entry_command(bundle: Bundle) -> list[str]:
    if bundle.manifest.entry.command is not None:
        return list(bundle.manifest.entry.command)
    return ["python3", "/harness/mt_eval/sovereign/shim.py", str(bundle.manifest.entry.python)]


class WorkerDied(Exception):
    def __init__(self, returncode: int) -> None:
        self.returncode = returncode
        super().__init__(f"exited with status {returncode}")


class WorkerTimeout(Exception):
    pass


class WorkerOverflow(Exception):
    pass


def _limits(policy: SandboxPolicy) -> None:
    """Runs in the child before ``exec bwrap``: only async-signal-safe calls."""
    for which, value in ((resource.RLIMIT_CPU, policy.cpu_seconds), (resource.RLIMIT_AS, policy.memory_mb << 20),
                         (resource.RLIMIT_NPROC, policy.processes), (resource.RLIMIT_FSIZE, policy.file_size_mb << 20),
                         (resource.RLIMIT_NOFILE, policy.open_files), (resource.RLIMIT_CORE, 0)):
        resource.setrlimit(which, (value, value))


def _spawn(argv: list[str], policy: SandboxPolicy, **streams: Any) -> subprocess.Popen[bytes]:
    """Start ``bwrap`` with the seccomp filter, the rlimits, an empty environment, in its own session,
    as the sandbox uid when the harness is root."""
    root = os.geteuid() == 0
    program, fds = seccomp_program(), tuple[int, ...]()
    if program is not None:  # bwrap reads the filter from an inherited descriptor
        fd = os.memfd_create("seccomp", 0)
        os.write(fd, program)
        os.lseek(fd, 0, os.SEEK_SET)
        argv, fds = [argv[0], "--seccomp", str(fd), *argv[1:]], (fd,)
    try:
        return subprocess.Popen(
            argv, env={}, start_new_session=True, preexec_fn=functools.partial(_limits, policy), pass_fds=fds,
            user=SANDBOX_UID if root else None, group=SANDBOX_UID if root else None,
            extra_groups=[] if root else None, **streams)
    finally:
        for fd in fds:
            os.close(fd)


def run_once(argv: list[str], policy: SandboxPolicy, timeout: float) -> tuple[int, bytes]:
    """Run a sandbox to its end (stdin empty, stderr dropped): its exit status (-1: killed at
    ``timeout``) and the first 4 KiB of its stdout."""
    proc = _spawn(argv, policy, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return -1, b""
    return proc.returncode, out[:4096]


class Worker:
    """One sandboxed method process: a request line in, a reply line out, each under a deadline."""

    def __init__(self, argv: list[str], policy: SandboxPolicy) -> None:
        self.policy = policy
        self.stderr = bytearray()
        self.stderr_dropped = 0
        self.killed = False
        self.proc = _spawn(argv, policy, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert self.proc.stdout is not None and self.proc.stderr is not None and self.proc.stdin is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        os.set_blocking(self.proc.stdin.fileno(), False)
        self._buffer = b""
        self._drain = threading.Thread(target=self._read_stderr, daemon=True)
        self._drain.start()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        while chunk := os.read(fd, 65536):
            room = self.policy.log_bytes - len(self.stderr)
            self.stderr += chunk[:max(room, 0)]
            self.stderr_dropped += max(len(chunk) - max(room, 0), 0)

    def exchange(self, line: bytes, timeout: float) -> bytes:
        """Send one request line, return one reply line (without the newline)."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        self._send(line, deadline)
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                if len(self._buffer) > (1 << 20):
                    raise WorkerOverflow()
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise WorkerTimeout()
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise WorkerDied(self._wait())
                self._buffer += chunk
        reply, self._buffer = self._buffer.split(b"\n", 1)
        return reply

    def _send(self, line: bytes, deadline: float) -> None:
        """Write under the same deadline: a method that stops reading must not block the harness
        on a full pipe (a long source is bigger than the pipe's buffer)."""
        assert self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        view = memoryview(line)
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while view:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise WorkerTimeout()
                try:
                    view = view[os.write(fd, view):]
                except (BrokenPipeError, OSError):
                    raise WorkerDied(self._wait()) from None

    def _wait(self) -> int:
        try:
            return self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()

    def kill(self) -> None:
        """SIGKILL the whole session: bwrap and, through --die-with-parent, its PID namespace."""
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=2)
            except (subprocess.TimeoutExpired, OSError):
                self.kill()
        self._drain.join(timeout=2)


def new_workdir() -> Path:
    """A private scratch directory for one evaluation, traversable by the sandbox uid (its
    contents are the staged copies only; the vault and keys are never put there)."""
    path = Path(tempfile.mkdtemp(prefix="mt-eval-sandbox-"))
    os.chmod(path, 0o755)
    return path


POLICY_FILE = "sandbox.toml"


def load_policy(governance_dir: Path) -> SandboxPolicy:
    """The governance organisation's limits (``DIR/sandbox.toml``, ``[limits]``), else the declared
    defaults. Preflight and run read the same file, so the developer sees the limits the gold run has."""
    import tomllib

    path = Path(governance_dir) / POLICY_FILE
    if not path.is_file():
        return SandboxPolicy()
    try:
        limits = tomllib.loads(path.read_text(encoding="utf-8")).get("limits", {})
        return SandboxPolicy(**limits)
    except (tomllib.TOMLDecodeError, TypeError) as exc:
        raise UserError(f"not a sandbox policy: {exc}", file=str(path),
                        hint=f"[limits] keys: {', '.join(SandboxPolicy.__dataclass_fields__)}") from None

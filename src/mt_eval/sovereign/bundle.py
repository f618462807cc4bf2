"""Submission bundles (Benchmark Spec §9.1): a directory with ``method.toml`` and everything it names.

``method.toml``::

    name = "my-method"
    version = "1.0"
    method_class = "custom-plugin"        # §9.6 (methods.base.MethodClass)
    terms_version = "sovereign-terms-1"   # the submission terms the developer accepted
    readme = "README.md"
    prompts = ["prompts/system.txt"]      # optional
    coaching_data = ["coaching/examples.jsonl"]
    egress = "none"                       # or "gateway": LLM calls through the harness's broker
    models = []                           # the LLM models the method may call (gateway only)
    development_data = "…"                # optional: the data it saw for few-shot/tuning (Spec §9.2.2)

    [entry]
    command = ["python3", "translate.py"] # JSON lines on stdin/stdout, run in the bundle directory
    # python = "module:Class"             # or a MethodBase subclass, driven by the harness's shim

    [dependencies]                        # optional: wheels only, every one pinned by hash
    wheelhouse = "wheels"                 # .whl files and nothing else
    requirements = "requirements.txt"     # name==version --hash=sha256:HEX lines only

The bundle's sha256 (:func:`bundle_sha256`) covers every file's relative path and bytes, so a gold run
can insist on the exact bundle that passed preflight. Problems are reported all at once, each located
(file, line where the key is, field) by :func:`check_bundle`.

A bundle is walked with ``lstat`` (:func:`scan_bundle`), never following a link and never opening
anything but a regular file (opened ``O_NOFOLLOW | O_NONBLOCK`` and re-checked with ``fstat``): symbolic
links, hard links, FIFOs, sockets and devices are refused without blocking, and so is a bundle of more
than :data:`MAX_FILES` files or :data:`MAX_BYTES` bytes. Staging copies with the same walk
(:func:`copy_bundle`). Archives are unpacked within the same limits (:mod:`~mt_eval.sovereign.archive`);
the requirements are read with our own grammar (:mod:`~mt_eval.sovereign.requirements`), never by pip,
and each wheel's zip directory is checked (:mod:`~mt_eval.sovereign.wheels`). docs/decisions.md §
"Bundles: what is refused and the limits".
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mt_eval.errors import UserError
from mt_eval.methods.base import MethodClass
from mt_eval.sovereign.archive import unpack
from mt_eval.sovereign.requirements import match_wheelhouse, parse_requirements
from mt_eval.sovereign.wheels import wheel_refusal

MANIFEST = "method.toml"
ACCEPTED_TERMS = ("sovereign-terms-1",)  # the submission terms a governance organisation accepts
IGNORED_DIRS = {"__pycache__"}  # written by Python next to the code; not part of what was submitted
_PYTHON_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
MAX_FILES = 10_000  # files in a bundle (folders and __pycache__ not counted)
MAX_BYTES = 256 << 20  # bytes of those files, wheels included (a bundle is staged on the host's disk)


class EntryPoint(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: list[str] | None = None
    python: str | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> EntryPoint:
        if (self.command is None) == (self.python is None):
            raise ValueError('give exactly one of command = [...] or python = "module:Class"')
        if self.command is not None and (not self.command or not all(self.command)):
            raise ValueError("command must be a non-empty list of non-empty strings")
        if self.python is not None and not _PYTHON_ENTRY.match(self.python):
            raise ValueError('python must look like "module:Class"')
        return self


class Dependencies(BaseModel):
    model_config = ConfigDict(extra="forbid")

    wheelhouse: str
    requirements: str


class Manifest(BaseModel):
    """``method.toml``, typed; unknown keys are refused (a typo must not silently drop a limit)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, pattern=r"^[\w.\-]+$")
    version: str = Field(min_length=1)
    method_class: MethodClass
    terms_version: str
    readme: str = "README.md"
    prompts: list[str] = Field(default_factory=list)
    coaching_data: list[str] = Field(default_factory=list)
    egress: Literal["none", "gateway"] = "none"
    models: list[str] = Field(default_factory=list)
    development_data: str | None = Field(default=None, min_length=1)  # on the card: method_config
    entry: EntryPoint
    dependencies: Dependencies | None = None

    @model_validator(mode="after")
    def _models_need_gateway(self) -> Manifest:
        if self.models and self.egress != "gateway":
            raise ValueError('models are reachable only with egress = "gateway"')
        if self.egress == "gateway" and not self.models:
            raise ValueError('egress = "gateway" needs the models the method may call')
        return self


@dataclass(frozen=True)
class Bundle:
    root: Path
    manifest: Manifest
    sha256: str

    def files(self) -> list[str]:
        return bundle_files(self.root)


@dataclass(frozen=True)
class Scan:
    """Every regular file of a bundle (relative POSIX path → sha256 of its bytes) and what was refused."""

    digests: dict[str, str]
    problems: list[UserError]

    @property
    def sha256(self) -> str:
        """One hash over every file: ``path NUL sha256(bytes) LF`` per file in sorted order, hashed."""
        digest = hashlib.sha256()
        for rel in sorted(self.digests):
            digest.update(rel.encode() + b"\0" + self.digests[rel].encode() + b"\n")
        return digest.hexdigest()


_KINDS = {stat.S_IFIFO: "FIFOs", stat.S_IFSOCK: "sockets", stat.S_IFCHR: "devices", stat.S_IFBLK: "devices",
          stat.S_IFLNK: "symbolic links"}


def _limits() -> str:
    return f"a bundle holds at most {MAX_FILES} files and {MAX_BYTES >> 20} MiB"


def _hash_regular(path: Path, seen: os.stat_result, budget: int) -> tuple[str, int] | str:
    """(sha256, size) of the regular file ``path``, or why it was refused. Opened without following a link
    and without blocking (a FIFO swapped in after the walk must not hang the harness), then re-checked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return "could not be opened as a plain file"
    with os.fdopen(fd, "rb") as fh:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (seen.st_dev, seen.st_ino) \
                or now.st_nlink != 1:
            return "changed while it was read"
        digest, size = hashlib.sha256(), 0
        while chunk := fh.read(1 << 20):
            size += len(chunk)
            if size > budget:
                return "too large"
            digest.update(chunk)
    return digest.hexdigest(), size


def scan_bundle(root: Path) -> Scan:
    """Walk ``root`` with lstat (never following a link, never opening anything but a regular file):
    links, hard links, FIFOs, sockets and devices are refused, and so is a bundle past the limits."""
    digests: dict[str, str] = {}
    problems: list[UserError] = []
    total = 0
    stack = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        with os.scandir(folder) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            rel = prefix + entry.name
            if entry.name in IGNORED_DIRS and entry.is_dir(follow_symlinks=False):
                continue
            try:
                rel.encode()
            except UnicodeEncodeError:
                problems.append(UserError("file names must be UTF-8", file=rel.encode(errors="replace").decode()))
                continue
            st = entry.stat(follow_symlinks=False)
            kind = stat.S_IFMT(st.st_mode)
            if kind == stat.S_IFDIR:
                stack.append((Path(entry.path), rel + "/"))
            elif kind != stat.S_IFREG:
                problems.append(UserError(f"{_KINDS.get(kind, 'special files')} are not allowed in a bundle"
                                          + (" (only files and folders)" if kind != stat.S_IFLNK else ""), file=rel))
            elif st.st_nlink > 1:  # another name of the same bytes, maybe outside the bundle
                problems.append(UserError(f"hard links are not allowed in a bundle (this file has {st.st_nlink} "
                                          "names)", file=rel))
            elif len(digests) >= MAX_FILES:
                return Scan(digests, [*problems, UserError(f"more than {MAX_FILES} files ({_limits()})",
                                                           file=str(root))])
            else:
                hashed = _hash_regular(Path(entry.path), st, MAX_BYTES - total)
                if hashed == "too large":
                    return Scan(digests, [*problems, UserError(f"more than {MAX_BYTES} bytes ({_limits()})",
                                                               file=str(root))])
                if isinstance(hashed, str):
                    problems.append(UserError(hashed, file=rel))
                    continue
                digests[rel], size = hashed
                total += size
    return Scan(digests, problems)


def bundle_files(root: Path) -> list[str]:
    """Every regular file of the bundle as a sorted relative POSIX path (``__pycache__`` left out)."""
    return sorted(scan_bundle(root).digests)


def bundle_sha256(root: Path) -> str:
    """One hash over every file: ``path NUL sha256(bytes) LF`` per file in sorted order, hashed."""
    return scan_bundle(root).sha256


def copy_bundle(root: Path, dest: Path) -> None:
    """Copy the bundle's regular files (and their folders) to the new directory ``dest`` with the same
    safe walk: nothing but regular files is opened, nothing is followed (``copytree`` would block on a
    FIFO). The caller re-scans ``dest`` and compares the hash with the one checked."""
    scan = scan_bundle(root)
    if scan.problems:
        raise scan.problems[0]
    dest.mkdir()
    for rel in sorted(scan.digests):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as src:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UserError("changed while it was copied", file=rel)
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with os.fdopen(out, "wb") as dst:
                copied = 0
                while copied <= MAX_BYTES and (chunk := src.read(1 << 20)):
                    dst.write(chunk)
                    copied += len(chunk)


def read_text(path: Path, limit: int = 1 << 20) -> str:
    """A regular file's text (the manifest, the requirements), opened as :func:`scan_bundle` opens."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return fh.read(limit).decode("utf-8", errors="replace")


def _line_of(text: str, key: str) -> int | None:
    """The first line where ``key`` is assigned or opens a table, for a located error."""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if re.match(rf"^{re.escape(key)}\s*=", stripped) or stripped == f"[{key}]":
            return number
    return None


def _located(manifest_path: Path, text: str, loc: tuple[Any, ...], message: str) -> UserError:
    key = str(loc[-1]) if loc and isinstance(loc[-1], str) else (str(loc[0]) if loc else "")
    line = _line_of(text, key) if key else None
    where = f"line {line}: " if line else ""
    return UserError(f"{where}{message}", file=str(manifest_path), field=".".join(str(p) for p in loc) or None)


def _inside(root: Path, rel: str) -> Path | None:
    """``root/rel`` when it stays inside the bundle, else None (``../`` or an absolute path)."""
    target = (root / rel).resolve()
    return target if target.is_relative_to(root.resolve()) else None


def _file_problems(root: Path, manifest: Manifest, mpath: Path, text: str, scan: Scan) -> list[UserError]:
    problems: list[UserError] = []
    named: list[tuple[str, str]] = [("readme", manifest.readme)]
    named += [("prompts", p) for p in manifest.prompts] + [("coaching_data", c) for c in manifest.coaching_data]
    if manifest.dependencies is not None:
        named += [("requirements", manifest.dependencies.requirements)]
    for key, rel in named:
        target = _inside(root, rel)
        if target is None or not target.is_file():
            why = "is outside the bundle" if target is None else "is not a file in the bundle"
            problems.append(_located(mpath, text, (key,), f"{rel!r} {why}"))
    if manifest.terms_version not in ACCEPTED_TERMS:
        problems.append(_located(mpath, text, ("terms_version",),
                                 f"terms version {manifest.terms_version!r} is not accepted "
                                 f"(accepted: {', '.join(ACCEPTED_TERMS)})"))
    if manifest.entry.python is not None:
        module = manifest.entry.python.split(":")[0].replace(".", "/")
        if not ((root / f"{module}.py").is_file() or (root / module / "__init__.py").is_file()):
            problems.append(_located(mpath, text, ("entry", "python"), f"module file {module}.py not in the bundle"))
    if manifest.dependencies is not None:
        problems += _wheel_problems(root, manifest.dependencies, mpath, scan)
    return problems


def _wheel_problems(root: Path, deps: Dependencies, mpath: Path, scan: Scan) -> list[UserError]:
    """The requirements in our strict grammar, matched one to one with the wheelhouse's ``.whl`` files,
    each wheel's zip directory checked (:mod:`~mt_eval.sovereign.wheels`)."""
    house = _inside(root, deps.wheelhouse)
    if house is None or not house.is_dir():
        return [UserError(f"wheelhouse {deps.wheelhouse!r} is not a directory in the bundle",
                          file=str(mpath), field="dependencies.wheelhouse")]
    house_rel = house.relative_to(root.resolve()).as_posix()
    req = _inside(root, deps.requirements)
    req_rel = req.relative_to(root.resolve()).as_posix() if req is not None else ""
    if req is None or req_rel not in scan.digests:
        return []  # reported with the named files
    requirements, problems = parse_requirements(read_text(req), req_rel)
    wheels: dict[str, str] = {}
    for rel, digest in scan.digests.items():
        if not rel.startswith(house_rel + "/"):
            continue
        if rel.count("/") != house_rel.count("/") + 1 or not rel.endswith(".whl"):
            problems.append(UserError("only wheels are accepted (no source distributions: they run code to build)",
                                      file=rel))
            continue
        if (why := wheel_refusal(root / rel)) is not None:
            problems.append(UserError(f"the wheel {why}", file=rel))
        wheels[rel] = digest
    return problems + match_wheelhouse(requirements, wheels, req_rel, house_rel)


ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")


def _unpack(archive: Path) -> Path:
    """An archive's files in a fresh directory (removed at exit), within the bundle's limits
    (:mod:`~mt_eval.sovereign.archive`); the bundle is that directory, or the one folder it holds."""
    import atexit
    import shutil
    import tempfile

    dest = Path(tempfile.mkdtemp(prefix="mt-eval-bundle-"))
    atexit.register(shutil.rmtree, dest, True)
    try:
        fd = os.open(archive, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        raise UserError("not a readable bundle archive", file=str(archive)) from None
    with os.fdopen(fd, "rb") as stream:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise UserError("not a readable bundle archive (not a plain file)", file=str(archive))
        unpack(stream, os.fstat(fd).st_size, dest, str(archive), max_bytes=MAX_BYTES, max_files=MAX_FILES)
    inner = list(dest.iterdir())
    return inner[0] if len(inner) == 1 and inner[0].is_dir() and not (dest / MANIFEST).exists() else dest


def check_bundle(path: str | Path) -> tuple[Bundle | None, list[UserError]]:
    """The bundle (a directory, or an archive of one) and every problem found in it (empty: it may be
    preflighted). An archive's sha256 is its files', so it equals the directory's it was made from."""
    root = Path(path)
    if root.is_file() and root.name.endswith(ARCHIVES):
        try:
            root = _unpack(root)
        except UserError as exc:
            return None, [exc]
    if not root.is_dir() or root.is_symlink():
        return None, [UserError(f"a bundle is a directory with method.toml (or a {', '.join(ARCHIVES)} of one)",
                                file=str(root))]
    scan = scan_bundle(root)
    mpath = root / MANIFEST
    if MANIFEST not in scan.digests:
        return None, [*scan.problems, UserError(f"{MANIFEST} not found", file=str(root))]
    text = read_text(mpath)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries "(at line N, column M)"
        return None, [*scan.problems, UserError(f"not valid TOML: {exc}", file=str(mpath))]
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        return None, [*scan.problems, *(_located(mpath, text, tuple(err["loc"]), err["msg"]) for err in exc.errors())]
    problems = scan.problems + _file_problems(root, manifest, mpath, text, scan)
    return Bundle(root.resolve(), manifest, scan.sha256), problems


def load_bundle(path: str | Path) -> Bundle:
    """The bundle, or the first problem as a :class:`UserError` (``submission check`` lists them all)."""
    bundle, problems = check_bundle(path)
    if problems or bundle is None:
        raise problems[0]
    return bundle

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

    [entry]
    command = ["python3", "translate.py"] # JSON lines on stdin/stdout, run in the bundle directory
    # python = "module:Class"             # or a MethodBase subclass, driven by the harness's shim

    [dependencies]                        # optional: wheels only, every one pinned by hash
    wheelhouse = "wheels"
    requirements = "requirements.txt"     # pip --require-hashes format

The bundle's sha256 (:func:`bundle_sha256`) covers every file's relative path and bytes, so a gold run
can insist on the exact bundle that passed preflight. Problems are reported all at once, each located
(file, line where the key is, field) by :func:`check_bundle`.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mt_eval.errors import UserError
from mt_eval.methods.base import MethodClass

MANIFEST = "method.toml"
ACCEPTED_TERMS = ("sovereign-terms-1",)  # the submission terms a governance organisation accepts
IGNORED_DIRS = {"__pycache__"}  # written by Python next to the code; not part of what was submitted
_PYTHON_ENTRY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_HASH_LINE = re.compile(r"--hash=sha256:([0-9a-f]{64})")


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


def bundle_files(root: Path) -> list[str]:
    """Every file of the bundle as a sorted relative POSIX path (``__pycache__`` left out)."""
    out = []
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if any(part in IGNORED_DIRS for part in rel.parts) or path.is_dir():
            continue
        out.append(rel.as_posix())
    return sorted(out)


def bundle_sha256(root: Path) -> str:
    """One hash over every file: ``path NUL sha256(bytes) LF`` per file in sorted order, hashed."""
    digest = hashlib.sha256()
    for rel in bundle_files(root):
        digest.update(rel.encode() + b"\0" + hashlib.sha256((root / rel).read_bytes()).hexdigest().encode() + b"\n")
    return digest.hexdigest()


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


def _file_problems(root: Path, manifest: Manifest, mpath: Path, text: str) -> list[UserError]:
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
    for path in root.rglob("*"):
        if path.is_symlink():  # a link could point at the vault once bound into the sandbox
            problems.append(UserError("symbolic links are not allowed in a bundle",
                                      file=str(path.relative_to(root))))
    if manifest.dependencies is not None:
        problems += _wheel_problems(root, manifest.dependencies, mpath)
    return problems


def _wheel_problems(root: Path, deps: Dependencies, mpath: Path) -> list[UserError]:
    """Wheels only, and every wheel's sha256 pinned in the requirements (pip --require-hashes)."""
    house = _inside(root, deps.wheelhouse)
    if house is None or not house.is_dir():
        return [UserError(f"wheelhouse {deps.wheelhouse!r} is not a directory in the bundle",
                          file=str(mpath), field="dependencies.wheelhouse")]
    req = _inside(root, deps.requirements)
    pinned = set(_HASH_LINE.findall(req.read_text(encoding="utf-8"))) if req and req.is_file() else set()
    problems = []
    for wheel in sorted(house.iterdir()):
        if wheel.suffix != ".whl":
            problems.append(UserError("only wheels are accepted (no source distributions: they run code to build)",
                                      file=str(wheel.relative_to(root))))
        elif hashlib.sha256(wheel.read_bytes()).hexdigest() not in pinned:
            problems.append(UserError(f"its sha256 is not pinned in {deps.requirements}",
                                      file=str(wheel.relative_to(root))))
    return problems


ARCHIVES = (".tar.gz", ".tgz", ".tar", ".zip")


def _unpack(archive: Path) -> Path:
    """An archive's files in a fresh directory (removed at exit); the bundle is that directory, or the
    one folder it holds. Refused: members outside the directory, links, devices (tarfile's ``data``
    filter; for zip, names are checked here)."""
    import atexit
    import shutil
    import tarfile
    import tempfile
    import zipfile

    dest = Path(tempfile.mkdtemp(prefix="mt-eval-bundle-"))
    atexit.register(shutil.rmtree, dest, True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                for name in zf.namelist():
                    if name.startswith("/") or ".." in Path(name).parts:
                        raise UserError(f"archive member {name!r} points outside the bundle", file=str(archive))
                zf.extractall(dest)
        else:
            with tarfile.open(archive) as tf:
                tf.extractall(dest, filter="data")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as exc:
        raise UserError(f"not a readable bundle archive: {exc}", file=str(archive)) from None
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
    if not root.is_dir():
        return None, [UserError(f"a bundle is a directory with method.toml (or a {', '.join(ARCHIVES)} of one)",
                                file=str(root))]
    mpath = root / MANIFEST
    if not mpath.is_file():
        return None, [UserError(f"{MANIFEST} not found", file=str(root))]
    text = mpath.read_text(encoding="utf-8", errors="replace")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # its message carries "(at line N, column M)"
        return None, [UserError(f"not valid TOML: {exc}", file=str(mpath))]
    try:
        manifest = Manifest.model_validate(data)
    except ValidationError as exc:
        return None, [_located(mpath, text, tuple(err["loc"]), err["msg"]) for err in exc.errors()]
    problems = _file_problems(root, manifest, mpath, text)
    return Bundle(root.resolve(), manifest, bundle_sha256(root)), problems


def load_bundle(path: str | Path) -> Bundle:
    """The bundle, or the first problem as a :class:`UserError` (``submission check`` lists them all)."""
    bundle, problems = check_bundle(path)
    if problems or bundle is None:
        raise problems[0]
    return bundle

"""Submission bundles: method.toml as a typed model with located errors, and the sha256 over every file.

References: hand-written manifests with one known fault each (the line the error must name is counted
here), and hashlib over the files for the bundle hash.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mt_eval.cli import app
from mt_eval.sovereign.bundle import bundle_sha256, check_bundle

GOOD = '''name = "m"
version = "1"
method_class = "custom-plugin"
terms_version = "sovereign-terms-1"

[entry]
command = ["python3", "t.py"]
'''


def _bundle(root: Path, manifest: str, files: dict[str, bytes] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "method.toml").write_text(manifest)
    for rel, data in {"README.md": b"# m\n", "t.py": b"print()\n", **(files or {})}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def _lines(root: Path) -> list[str]:
    _, problems = check_bundle(root)
    return [p.one_line() for p in problems]


def test_a_good_bundle_has_no_problems(tmp_path: Path) -> None:
    bundle, problems = check_bundle(_bundle(tmp_path / "b", GOOD))
    assert problems == [] and bundle is not None and bundle.manifest.egress == "none"


@pytest.mark.parametrize(("edit", "expected"), [
    (lambda t: t.replace('method_class = "custom-plugin"', 'method_class = "magic"'), "line 3: "),
    (lambda t: t.replace('version = "1"\n', 'version = "1"\ntimeout = 5\n'), "line 3: Extra inputs"),
    (lambda t: t.replace('terms_version = "sovereign-terms-1"', 'terms_version = "v0"'), "line 4: terms version 'v0'"),
    (lambda t: t + 'python = "t:M"\n', "give exactly one of command"),
    (lambda t: t.replace('name = "m"\n', ""), "field 'name': Field required"),
    (lambda t: t.replace('[entry]', 'models = ["x/y"]\n[entry]'), 'models are reachable only with egress = "gateway"'),
    (lambda t: t.replace('[entry]', 'readme = "../../etc/passwd"\n[entry]'), "line 6: '../../etc/passwd' is outside"),
    (lambda t: t.replace('[entry]', 'prompts = ["p.txt"]\n[entry]'), "line 6: 'p.txt' is not a file in the bundle"),
    (lambda t: t.replace('command = ["python3", "t.py"]', 'python = "nomodule:M"'), "module file nomodule.py"),
    (lambda t: t.replace('version = "1"', 'version = "1'), "not valid TOML"),
])
def test_each_fault_is_one_located_line(tmp_path: Path, edit: Callable[[str], str], expected: str) -> None:
    lines = _lines(_bundle(tmp_path / "b", edit(GOOD)))
    assert len(lines) == 1 and expected in lines[0] and "method.toml" in lines[0], lines


def test_symlinks_and_unpinned_or_source_dependencies_are_refused(tmp_path: Path) -> None:
    wheel = b"PK\x05\x06" + b"\0" * 18  # bytes only: the check is on the hash, not the content
    pinned = hashlib.sha256(b"other").hexdigest()
    root = _bundle(tmp_path / "b", GOOD + '\n[dependencies]\nwheelhouse = "wheels"\nrequirements = "req.txt"\n',
                   {"wheels/x-1-py3-none-any.whl": wheel, "wheels/y-1.tar.gz": b"sdist",
                    "req.txt": f"x==1 --hash=sha256:{pinned}\n".encode()})
    os.symlink("/etc/passwd", root / "link")
    lines = _lines(root)
    assert any("link: symbolic links are not allowed" in line for line in lines)
    assert any("x-1-py3-none-any.whl: its sha256 is not pinned in req.txt" in line for line in lines)
    assert any("y-1.tar.gz: only wheels are accepted" in line for line in lines)


def test_the_sha256_covers_every_byte_and_name_but_not_pycache(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b", GOOD)
    first = bundle_sha256(root)
    expected = hashlib.sha256(b"".join(
        f"{rel}\0{hashlib.sha256((root / rel).read_bytes()).hexdigest()}\n".encode()
        for rel in sorted(["README.md", "method.toml", "t.py"]))).hexdigest()
    assert first == expected
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "t.cpython-311.pyc").write_bytes(b"x")
    assert bundle_sha256(root) == first
    (root / "t.py").write_bytes(b"print() \n")
    assert bundle_sha256(root) != first
    (root / "t.py").write_bytes(b"print()\n")
    (root / "t.py").rename(root / "u.py")
    assert bundle_sha256(root) != first


def test_submission_check_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    ok = runner.invoke(app, ["submission", "check", "examples/bundles/glossary-python"])
    assert ok.exit_code == 0 and "sha256 " in ok.output
    bad = _bundle(tmp_path / "b", GOOD.replace('"custom-plugin"', '"magic"').replace('"sovereign-terms-1"', '"v0"'))
    result = runner.invoke(app, ["submission", "check", str(bad)])
    assert result.exit_code == 2
    assert "line 3" in result.output and "Traceback" not in result.output
    missing = runner.invoke(app, ["submission", "check", str(tmp_path / "nothing")])
    assert missing.exit_code == 2 and "a bundle is a directory" in missing.output


def test_an_archive_is_the_same_bundle_as_its_directory(tmp_path: Path) -> None:
    import shutil
    import tarfile
    import zipfile

    root = _bundle(tmp_path / "b", GOOD)
    made = shutil.make_archive(str(tmp_path / "b"), "gztar", tmp_path, "b")
    bundle, problems = check_bundle(made)
    assert problems == [] and bundle is not None and bundle.sha256 == bundle_sha256(root)
    escape = tmp_path / "evil.tar.gz"
    with tarfile.open(escape, "w:gz") as tf:
        tf.add(root / "method.toml", arcname="../method.toml")
    assert "archive member '../method.toml' points outside the bundle" in check_bundle(escape)[1][0].one_line()
    zipped = tmp_path / "evil.zip"
    with zipfile.ZipFile(zipped, "w") as zf:
        zf.writestr("../../x.py", "print()")
    assert "points outside the bundle" in check_bundle(zipped)[1][0].one_line()


def test_a_bundle_changed_after_loading_is_not_staged(tmp_path: Path) -> None:
    """What runs is what was hashed (and preflighted): an edit or a new link between loading and staging is
    refused before anything starts."""
    from mt_eval.errors import UserError
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.sandbox import stage

    root = _bundle(tmp_path / "b", GOOD)
    bundle = load_bundle(root)
    stage(bundle, tmp_path / "ok")  # unchanged: staged
    (root / "t.py").write_bytes(b"import os\n")
    with pytest.raises(UserError, match="changed after it was checked"):
        stage(bundle, tmp_path / "edited")
    (root / "t.py").write_bytes(b"print()\n")
    os.symlink("/etc/shadow", root / "leak")
    with pytest.raises(UserError, match="changed after it was checked"):
        stage(bundle, tmp_path / "linked")


def test_a_gold_run_refuses_to_start_without_seccomp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the seccomp filter a method could ptrace the sandbox's init: a gold run does not start."""
    from mt_eval.errors import UserError
    from mt_eval.sovereign import runner
    from mt_eval.sovereign.bundle import load_bundle
    from mt_eval.sovereign.sandbox import SandboxPolicy

    monkeypatch.setattr(runner, "seccomp_program", lambda: None)
    bundle = load_bundle(_bundle(tmp_path / "b", GOOD))
    with pytest.raises(UserError, match="needs the seccomp filter"):
        runner.run(bundle, tmp_path / "vault", tmp_path / "id.key", "gold_standard", tmp_path / "gov", SandboxPolicy(),
                   signature=tmp_path / "BUNDLE.sig")
    assert not (tmp_path / "gov").exists()  # refused before anything was recorded

"""Dependencies as a local wheelhouse with hashes: installed (pip --no-index --require-hashes, wheels
only) outside the sandbox, importable read-only inside it. The wheel is built here, by hand, as the
wheel format (PEP 427) defines it; the method's outputs are checked against str.upper itself."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

from conftest import TINY, small_dataset
from mt_eval.sovereign.bundle import check_bundle, load_bundle
from mt_eval.sovereign.runner import execute
from mt_eval.sovereign.sandbox import new_workdir

MODULE = b"def shout(text):\n    return text.upper()\n"
METHOD = '''from mt_eval.methods.base import MethodBase, MethodClass, MethodIdentity, Translation
from tinydep import shout


class Shout(MethodBase):
    def __init__(self):
        self.identity = MethodIdentity("shout", MethodClass.CUSTOM_PLUGIN, "1", "shout")

    async def translate(self, requests):
        return [Translation(r.entry_id, shout(r.source)) for r in requests]
'''


def _wheel(path: Path) -> str:
    files = {"tinydep.py": MODULE,
             "tinydep-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinydep\nVersion: 1.0\n",
             "tinydep-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
                                             b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items()) + "tinydep-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
        zf.writestr("tinydep-1.0.dist-info/RECORD", record)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _bundle(root: Path) -> Path:
    (root / "wheels").mkdir(parents=True)
    digest = _wheel(root / "wheels" / "tinydep-1.0-py3-none-any.whl")
    (root / "requirements.txt").write_text(f"tinydep==1.0 --hash=sha256:{digest}\n")
    (root / "shout.py").write_text(METHOD)
    (root / "README.md").write_text("# shout\n")
    (root / "method.toml").write_text('name = "shout"\nversion = "1"\nmethod_class = "custom-plugin"\n'
                                      'terms_version = "sovereign-terms-1"\n[entry]\npython = "shout:Shout"\n'
                                      '[dependencies]\nwheelhouse = "wheels"\nrequirements = "requirements.txt"\n')
    return root


def test_a_pinned_wheel_is_installed_and_imported_inside_the_sandbox(tmp_path: Path) -> None:
    bundle = load_bundle(_bundle(tmp_path / "b"))
    dataset = small_dataset(3)
    translations, report = execute(bundle, dataset, TINY, new_workdir() / "s")
    assert report.errors() == {}, report.stderr
    assert [t.text for t in translations] == [e.source.upper() for e in dataset.entries]


def test_a_wheel_changed_after_pinning_is_refused(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    wheel = root / "wheels" / "tinydep-1.0-py3-none-any.whl"
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    _, problems = check_bundle(root)
    assert [p.one_line() for p in problems] == [
        "wheels/tinydep-1.0-py3-none-any.whl: its sha256 is not pinned in requirements.txt"]

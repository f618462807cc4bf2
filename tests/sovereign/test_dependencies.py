"""Dependencies as a local wheelhouse with hashes: the requirements read with our own grammar (whatever
pip would obey is refused with its line), each wheel's zip directory checked, the wheels unpacked by
PyPA's installer inside the sandbox as its uid, importable read-only inside it. The wheel is built
here, by hand, as the wheel format (PEP 427) defines it; the method's outputs are checked against
str.upper itself."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

import pytest

from mt_eval.sovereign.bundle import check_bundle, load_bundle
from mt_eval.sovereign.runner import execute
from mt_eval.sovereign.sandbox import new_workdir
from support.sovereign import TINY, small_dataset

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


def _lines(root: Path) -> list[str]:
    _, problems = check_bundle(root)
    return [p.one_line() for p in problems]


DIGEST = "0" * 64


@pytest.mark.parametrize(("line", "why"), [
    ("--no-binary :all:", "options are refused (--no-binary)"),  # re-enables source builds
    ("--only-binary=:none:", "options are refused (--only-binary)"),
    ("--index-url http://127.0.0.1:9/${MT_EVAL_LLM_KEY}", "environment references ($VAR) are refused"),
    ("--extra-index-url http://127.0.0.1:9/simple", "options are refused (--extra-index-url)"),
    ("--find-links=http://127.0.0.1:9/", "options are refused (--find-links)"),
    ("-f http://127.0.0.1:9/", "options are refused (-f)"),
    ("-r /root/.config/mt-eval/identity.key", "options are refused (-r)"),  # pip prints the file's lines
    ("-r http://127.0.0.1:9/other.txt", "options are refused (-r)"),  # other code at the gold run
    ("--requirement=more.txt", "options are refused (--requirement)"),
    ("-c constraints.txt", "options are refused (-c)"),
    ("-e .", "options are refused (-e)"),
    ("--trusted-host example.org", "options are refused (--trusted-host)"),
    (f"tinydep==1.0 --hash=sha256:{DIGEST} --no-deps", "options are refused (--no-deps)"),
    ("tinydep @ https://example.org/tinydep-1.0-py3-none-any.whl", "URLs and direct references"),
    ("https://example.org/tinydep-1.0.tar.gz", "URLs and direct references"),
    (f"tinydep==$VERSION --hash=sha256:{DIGEST}", "environment references ($VAR) are refused"),
    (f"tinydep[socks]==1.0 --hash=sha256:{DIGEST}", "extras are refused"),
    (f'tinydep==1.0; python_version > "3" --hash=sha256:{DIGEST}', "environment markers are refused"),
    (f"tinydep==1.* --hash=sha256:{DIGEST}", "wildcard versions are refused"),
    (f"tinydep>=1.0 --hash=sha256:{DIGEST}", "only an exact pin name==version is accepted"),
    (f"tinydep===1.0 --hash=sha256:{DIGEST}", "only an exact pin name==version is accepted"),
    ("tinydep==1.0", "every requirement needs --hash=sha256:HEX"),
    ("tinydep==1.0 --hash=md5:d41d8cd98f00b204e9800998ecf8427e", "a hash is --hash=sha256:"),
    ("./vendored/tinydep-1.0.tar.gz", "only an exact pin name==version is accepted"),  # a source distribution
])
def test_anything_but_a_hash_pinned_wheel_line_is_refused_with_its_line(tmp_path: Path, line: str, why: str) -> None:
    """What pip would obey (options, URLs, $VAR, -r FILE/URL, sdists) is refused at submission check."""
    root = _bundle(tmp_path / "b")
    good = (root / "requirements.txt").read_text()
    (root / "requirements.txt").write_text(f"# pinned by hash\n{good}{line}\n")
    lines = _lines(root)
    assert len(lines) == 1 and lines[0].startswith(f"requirements.txt: line 3: {why}"), lines


def test_continuations_and_comments_are_fine_and_numbered_from_the_first_line(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    name, digest = (root / "requirements.txt").read_text().split(" --hash=sha256:")
    (root / "requirements.txt").write_text(f"# a comment\n\n{name} \\\n    --hash=sha256:{digest.strip()}"
                                           "  # the wheel\n--index-url \\\n  http://127.0.0.1:9/\n")
    assert _lines(root) == ["requirements.txt: line 5: options are refused (--index-url) "
                            "(a line is name==version --hash=sha256:HEX, naming a wheel in the wheelhouse)"]


def test_every_wheel_is_required_and_every_requirement_has_its_wheel(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    extra = root / "wheels" / "other-2.0-py3-none-any.whl"
    extra.write_bytes((root / "wheels" / "tinydep-1.0-py3-none-any.whl").read_bytes())
    (root / "requirements.txt").write_text((root / "requirements.txt").read_text()
                                           + f"missing==3.1 --hash=sha256:{DIGEST}\n")
    assert _lines(root) == [
        "wheels/other-2.0-py3-none-any.whl: other 2.0 is not required in requirements.txt "
        "(every wheel of the wheelhouse is pinned, and only those)",
        "requirements.txt: line 2: no wheel missing 3.1 in wheels "
        "(a line is name==version --hash=sha256:HEX, naming a wheel in the wheelhouse)"]


def test_a_source_distribution_or_a_folder_in_the_wheelhouse_is_refused(tmp_path: Path) -> None:
    root = _bundle(tmp_path / "b")
    (root / "wheels" / "evil-1.0.tar.gz").write_bytes(b"sdist with a build backend")
    (root / "wheels" / "sub").mkdir()
    (root / "wheels" / "sub" / "x.whl").write_bytes(b"")
    lines = _lines(root)
    assert "wheels/evil-1.0.tar.gz: only wheels are accepted (no source distributions: they run code to build)" \
        in lines
    assert any(line.startswith("wheels/sub/x.whl: only wheels are accepted") for line in lines), lines


def _repin(root: Path, wheel: Path) -> None:
    """Pin ``wheel``'s new bytes, so the only fault left is inside it."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    (root / "requirements.txt").write_text(f"tinydep==1.0 --hash=sha256:{digest}\n")


def _rewrite(wheel: Path, extra: zipfile.ZipInfo, data: bytes = b"") -> None:
    extra.compress_type = zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr(extra, data)


@pytest.mark.parametrize(("make", "why"), [
    (lambda w: w.write_bytes(b"\x1f\x8b" + bytes(100)), "the wheel is not a wheel (not a zip archive)"),  # an sdist
    (lambda w: _rewrite(w, zipfile.ZipInfo("../../escape.py")), "the wheel has a member outside its install folder"),
    (lambda w: _rewrite(w, _link_member()), "the wheel has a member that is not a file ('tinydep_link'"),
    (lambda w: _rewrite(w, zipfile.ZipInfo("zeros.bin"), bytes(64 << 20)), "the wheel is too large (64 MiB unpacked"),
])
def test_a_wheel_whose_zip_directory_is_not_a_plain_wheel_is_refused_unread(tmp_path: Path, make, why: str) -> None:
    root = _bundle(tmp_path / "b")
    wheel = root / "wheels" / "tinydep-1.0-py3-none-any.whl"
    make(wheel)
    _repin(root, wheel)
    lines = _lines(root)
    assert len(lines) == 1 and lines[0].startswith(f"wheels/tinydep-1.0-py3-none-any.whl: {why}"), lines


def _link_member() -> zipfile.ZipInfo:
    link = zipfile.ZipInfo("tinydep_link")
    link.external_attr = (0o120777) << 16  # S_IFLNK: a link to the identity once unpacked
    return link


def test_a_wheel_that_does_not_unpack_is_a_fixed_message_naming_it(tmp_path: Path) -> None:
    """Its RECORD does not match its files: refused in the sandbox; nothing of the unpacking's own output
    (which could quote the wheel) reaches the submitter."""
    from mt_eval.errors import UserError
    from mt_eval.sovereign.sandbox import stage

    root = _bundle(tmp_path / "b")
    wheel = root / "wheels" / "tinydep-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["tinydep.py"] = b"import os; os.system('id > /tmp/owned')\n"  # not the bytes RECORD names
    with zipfile.ZipFile(wheel, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    _repin(root, wheel)
    bundle = load_bundle(root)
    with pytest.raises(UserError) as caught:
        stage(bundle, new_workdir() / "s")
    assert caught.value.one_line() == ("wheels/tinydep-1.0-py3-none-any.whl: the wheel does not unpack "
                                       "(its RECORD does not match its files); nothing ran")


def test_wheels_are_unpacked_by_the_sandbox_uid_with_an_empty_environment(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Not by pip on the host as root: the files are written by uid 65534, and the harness's environment
    (here a pip configuration that would log every install to a file) is not read."""
    import os

    from mt_eval.sovereign.sandbox import SANDBOX_UID, stage

    log = tmp_path / "pip.log"
    monkeypatch.setenv("PIP_LOG", str(log))
    monkeypatch.setenv("PIP_FIND_LINKS", "http://127.0.0.1:9/")
    staged = stage(load_bundle(_bundle(tmp_path / "b")), new_workdir() / "s")
    assert staged.deps is not None and (staged.deps / "tinydep.py").read_bytes() == MODULE
    if os.geteuid() == 0:
        assert {p.stat().st_uid for p in staged.deps.rglob("*")} == {SANDBOX_UID}
    assert not log.exists()

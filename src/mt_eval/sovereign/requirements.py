"""A bundle's dependency file, read with our own strict grammar (never handed to pip).

A line is ``name==version --hash=sha256:HEX`` (one or more ``--hash``); ``#`` comments, blank lines and
backslash-newline continuations are fine. Everything pip would also obey is refused with its line
number: options (``--index-url``, ``--no-binary``, ``-r``/``-c``/``-e``…), URLs and ``name @ url``,
``$VAR`` references, extras, markers, wildcard or inexact versions. Every requirement must name a wheel
of the bundle's wheelhouse (the file name's normalised name and version, its sha256 among the line's
hashes) and every wheel must be required: what installs is exactly the bytes the bundle hash covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from mt_eval.errors import UserError

GRAMMAR = "a line is name==version --hash=sha256:HEX, naming a wheel in the wheelhouse"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
# PEP 440 versions as wheel file names carry them: no wildcard, no operator, no local label with '-'
_VERSION = (r"(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*(?:(?:a|b|rc)[0-9]+)?(?:\.post[0-9]+)?(?:\.dev[0-9]+)?"
            r"(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?")
_PIN = re.compile(rf"^({_NAME})==({_VERSION})$")
_HASH = re.compile(r"^--hash=sha256:([0-9a-f]{64})$")
# {distribution}-{version}(-{build})?-{python}-{abi}-{platform}.whl (PEP 427)
_WHEEL = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_.!+]+)(?:-[0-9][A-Za-z0-9_]*)?-[A-Za-z0-9_.]+-[A-Za-z0-9_.]+"
                    r"-[A-Za-z0-9_.]+\.whl$")


@dataclass(frozen=True)
class Requirement:
    name: str  # normalised (PEP 503)
    version: str
    hashes: frozenset[str]
    line: int


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(first physical line number, the line joined across backslash-newlines, comment removed)."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        line = re.sub(r"(^|\s)#.*$", "", pending + raw).strip()  # pip's comment rule: '#' after a blank
        pending = ""
        if line:
            out.append((start, line))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _refusal(line: str) -> str | None:
    """Why ``line`` is not ``name==version --hash=…`` (the class of thing pip would obey), else None."""
    tokens = line.split()
    if "$" in line:
        return "environment references ($VAR) are refused"
    options = [t for t in tokens if t.startswith("-") and not t.startswith("--hash")]
    if options:
        return f"options are refused ({options[0].split('=')[0]})"
    if "://" in line or "@" in line:
        return "URLs and direct references (name @ url) are refused"
    if ";" in line:
        return "environment markers are refused"
    if "[" in line:
        return "extras are refused"
    if "*" in tokens[0]:
        return "wildcard versions are refused"
    if not _PIN.match(tokens[0]):
        return "only an exact pin name==version is accepted"
    hashes = tokens[1:]
    if not hashes:
        return "every requirement needs --hash=sha256:HEX"
    if not all(_HASH.match(h) for h in hashes):
        return "a hash is --hash=sha256: and 64 lowercase hex digits"
    return None


def parse_requirements(text: str, rel: str) -> tuple[list[Requirement], list[UserError]]:
    """The requirements of ``text`` (the file ``rel`` of the bundle) and every refused line."""
    found: dict[str, Requirement] = {}
    problems: list[UserError] = []
    for number, line in _logical_lines(text):
        why = _refusal(line)
        if why is not None:
            problems.append(UserError(f"line {number}: {why}", file=rel, hint=GRAMMAR))
            continue
        pin, *hashes = line.split()
        match = _PIN.match(pin)
        assert match is not None  # _refusal checked it
        name = normalise(match.group(1))
        if name in found:
            problems.append(UserError(f"line {number}: {name} is required twice (also line {found[name].line})",
                                      file=rel, hint=GRAMMAR))
            continue
        digests = frozenset(m.group(1) for h in hashes if (m := _HASH.match(h)))
        found[name] = Requirement(name, match.group(2), digests, number)
    return list(found.values()), problems


def wheel_name_version(filename: str) -> tuple[str, str] | None:
    """(normalised distribution name, version) of a wheel file name, None when it is not one."""
    match = _WHEEL.match(filename)
    return (normalise(match.group(1)), match.group(2).replace("_", "-")) if match else None


def match_wheelhouse(requirements: list[Requirement], wheels: dict[str, str], req_rel: str,
                     house_rel: str) -> list[UserError]:
    """Every wheel required (name, version and sha256) and every requirement met by a wheel.

    ``wheels`` maps each wheel's bundle-relative path to the sha256 of its bytes (regular ``.whl`` files
    only: the caller has refused everything else)."""
    problems: list[UserError] = []
    met: set[str] = set()
    by_name = {r.name: r for r in requirements}
    for rel, digest in sorted(wheels.items()):
        parsed = wheel_name_version(PurePosixPath(rel).name)
        if parsed is None:
            problems.append(UserError("not a wheel file name (name-version-python-abi-platform.whl)", file=rel))
            continue
        name, version = parsed
        req = by_name.get(name)
        if req is None or req.version != version:
            problems.append(UserError(f"{name} {version} is not required in {req_rel}", file=rel,
                                      hint="every wheel of the wheelhouse is pinned, and only those"))
            continue
        met.add(name)
        if digest not in req.hashes:
            problems.append(UserError(f"its sha256 is not pinned in {req_rel}", file=rel))
    for req in requirements:
        if req.name not in met:
            problems.append(UserError(f"line {req.line}: no wheel {req.name} {req.version} in {house_rel}",
                                      file=req_rel, hint=GRAMMAR))
    return problems

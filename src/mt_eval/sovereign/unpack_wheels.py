"""Unpacks a bundle's wheels into ``/deps``, run inside the sandbox (never imported by the harness).

Standard library plus a staged copy of PyPA's ``installer`` at ``/tools``, run by the sandbox's
``/usr/bin/python3`` as the sandbox uid, with the wheelhouse read-only at ``/wheels``, ``/deps`` the one
writable folder beside the capped ``/tmp``, no network and an empty environment. ``installer`` writes a
wheel's files (checked against its RECORD first) and runs none of its code; no bytecode is compiled.
A wheel that does not unpack is reported as one line ``FAILED <index> <class>`` on stdout, the class
one of ``record`` or ``unpack``: the harness turns that into a fixed message and shows nothing else.

Usage: ``python3 -I /tools/unpack_wheels.py WHEEL...`` (names inside ``/wheels``).
"""

import sys
from pathlib import Path

sys.path.insert(0, "/tools")

from installer import install  # found only once /tools is on the path
from installer.destinations import SchemeDictionaryDestination
from installer.sources import WheelFile

TARGET = "/deps"
SCHEME = {"purelib": TARGET, "platlib": TARGET, "scripts": TARGET + "/.bin", "headers": TARGET + "/.headers",
          "data": TARGET + "/.data"}


def main(names: list[str]) -> int:
    destination = SchemeDictionaryDestination(SCHEME, interpreter="/usr/bin/python3", script_kind="posix")
    for index, name in enumerate(names):
        stage = "record"
        try:
            with WheelFile.open(Path("/wheels", name)) as source:
                source.validate_record()
                stage = "unpack"
                install(source, destination, {"INSTALLER": b"mt-eval\n"})
        except Exception:  # any failure is one fixed class; its text may quote the wheel's bytes
            print(f"FAILED {index} {stage}", flush=True)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

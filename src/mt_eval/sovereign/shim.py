"""Runs *inside* the sandbox for a ``python = "module:Class"`` bundle: the JSON-lines protocol around a
:class:`~mt_eval.methods.base.MethodBase` subclass.

Standard library only (plus the staged copy of ``mt_eval/methods/base.py`` and ``mt_eval/errors.py``
the bundle's class imports): the sandbox sees none of the harness's installed packages. One event loop
for the whole run, so a method's ``open`` (an HTTP client to the broker, a model) happens once.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys


def main() -> int:
    module_name, class_name = sys.argv[1].split(":")
    sys.path.insert(0, ".")  # the bundle directory (the working directory)
    from mt_eval.methods.base import TranslationRequest

    method = getattr(importlib.import_module(module_name), class_name)()
    loop = asyncio.new_event_loop()
    loop.run_until_complete(method.open())
    try:
        for line in sys.stdin:
            request = json.loads(line)
            req = TranslationRequest(
                entry_id=request["entry_id"], source=request["source"],
                source_language=request["source_language"], target_language=request["target_language"],
                register=request.get("register"), context=request.get("context"))
            [translation] = loop.run_until_complete(method.translate([req]))
            reply = {"entry_id": req.entry_id, "predicted": "" if translation.error else translation.text}
            sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
            sys.stdout.flush()
    finally:
        loop.run_until_complete(method.close())
    return 0


if __name__ == "__main__":
    sys.exit(main())

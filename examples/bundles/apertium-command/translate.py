"""JSON lines in, JSON lines out: each source through `apertium -u eng-spa` (standard library only)."""

import json
import subprocess
import sys

for line in sys.stdin:
    request = json.loads(line)
    done = subprocess.run(["apertium", "-u", "eng-spa"], input=request["source"], capture_output=True,
                          text=True, check=True)
    reply = {"entry_id": request["entry_id"], "predicted": done.stdout.rstrip("\n")}
    sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
    sys.stdout.flush()

"""JSON lines in, JSON lines out, through one long-lived Apertium eng-spa pipe (standard library only).

Starting `apertium` loads a dozen transducers (~0.2 s), so one process per segment would spend most of
the run starting up. Instead one pipe runs in null-flush mode (`-z`): each segment goes in followed by
a NUL byte, every program translates up to it and flushes, and the translation comes back NUL-terminated.
`-f none` because Apertium's text deformatter drops NUL bytes: this file escapes the stream itself
(`to_stream`/`from_stream`, what apertium-destxt/-retxt do). The tagger is the one program that carries
state across a NUL, so `bin/apertium-tagger` (first on APERTIUM_PATH) tags each segment with a fresh
tagger. The output is then byte-identical to `apertium -u eng-spa` run on each segment alone.
"""

import json
import os
import re
import subprocess
import sys

SPECIAL = frozenset("[]\\/@<>^${}")  # escaped in an Apertium stream
PIECES = re.compile(r"[ \n\t\r~]+|[^ \n\t\r~]+")  # blanks (as Apertium 3.8 reads them) and words
MARK = "[mt]"  # a superblank: Apertium copies it through untouched, so each output starts with it
BLANK_LINE = re.compile(r"\n\n|\r\n\r\n")  # a sentence end for the tagger


def _blank(blank, sentence_end):
    head = ".[]" if sentence_end else ""
    return head + (" " if blank == " " else f"[{blank}]" if blank else "")


def to_stream(text):
    parts, blank = [], ""
    for piece in PIECES.findall(text.replace("\0", "")):
        if piece[0] in " \n\t\r~":
            blank = piece
        else:
            if blank:
                parts.append(_blank(blank, bool(BLANK_LINE.search(blank))))
            blank = ""
            parts.append("".join("\\" + c if c in SPECIAL else c for c in piece))
    parts.append(_blank(blank, True))
    return "".join(parts)


def from_stream(stream):
    text, i = [], 0
    while i < len(stream):
        if stream[i] == "\\" and i + 1 < len(stream) and stream[i + 1] in SPECIAL:
            text.append(stream[i + 1])
            i += 2
        elif stream.startswith(".[]", i):
            i += 3
        else:
            if stream[i] not in "[]":
                text.append(stream[i])
            i += 1
    return "".join(text)


class Pipe:
    def __init__(self):
        # the pair's mode with every program in null-flush mode, run directly: the `apertium` script wraps
        # it in gawk filters that wait for more input before passing a segment on
        mode = subprocess.run(["apertium-wblank-mode", "-z", "/usr/share/apertium/modes/eng-spa.mode"],
                              capture_output=True, text=True, check=True).stdout
        here = os.path.dirname(os.path.abspath(__file__))
        env = {**os.environ, "PATH": os.path.join(here, "bin") + os.pathsep + os.environ.get("PATH", "")}
        # $1 "-n": no unknown-word marks (apertium -u); $2: no extra tagger option
        self.proc = subprocess.Popen(["bash", "-c", mode, "eng-spa", "-n", ""], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, env=env)
        self.pending = b""

    def translate(self, source):
        self.proc.stdin.write((MARK + to_stream(source)).encode("utf-8") + b"\0")
        self.proc.stdin.flush()
        while b"\0" not in self.pending:
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise SystemExit("apertium stopped")
            self.pending += chunk
        out, self.pending = self.pending.split(b"\0", 1)
        text = out.decode("utf-8")
        if not text.lstrip().startswith(MARK):  # never hand back another segment's translation
            raise SystemExit("apertium output out of step")
        # a blank left over from the previous segment may precede the marker
        return from_stream(text.lstrip()[len(MARK):])


pipe = Pipe()
for line in sys.stdin:
    request = json.loads(line)
    reply = {"entry_id": request["entry_id"], "predicted": pipe.translate(request["source"])}
    sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n")
    sys.stdout.flush()

"""A hostile submission: for each entry id named in attacks.json it tries one attack, else it answers
with the source (a well-behaved entry). What an attack obtained is put in the translation, so a test
can see that it obtained nothing; attacks that stop the process are named by the sandbox report."""

import ctypes
import json
import os
import socket
import sys
import time

with open("attacks.json", encoding="utf-8") as fh:
    ATTACKS = {int(k): v for k, v in json.load(fh).items()}
libc = ctypes.CDLL(None, use_errno=True)


def read(path):
    try:
        with open(path, "rb") as fh:
            return "READ:" + fh.read(200).decode("utf-8", "replace")
    except OSError as exc:
        return f"BLOCKED:{exc.__class__.__name__}"


def connect(family, kind, address):
    try:
        s = socket.socket(family, kind)
        s.settimeout(1)
        if kind == socket.SOCK_DGRAM:
            s.sendto(b"\0" * 12, address)
            s.recvfrom(100)
        else:
            s.connect(address)
        return "CONNECTED"
    except OSError as exc:
        return f"BLOCKED:{exc.__class__.__name__}"


def attack(name, arg, source):
    if name == "read":
        return read(arg)
    if name == "listdir":
        try:
            return "LISTED:" + ",".join(sorted(os.listdir(arg)))
        except OSError as exc:
            return f"BLOCKED:{exc.__class__.__name__}"
    if name == "tcp":
        return connect(socket.AF_INET, socket.SOCK_STREAM, (arg[0], arg[1]))
    if name == "udp":
        return connect(socket.AF_INET, socket.SOCK_DGRAM, (arg[0], arg[1]))
    if name == "dns":
        try:
            return "RESOLVED:" + str(socket.getaddrinfo(arg, 80)[0][4])
        except OSError as exc:
            return f"BLOCKED:{exc.__class__.__name__}"
    if name == "unshare":  # CLONE_NEWUSER, then CLONE_NEWNET
        results = [libc.unshare(flag) for flag in (0x10000000, 0x40000000)]
        return "UNSHARED" if 0 in results else "BLOCKED:unshare"
    if name == "ptrace":  # PTRACE_ATTACH to the sandbox's init (its parent), then to every pid it can see
        pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
        results = {libc.ptrace(16, pid, 0, 0) for pid in pids if pid != os.getpid()}
        return f"PIDS:{len(pids)}:" + ("ATTACHED" if 0 in results else f"BLOCKED:{os.strerror(ctypes.get_errno())}")
    if name == "environ":
        return "ENV:" + ",".join(f"{k}={v}" for k, v in sorted(os.environ.items())) + read("/proc/self/environ")
    if name == "fork_bomb":
        children = 0
        try:
            while True:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
        except OSError:
            sys.stderr.write(f"forked {children}\n")
            sys.stderr.flush()
        while True:
            time.sleep(1)
    if name == "allocate":
        block = bytearray(10 * 1024**3)
        return str(len(block))
    if name == "spin":
        while True:
            pass
    if name == "fill_tmp":
        with open("/tmp/fill", "wb") as fh:
            for _ in range(10 * 1024):
                fh.write(b"\0" * (1 << 20))
        return "WROTE 10 GB"
    if name == "sleep":
        time.sleep(3600)
    if name == "stdout_source":
        print(source, flush=True)
        time.sleep(5)
    if name == "stderr_source":
        sys.stderr.write(source + "\n")
        return source
    if name == "malformed":
        print("{not json", flush=True)
        time.sleep(5)
    if name == "wrong_id":
        print(json.dumps({"entry_id": -1, "predicted": "x"}), flush=True)
        time.sleep(5)
    if name == "exit":
        sys.exit(3)
    raise SystemExit(f"unknown attack {name}")


for line in sys.stdin:
    request = json.loads(line)
    name, arg = ATTACKS.get(request["entry_id"], (None, None))
    text = request["source"] if name is None else attack(name, arg, request["source"])
    print(json.dumps({"entry_id": request["entry_id"], "predicted": text}), flush=True)

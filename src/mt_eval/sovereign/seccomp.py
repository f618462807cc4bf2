"""The seccomp filter of the sandbox: a BPF program refusing :data:`BLOCKED_SYSCALLS` with EPERM,
built with libseccomp (through ctypes) and handed to ``bwrap --seccomp FD``.

Without it a method could ptrace the sandbox's own init (same uid) and stop it; a gold run refuses to
start without it (docs/decisions.md §37).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os

# refused with EPERM by a seccomp filter (libseccomp): tracing and reading other processes (even the
# sandbox's own init: same uid), kernel keyrings, BPF, perf, userfaultfd, io_uring, mounts, namespaces
BLOCKED_SYSCALLS = ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "keyctl", "add_key",
                    "request_key", "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "mount",
                    "umount2", "pivot_root", "unshare", "setns")


@functools.cache
def seccomp_program() -> bytes | None:
    """The BPF program refusing :data:`BLOCKED_SYSCALLS` (None when libseccomp is not installed)."""
    name = ctypes.util.find_library("seccomp")
    if name is None:
        return None
    lib = ctypes.CDLL(name)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    ctx = lib.seccomp_init(0x7FFF0000)  # SCMP_ACT_ALLOW
    try:
        for syscall in BLOCKED_SYSCALLS:
            number = lib.seccomp_syscall_resolve_name(syscall.encode())
            if number >= 0 and lib.seccomp_rule_add(ctx, 0x00050000 | errno.EPERM, number, 0) != 0:
                return None
        fd = os.memfd_create("seccomp")
        try:
            if lib.seccomp_export_bpf(ctx, fd) != 0:
                return None
            os.lseek(fd, 0, os.SEEK_SET)
            return os.read(fd, 1 << 20)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)

"""Whether a lock's holder is proved dead (spec §11.4)."""

import os
import socket
import stat
import time

from . import defects
from .framing import _parse_object
from .lease import MAX_LEASE_MS
from .schema import is_integer


# ---------------------------------------------------------------------------
# Locks and audit (spec §11.4, §12, §13.2)
# ---------------------------------------------------------------------------


def _boot_id():
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return None


#: How far in the future a renewed lease may be and still count (a clock a little ahead of ours).
LEASE_SKEW_MS = 1000


def pid_namespace():
    """This process's PID namespace (Linux: the target of /proc/self/ns/pid, e.g. ``pid:[4026531836]``), or None."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


def holder_status(data, lock_path=None):
    """Spec §11.4: ``dead`` (proved), ``live``, ``expired`` (a lease of another PID namespace not renewed in time:
    presumed dead once watched for the lease, TJ-DUR-039) or ``unproven`` (never taken over, TJ-DUR-020). A holder of
    another PID namespace is judged by its lease, read from the modification time of ``lock_path``, never by its pid
    (TJ-DUR-038)."""
    obj = _parse_object(data)
    if obj is not None and defects.MUTANT == "pid-only-liveness":
        obj["host"] = socket.gethostname()  # defect switch: TJ-DUR-020
    if obj is None:
        return "unproven"
    host_here = obj.get("host") == socket.gethostname()
    boot = obj.get("boot_id")
    current = _boot_id()
    boot_here = isinstance(boot, str) and current is not None and boot == current
    if not host_here and not boot_here:
        return "unproven"  # another machine, or unparseable: never proved dead (TJ-DUR-020)
    if host_here and isinstance(boot, str) and current is not None and boot != current:
        return "dead"  # the machine rebooted since
    namespace = obj.get("pid_ns")
    if isinstance(namespace, str) and namespace != pid_namespace():
        lease = obj.get("lease_ms")
        if not is_integer(lease) or lease <= 0 or lock_path is None:
            return "unproven"
        if lease > MAX_LEASE_MS:
            return "unproven"  # a lease of years would hold an open waiting for ever (TJ-DUR-039)
        try:
            renewed = os.stat(lock_path).st_mtime
        except OSError:
            return "unproven"
        age_ms = (time.time() - renewed) * 1000
        return "live" if -LEASE_SKEW_MS <= age_ms <= lease else "expired"
    if namespace is None and not host_here:
        return "unproven"
    pid = obj.get("pid")
    if not is_integer(pid) or pid <= 0:
        return "unproven"
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return "dead"
    except OSError:
        return "live"
    return "dead" if _is_zombie(int(pid)) else "live"


def holder_proved_dead(data, lock_path=None):
    """Spec §11.4: a lock's holder is proved dead only on this machine, by a changed boot id or a missing pid."""
    return holder_status(data, lock_path) == "dead"


def _is_zombie(pid):
    """A killed process whose parent has not reaped it still answers kill(pid, 0); it no longer runs (Linux)."""
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            stat = f.read()
    except OSError:
        return False
    state = stat[stat.rfind(b")") + 2:][:1]
    return state in (b"Z", b"X")


def held_by_live_writer(path):
    """True when <path>.lock exists and its holder cannot be proved dead (TJ-DUR-020)."""
    try:
        with open(path + ".lock", "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return holder_status(data, path + ".lock") not in ("dead", "expired")

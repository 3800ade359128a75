"""Whether a lock's holder is proved dead (spec §11.4)."""

import os
import socket
import stat

from . import defects
from .framing import _parse_object
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


def holder_proved_dead(data):
    """Spec §11.4: a lock's holder is proved dead only on this host, by a changed boot id or a missing pid."""
    obj = _parse_object(data)
    if obj is not None and defects.MUTANT == "pid-only-liveness":
        obj["host"] = socket.gethostname()  # defect switch: TJ-DUR-020
    if obj is None or obj.get("host") != socket.gethostname():
        return False  # unparseable, empty, or another host: never proved dead (TJ-DUR-020)
    boot = obj.get("boot_id")
    current = _boot_id()
    if isinstance(boot, str) and current is not None and boot != current:
        return True
    pid = obj.get("pid")
    if not is_integer(pid) or pid <= 0:
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return _is_zombie(int(pid))


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
    return not holder_proved_dead(data)

"""Files at rest (spec TJ-RECOV-014, TJ-RECOV-015): after startup recovery, a file whose writer is gone is plain
JSONL, without the pre-allocated space a crashed writer leaves after its lines (§3.8) or the lock beside it."""

import os

from .discovery import discover
from .liveness import held_by_live_writer
from .records import Findings
from .writer import AppendFile, WriterError, acquire_lock, release_lock


def _ends_in_nul(path):
    """(size, whether the last byte is NUL), or None once the file is gone."""
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                return size, False
            f.seek(size - 1)
            return size, f.read(1) == b"\x00"
    except FileNotFoundError:
        return None  # removed since it was listed (a sweep, an operator): nothing left to settle


def settle_files_at_rest(root):
    """Every journal and state document under ``root`` whose writer is gone, made plain JSONL at rest: a journal
    with pre-allocated space or a leftover lock is opened as its next writer would open it (the lock taken over, a
    torn tail moved aside, the space truncated) and closed, which removes the lock; a state document only has its
    leftover lock removed. Nothing is appended. Returns ``(settled, held)``: ``{"file", "trimmed_bytes",
    "removed_lock"}`` per file changed, and the files a live writer holds, left alone."""
    settled, held = [], []
    for kind, path in discover([root], Findings()):
        has_lock = os.path.lexists(path + ".lock")
        if has_lock and held_by_live_writer(path):
            held.append(path)
            continue
        try:
            if kind == "state":
                if has_lock:
                    release_lock(path, acquire_lock(path))
                    settled.append({"file": path, "trimmed_bytes": 0, "removed_lock": True})
                continue
            before = _ends_in_nul(path)
            if before is None or not (before[1] or has_lock):
                continue
            AppendFile(path, "none").close()
            settled.append({"file": path, "trimmed_bytes": before[0] - os.stat(path).st_size,
                            "removed_lock": has_lock})
        except WriterError as error:
            if error.code != "journal_locked":
                raise
            held.append(path)  # a writer took it between the look and the open
    return settled, held

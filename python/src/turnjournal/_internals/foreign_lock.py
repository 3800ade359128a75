"""The advisory lock real producers take around their appends (spec TJ-DUR-050): gptme's event log writer holds
``fcntl.flock(LOCK_EX)`` on ``<dir>/.events.jsonl.lock`` while it opens ``events.jsonl`` and appends a line. A rewrite
of such a log (compaction) that does not take it can read the file, let gptme append, and rename a copy without that
append over it: the record is gone. Taking the same flock from the read to the rename makes gptme wait for it."""

import contextlib
import errno
import os
import time

try:
    import fcntl
except ImportError:  # not POSIX: no flock to take
    fcntl = None

#: How long a rewrite waits for a foreign writer's flock before it gives up (its appends take milliseconds).
FOREIGN_LOCK_WAIT_S = 10.0


def foreign_lock_path(path):
    """``<dir>/.<name>.lock``: for ``events.jsonl``, gptme's ``.events.jsonl.lock``."""
    directory, name = os.path.split(path)
    return os.path.join(directory, "." + name + ".lock")


@contextlib.contextmanager
def foreign_writers_excluded(path, wait_s=FOREIGN_LOCK_WAIT_S):
    """Hold ``flock(LOCK_EX)`` on ``foreign_lock_path(path)`` for the body (created when missing, never removed: a
    foreign writer may hold it open). Where the platform has no flock, yields False, holding nothing, when the lock
    file does not exist, and raises TurnJournalError ``foreign_lock_unavailable`` when it does: a writer appends under
    it, and a rewrite without it could drop an append (TJ-DUR-053). Raises ``journal_locked`` when another process
    holds it for ``wait_s`` seconds."""
    from .errors import TurnJournalError

    lock = foreign_lock_path(path)
    if fcntl is None:
        if os.path.lexists(lock):
            raise TurnJournalError("foreign_lock_unavailable", "%s: another writer's lock %s is there, and this "
                                   "platform has no flock to take it: stop that writer while this runs (TJ-DUR-053)"
                                   % (path, lock))
        yield False
        return
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as error:
                if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                    raise
            if time.monotonic() > deadline:
                raise TurnJournalError("journal_locked", "%s: another process has held %s (flock) for %.0f s; "
                                       "try again once it is done" % (path, lock, wait_s))
            time.sleep(0.002)
        yield True
    finally:
        os.close(fd)  # closing the descriptor releases the flock

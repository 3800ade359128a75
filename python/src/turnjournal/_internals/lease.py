"""The lease of a held lock (spec §11.4, TJ-DUR-038): while a lock is held, its holder sets the lock file's
modification time every fifth of ``lease_ms``, so that a writer in another PID namespace of this machine (another
container on the same kernel), for which the holder's pid means nothing, can tell a running holder from a dead one.

Renewal is also a fencing check: before it touches the lock it confirms that the name still leads to the file this
holder created (same inode). When it does not, another writer took the lock over (this holder was paused past its
lease) or the lock was removed: the lease is marked lost and the writer refuses every append from then on
(TJ-DUR-040). One daemon thread renews every lease of the process; it never keeps the process alive."""

import errno
import logging
import os
import threading

#: The lease a writer promises in its locks unless told otherwise (``lease_ms``), as the TypeScript writer's.
DEFAULT_LEASE_MS = 10_000

#: The longest lease a writer watches before a take-over (TJ-DUR-039); a lock promising more is unproven.
MAX_LEASE_MS = 300_000

_log = logging.getLogger("turnjournal")


class Lease:
    """One held lock's lease: renewed by the process's renewal thread until ``end``."""

    def __init__(self, path, ino, lease_ms):
        self.path = path
        self.ino = ino
        self.lease_ms = lease_ms
        self.lost = False
        self.ended = False

    def mark_lost(self):
        self.lost = True
        self.end()

    def end(self):
        self.ended = True
        with _state:
            _leases.discard(self)

    def renew(self):
        """Renew once, unless the lock is no longer this holder's. The inode alone is compared: a renewal of every
        lock held must stay a stat and a touch; a lock replaced by one that reused the inode number is caught by the
        token check of the next sync (TJ-DUR-040)."""
        if self.ended:
            return
        try:
            ino = os.lstat(self.path).st_ino
        except FileNotFoundError:
            self.mark_lost()
            return
        if ino != self.ino:
            self.mark_lost()
            return
        try:
            os.utime(self.path, follow_symlinks=False)
        except FileNotFoundError:
            self.mark_lost()


_state = threading.Condition()
_leases = set()
_thread = None


def renew_periodically(lease):
    """Start renewing ``lease`` with the process's one renewal thread, whose period is a fifth of the shortest lease
    held (at least 10 ms)."""
    global _thread
    with _state:
        _leases.add(lease)
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_renew_all, name="turnjournal-lease", daemon=True)
            _thread.start()
        _state.notify_all()  # a shorter lease shortens the period at once


def _period_s():
    return max(10, min(lease.lease_ms for lease in _leases) // 5) / 1000.0


def _renew_all():
    global _thread
    while True:
        with _state:
            if not _leases:
                _thread = None
                return
            _state.wait(_period_s())
            held = list(_leases)
        for lease in held:
            try:
                lease.renew()
            except OSError as error:
                # EIO, EACCES on the directory: it proves nothing about who holds the lock, and a lease that runs out
                # for want of renewals is caught by the fencing check of the next sync (TJ-DUR-040).
                if error.errno not in (errno.EIO, errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC,
                                       errno.ENOTDIR, errno.ELOOP):
                    _log.exception("turnjournal: renewing the lease of %s failed unexpectedly", lease.path)
                else:
                    _log.warning("turnjournal: renewing the lease of %s failed (%s); retried at the next tick",
                                 lease.path, error)


def _forget_in_child():
    """A forked child holds no lock (every lock names its parent's pid) and has no renewal thread."""
    global _state, _thread
    _state = threading.Condition()
    _leases.clear()
    _thread = None


os.register_at_fork(after_in_child=_forget_in_child)

"""The writer (spec §11): lock, torn-tail repair, durable appends, atomic replace."""

import errno
import json
import os
import socket
import stat
import time

from . import defects
from .errors import TurnJournalError
from .framing import _parse_object
from .lease import DEFAULT_LEASE_MS, MAX_LEASE_MS, Lease, renew_periodically
from .liveness import _boot_id, holder_status, pid_namespace
from .records import EVENT_DEFS, RUN_DEFS, TURN_DEFS, classify
from .schema import CHUNK, LINE_LIMIT, is_integer, valid_def


# ---------------------------------------------------------------------------
# Writer (spec §11): lock, torn-tail repair, durable appends
# ---------------------------------------------------------------------------

SAFE_INTEGER = 2 ** 53 - 1


class WriterError(TurnJournalError):
    """A writer's refusal or failure; ``code`` is journal_locked, bad_request, refused or failed."""


def fsync_dir(path):
    if defects.MUTANT == "no-dir-fsync":
        return  # defect switch: TJ-DUR-007
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_dirs(path):
    """Create missing directories, fsyncing the parent of each one created (TJ-DUR-008)."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            pass
        fsync_dir(os.path.dirname(d))


def write_all(fd, data):
    """One logical append: repeat the write after a short write (TJ-DUR-002)."""
    if defects.MUTANT == "single-write":
        os.write(fd, data)  # defect switch: TJ-DUR-002 (a short count taken for the whole line)
        return
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _synced_temporary(target, data):
    """A temporary file beside ``target`` (spec §4.5 name) holding ``data``, fsync'ed; returns its path."""
    directory, name = os.path.split(target)
    tmp = os.path.join(directory, ".%s.%s.tmp" % (name, os.urandom(6).hex()))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    return tmp


def atomic_replace(target, data, unchanged=None):
    """Spec §11.2: temporary file in the same directory, fsync, rename, fsync the directory (TJ-DUR-009). With
    ``unchanged``, a function called once the copy is synced, right before the rename: when it answers False (the
    target changed since it was read, TJ-DUR-051) the copy is removed, the target left as it is, and False returned."""
    tmp = _synced_temporary(target, data)
    try:
        if unchanged is not None and not unchanged():
            os.unlink(tmp)
            return False
        os.rename(tmp, target)
    except BaseException:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(os.path.dirname(target))
    return True


def _link_exclusively(target, data):
    """Create ``target`` holding ``data``, never visible empty (TJ-DUR-029): link a synced temporary file. Returns the
    inode of the file created, which is the lock while ``target`` still leads to it (TJ-DUR-040)."""
    if defects.MUTANT == "lock-written-in-place":  # defect switch: TJ-DUR-029 (the lock exists empty until written)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            write_all(fd, data)
            os.fsync(fd)
            ino = os.fstat(fd).st_ino
        finally:
            os.close(fd)
        fsync_dir(os.path.dirname(target))
        return ino
    tmp = _synced_temporary(target, data)
    try:
        ino = os.lstat(tmp).st_ino
        os.link(tmp, target)  # fails when target exists, like O_CREAT|O_EXCL
    finally:
        os.unlink(tmp)
    fsync_dir(os.path.dirname(target))
    return ino


def _read_lock(path, wait=True):
    """The lock's bytes, or None when it is gone; waits briefly for an empty lock to fill."""
    import time
    for _ in range(20 if wait else 1):
        try:
            fd = open_regular(path, os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            data = b""
            while True:
                block = os.read(fd, CHUNK)
                if not block:
                    break
                data += block
        finally:
            os.close(fd)
        if data or not wait:
            return data
        time.sleep(0.025)
    return data


def _lease_unrenewed(lock, text):
    """Watch a lock whose lease looks expired for its ``lease_ms`` on the monotonic clock (TJ-DUR-039): True when
    neither its file, its modification time nor its bytes changed meanwhile."""
    obj = _parse_object(text)
    lease_ms = obj.get("lease_ms") if obj is not None else None
    if not is_integer(lease_ms) or lease_ms <= 0:
        return False

    def identity():
        try:
            st = os.stat(lock)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns

    first = identity()
    deadline = time.monotonic() + lease_ms / 1000.0
    while time.monotonic() < deadline:
        time.sleep(min(0.1, lease_ms / 10000.0))
        if identity() != first or _read_lock(lock, wait=False) != text:
            return False
    return True


#: The lease of every lock this process holds, by the token of the acquisition (renewed until released).
_held = {}


def own_holder(lease_ms):
    """This process's lock object (spec §11.4): pid, host, a random token; the boot id where there is one
    (TJ-DUR-027); the PID namespace and the lease where the system has namespaces (TJ-DUR-042), since a pid means
    nothing to a writer of another namespace."""
    me = {"pid": os.getpid(), "host": socket.gethostname(), "token": os.urandom(16).hex()}
    if _boot_id() is not None:
        me["boot_id"] = _boot_id()  # TJ-DUR-027
    namespace = pid_namespace()
    if namespace is not None:
        me["pid_ns"] = namespace
        me["lease_ms"] = lease_ms  # TJ-DUR-038: a namespace is never recorded without a lease
    return me


def acquire_lock(file, report=None, lease_ms=DEFAULT_LEASE_MS):
    """Take ``<file>.lock`` (spec §11.4), taking over a lock whose holder is proved dead (TJ-DUR-019, TJ-DUR-025), or
    presumed dead by a lease watched unrenewed for its length (TJ-DUR-039); then ``report["by_lease"]`` is True and
    the caller gives the file a new identity before writing (TJ-DUR-041). Returns the acquisition's token; its lease
    is renewed every ``lease_ms / 5`` until ``release_lock`` (TJ-DUR-038)."""
    if not is_integer(lease_ms) or not 0 < lease_ms <= MAX_LEASE_MS:
        raise WriterError("bad_request", "lease_ms must be an integer in 1..%d" % MAX_LEASE_MS)
    lock = file + ".lock"
    takeover = lock + ".takeover"
    me = own_holder(lease_ms)
    token = me["token"]
    mine = json.dumps(me).encode()
    for _ in range(100):
        try:
            ino = _link_exclusively(lock, mine)
        except FileExistsError:
            pass
        else:
            lease = Lease(lock, ino, lease_ms)
            _held[token] = lease
            if "lease_ms" in me:
                renew_periodically(lease)
            return token
        text = _read_lock(lock)
        if text is None:
            continue  # released meanwhile: try again
        status = holder_status(text, lock)
        by_lease = status == "expired" and _lease_unrenewed(lock, text)
        if status != "dead" and not by_lease:
            raise WriterError("journal_locked", "%s is locked by a live writer: %s"
                              % (file, text.decode("utf-8", "replace")[:200]))  # TJ-DUR-018, TJ-DUR-038
        if report is not None:
            report["by_lease"] = by_lease
        # Take-over protocol, step 1. A take-over lock is held for milliseconds and never renewed: one of another
        # namespace is removed once older than its lease, one of this namespace once its pid is gone.
        try:
            _link_exclusively(takeover, mine)
        except FileExistsError:
            other = _read_lock(takeover)
            if other is not None and holder_status(other, takeover) in ("dead", "expired") \
                    and _read_lock(takeover, wait=False) == other:
                try:
                    os.unlink(takeover)
                except FileNotFoundError:
                    pass
            time.sleep(0.01)
            continue
        try:
            if _read_lock(lock, wait=False) == text:  # step 2: still the same stale lock
                try:
                    os.unlink(lock)
                except FileNotFoundError:
                    pass
                fsync_dir(os.path.dirname(lock))
        finally:
            os.unlink(takeover)  # step 3, then create the lock as usual
    raise WriterError("journal_locked", "could not take the lock of %s: it keeps changing hands" % file)


def lease_of(token):
    """The lease of a held acquisition (its lock file's inode, whether a renewal found it lost), or None."""
    return _held.get(token)


def release_lock(file, token):
    """Remove our lock, only when it still holds our token (TJ-DUR-026); its lease stops being renewed."""
    lease = _held.pop(token, None)
    if lease is not None:
        lease.end()
    lock = file + ".lock"
    data = _read_lock(lock, wait=False)
    obj = _parse_object(data) if data else None
    if obj is not None and (obj.get("token") == token or defects.MUTANT == "unlink-any-lock"):  # defect switch: TJ-DUR-026
        os.unlink(lock)
        fsync_dir(os.path.dirname(lock))


def repair_torn_tail(fd, file):
    """TJ-DUR-005: copy the torn bytes to <file>.<offset>.torn (synced), truncate to the last LF, fsync.

    The NUL bytes that end the file are pre-allocated space (TJ-FRAME-036), not torn bytes: they are not copied, a
    file whose last LF only they follow has no torn tail, and the truncation removes them too, so an append (O_APPEND)
    lands right after the last line, never after the space (TJ-DUR-033)."""
    size = os.fstat(fd).st_size
    end = size
    last_lf = -1
    data_end = None  # the end of the last byte that is not NUL
    while end > 0 and last_lf < 0:
        start = max(0, end - CHUNK)
        block = os.pread(fd, end - start, start)
        if data_end is None:
            kept = len(block.rstrip(b"\x00"))
            if kept > 0 or start == 0:
                data_end = start + kept
        i = block.rfind(b"\n")
        if i >= 0:
            last_lf = start + i
        end = start
    keep = last_lf + 1
    if keep == size:
        return
    data_end = keep if data_end is None else max(keep, data_end)
    if data_end > keep:
        torn = bytearray()
        pos = keep
        while pos < data_end:
            block = os.pread(fd, min(CHUNK, data_end - pos), pos)
            if not block:
                break
            torn += block
            pos += len(block)
        atomic_replace("%s.%d.torn" % (file, keep), bytes(torn))
    os.ftruncate(fd, keep)
    os.fsync(fd)


def _check_integers(value):
    if isinstance(value, bool):
        return
    if isinstance(value, int) and abs(value) > SAFE_INTEGER and defects.MUTANT != "unsafe-integers-written":  # TJ-FRAME-035
        raise WriterError("bad_request", "integer %d is outside -(2^53-1)..2^53-1 (TJ-FRAME-035)" % value)
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        raise WriterError("bad_request", "not a JSON number: %r" % value)
    if isinstance(value, list):
        for v in value:
            _check_integers(v)
    elif isinstance(value, dict):
        for v in value.values():
            _check_integers(v)


def encode_record(record):
    """The record's line (TJ-FRAME-005..009): compact JSON, ASCII-escaped (so U+2028/U+2029 are escaped), one LF."""
    if not isinstance(record, dict):
        raise WriterError("bad_request", "a journal record must be a JSON object")
    _check_integers(record)
    family, rtype = classify(record)
    if family == "bad":
        raise WriterError("bad_request", "the record's event or type member is not a string")
    defs = {"turn": TURN_DEFS, "event": EVENT_DEFS, "run": RUN_DEFS}.get(family, {})
    if rtype in defs and not valid_def(record, defs[rtype]) and defects.MUTANT != "accept-invalid":  # switch: TJ-COMPAT-018
        raise WriterError("bad_request", "refusing to write an invalid %r record ($defs/%s)"
                          % (rtype, defs[rtype]))  # TJ-COMPAT-018, TJ-TURN-015
    if family == "state":
        raise WriterError("bad_request", "a state document is not appended to a journal")
    line = json.dumps(record, ensure_ascii=defects.MUTANT != "latin1-lines", separators=(",", ":"), allow_nan=False,
                      sort_keys=defects.MUTANT == "sorted-members").encode(  # defect switches: TJ-FRAME-005, TJ-FRAME-006
        "latin-1" if defects.MUTANT == "latin1-lines" else "ascii", "replace") + (
        b"\r\n" if defects.MUTANT == "crlf-lines" else b"\n")  # defect switch: TJ-FRAME-009
    if defects.MUTANT == "duplicate-member" and len(record) > 0:  # defect switch: TJ-FRAME-010 (first member written twice)
        first = next(iter(record))
        member = json.dumps({first: record[first]}, ensure_ascii=True, separators=(",", ":"))[1:-1].encode("ascii")
        line = line[:-2] + b"," + member + b"}\n"
    if len(line) - 1 > LINE_LIMIT and defects.MUTANT != "no-line-limit":  # defect switch: TJ-DUR-028
        raise WriterError("bad_request", "the line would be %d bytes, over the %d-byte limit (TJ-DUR-028)"
                          % (len(line) - 1, LINE_LIMIT))
    return line


def open_regular(path, flags, mode=0o644):
    """Open ``path`` never through a symbolic link in its last component (TJ-DUR-031) and without waiting for the
    other end of a FIFO, then refuse anything but a regular file (TJ-DUR-032)."""
    safe = 0 if defects.MUTANT == "follow-symlink" else os.O_NOFOLLOW  # defect switch: TJ-DUR-031
    try:
        fd = os.open(path, flags | safe | os.O_NONBLOCK, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise WriterError("failed", "%s is a symbolic link: a writer does not follow it (TJ-DUR-031)" % path)
        raise
    if defects.MUTANT != "no-file-type-check" and not stat.S_ISREG(os.fstat(fd).st_mode):  # defect switch: TJ-DUR-032
        os.close(fd)
        raise WriterError("failed", "%s is not a regular file (TJ-DUR-032)" % path)
    return fd


class AppendFile:
    """One journal file open for appends, under its lock, whose lease is renewed every ``lease_ms / 5`` while it is
    open (TJ-DUR-038)."""

    def __init__(self, file, durability, lease_ms=DEFAULT_LEASE_MS):
        if durability not in ("every", "group", "none"):
            raise WriterError("bad_request", "durability must be every, group or none")
        self.file = file
        self.durability = durability
        self.broken = None
        self.fenced = None
        make_dirs(os.path.dirname(file))
        report = {}
        self.token = acquire_lock(file, report, lease_ms)
        self.took_over = "by_lease" in report  # set only on a take-over (TJ-DUR-019, TJ-DUR-039)
        self.took_over_by_lease = bool(report.get("by_lease"))
        try:
            self.lease = lease_of(self.token)
            if self.took_over_by_lease and os.path.lexists(file):
                # TJ-DUR-041: the presumed-dead holder may still run and write through its descriptor; its writes
                # must land in a file no name leads to, not over ours.
                with open(file, "rb") as old:
                    atomic_replace(file, old.read())
            try:
                self.fd = open_regular(file, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL)
                os.fsync(self.fd)
                fsync_dir(os.path.dirname(file))  # TJ-DUR-007
            except FileExistsError:
                self.fd = open_regular(file, os.O_RDWR | os.O_APPEND)
                repair_torn_tail(self.fd, file)  # TJ-DUR-004/005
        except BaseException:
            release_lock(file, self.token)
            raise

    def append(self, record):
        if self.fenced is not None:
            raise WriterError("journal_fenced", "%s (TJ-DUR-040); reopen the file" % self.fenced)
        if self.broken is not None:
            raise WriterError("failed", "appends to %s are refused after an earlier failure: %s"
                              % (self.file, self.broken))  # TJ-DUR-021
        line = encode_record(record)
        self._refuse_if_fenced()
        before = os.fstat(self.fd).st_size
        self.size_before_last = before
        try:
            write_all(self.fd, line)
        except OSError as e:
            if defects.MUTANT == "swallow-write-error":
                return  # defect switch: TJ-DUR-022
            if defects.MUTANT == "no-truncate-after-failure":  # defect switch: TJ-DUR-023 (the half line stays, appends go on)
                raise WriterError("failed", "append to %s failed: %s" % (self.file, e))
            try:
                os.ftruncate(self.fd, before)  # TJ-DUR-023
            except OSError as e2:
                self.broken = "write failed and the file could not be truncated back: %s" % e2
            raise WriterError("failed", "append to %s failed: %s" % (self.file, e))  # TJ-DUR-022
        self.appended = getattr(self, "appended", 0) + 1
        skip = (defects.MUTANT == "no-fdatasync"  # defect switch: TJ-DUR-003
                or (defects.MUTANT == "group-sync-every-4th" and self.durability == "group"
                    and self.appended % 4 != 0)  # defect switch: TJ-DUR-014
                or (defects.MUTANT == "submitted-unsynced" and record.get("event") == "submitted"))  # switch: TJ-DUR-001
        if self.durability != "none" and not skip:
            try:
                os.fdatasync(self.fd)  # TJ-DUR-003: acknowledge only after the sync returns
            except OSError as e:
                if defects.MUTANT != "no-poison":  # defect switch: TJ-DUR-021
                    self.broken = "fdatasync failed: %s" % e
                raise WriterError("failed", "fdatasync of %s failed: %s" % (self.file, e))
            self._refuse_if_fenced()  # TJ-DUR-040: after the sync, before the acknowledgement

    def _refuse_if_fenced(self):
        """TJ-DUR-040: refuse (now and from then on) once the lock is no longer the one this writer created: its lease
        found lost by a renewal, another file, or another token (inode numbers are reused at once). Not in ``none``
        mode, which has no sync to guard."""
        if self.durability == "none":
            return
        lock = self.file + ".lock"
        if not self.lease.lost:
            try:
                same_file = os.stat(lock).st_ino == self.lease.ino
            except FileNotFoundError:
                same_file = False
            if same_file:
                holder = _parse_object(_read_lock(lock, wait=False) or b"")
                if holder is not None and holder.get("token") == self.token:
                    return
            self.lease.mark_lost()
        self.fenced = "the lock of %s changed hands: this writer no longer owns the file" % self.file
        raise WriterError("journal_fenced", "%s (TJ-DUR-040)" % self.fenced)

    def close(self):
        if defects.MUTANT == "truncate-last-on-close" and getattr(self, "size_before_last", None) is not None:
            os.ftruncate(self.fd, self.size_before_last)  # defect switch: TJ-DUR-024
        try:
            if defects.MUTANT != "no-close-fsync":  # defect switch: TJ-DUR-015
                os.fsync(self.fd)  # TJ-DUR-015 (none); harmless after every/group
        finally:
            os.close(self.fd)
            release_lock(self.file, self.token)

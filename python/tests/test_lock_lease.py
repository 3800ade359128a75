"""A TypeScript writer and a Python writer on the same event log never both own it (spec §11.4, TJ-DUR-038..042):
real processes of both libraries, in one PID namespace and in two (containers on one kernel, by
``unshare --pid --fork --mount-proc``, root on Linux), including the take-over once a dead holder's lease runs out
and the fencing of a paused holder that wakes after it. Every test ends by reading the file: exactly the records each
writer had acknowledged, in order, and nothing else. Needs the built TypeScript writer (``npm run bootstrap``)."""

import json
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
PY_WORKER = os.path.join(HERE, "workers", "event_writer.py")
TS_WORKER = os.path.join(HERE, "workers", "ts_event_writer.mjs")
TS_WRITER = os.path.join(REPO, "packages", "writer", "dist", "index.js")

#: A short lease keeps the tests quick; the rules do not depend on its length.
LEASE_MS = 400
#: Hang guard of one answer (its quiet duration is milliseconds; a take-over waits about two leases).
ANSWER_TIMEOUT_S = 20.0


def _namespaces_problem():
    if sys.platform != "linux":
        return "PID namespaces are Linux only"
    if shutil.which("unshare") is None:
        return "unshare (util-linux) is not installed"
    probe = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True, text=True)
    return None if probe.returncode == 0 else "unshare --pid --fork --mount-proc failed: " + probe.stderr.strip()


NAMESPACES_PROBLEM = _namespaces_problem()


class Worker:
    """One writer process (``py`` or ``ts``) speaking the workers' line protocol; in a new PID namespace of its own
    when ``pid_in_namespace`` is 2 or 3 (the writer runs under a shell, pid 1, after ``pid_in_namespace - 2``
    short-lived commands, so that a test chooses whether the holder's pid exists in the other namespace)."""

    def __init__(self, kind, file, tag, pid_in_namespace=None):
        config = json.dumps({"file": file, "leaseMs": LEASE_MS, "tag": tag})
        argv = [sys.executable, PY_WORKER, config] if kind == "py" else ["node", TS_WORKER, config]
        if pid_in_namespace is not None:
            quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in argv)
            # The trailing `true` keeps the shell from exec'ing the writer in its own place (it would be pid 1).
            script = ("/bin/true; " if pid_in_namespace == 3 else "") + quoted + "; true"
            argv = ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script]
        self.kind = kind
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.answers = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.answers.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _read(stream, sink):
        for line in stream:
            sink(line)

    def request(self, **command):
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()
        try:
            return json.loads(self.answers.get(timeout=ANSWER_TIMEOUT_S))
        except queue.Empty:
            raise AssertionError("%s writer: no answer to %r within %ss; stderr: %s"
                                 % (self.kind, command, ANSWER_TIMEOUT_S, "".join(self.stderr))) from None

    def open_when_free(self):
        """Open, asking again while the lock is held, until it opens or the hang guard passes."""
        deadline = time.monotonic() + ANSWER_TIMEOUT_S
        while True:
            answer = self.request(op="open")
            if answer.get("opened") or answer.get("error") != "journal_locked" or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)

    def signal(self, sig):
        """Signal the worker's whole process group (its namespace, when it has one)."""
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass  # the group already ended

    def stop(self):
        self.signal(signal.SIGKILL)
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            stream.close()


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def contents(file):
    """The message contents of the event log, in file order (every line a record: nothing interleaved)."""
    with open(file, "rb") as f:
        lines = [line for line in f.read().rstrip(b"\x00").split(b"\n") if line]
    records = [json.loads(line) for line in lines]
    return [r["payload"]["message"]["content"] for r in records if r.get("type") == "message_append"]


class Base(unittest.TestCase):
    def setUp(self):
        if not os.path.isfile(TS_WRITER) or shutil.which("node") is None:
            self.fail("the built TypeScript writer is needed: %s (run npm run bootstrap)" % TS_WRITER)
        self.workers = []

    def new_file(self):
        """A fresh event log path for one pairing (a failed pairing's writers must not hold the next one's file)."""
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-lease-")
        self.addCleanup(tmp.cleanup)
        return os.path.join(os.path.realpath(tmp.name), "events.jsonl")

    def tearDown(self):
        for worker in self.workers:
            worker.stop()

    def start(self, kind, tag, pid_in_namespace=None):
        worker = Worker(kind, self.file, tag, pid_in_namespace)
        self.workers.append(worker)
        return worker

    def append_acked(self, worker, *ns):
        for n in ns:
            self.assertEqual(worker.request(op="append", n=n), {"acked": n})


sys.path.insert(0, os.path.join(REPO, "python", "src"))
from turnjournal import EventLog, TurnJournalError  # noqa: E402
from turnjournal._internals.liveness import holder_status, pid_namespace  # noqa: E402


class OwnLock(unittest.TestCase):
    """What the Python writer's own lock says and does, in this process."""

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-lease-")
        self.addCleanup(tmp.cleanup)
        self.dir = os.path.realpath(tmp.name)

    @unittest.skipIf(pid_namespace() is None, "no PID namespaces here (not Linux, or no /proc)")
    def test_the_lock_records_its_namespace_and_lease_and_the_lease_is_renewed_while_held(self):
        with EventLog(self.dir, lease_ms=LEASE_MS) as log:
            lock = log.path + ".lock"
            with open(lock) as f:
                holder = json.load(f)
            self.assertEqual((holder["pid_ns"], holder["lease_ms"]), (pid_namespace(), LEASE_MS))  # TJ-DUR-042
            first = os.stat(lock).st_mtime_ns
            time.sleep(3 * LEASE_MS / 5 / 1000)  # three renewal periods
            self.assertGreater(os.stat(lock).st_mtime_ns, first)  # TJ-DUR-038
            log.append_message({"role": "user", "content": "still mine"})

    def test_a_writer_whose_lock_was_replaced_refuses_that_append_and_every_later_one(self):
        log = EventLog(self.dir, lease_ms=LEASE_MS)
        self.addCleanup(log.close)
        log.append_message({"role": "user", "content": "acked"})
        lock = log.path + ".lock"
        with open(lock) as f:
            taker = dict(json.load(f), token="another-writer")
        os.unlink(lock)
        with open(lock, "w") as f:
            json.dump(taker, f)
        for attempt in ("refused", "refused too"):
            with self.assertRaises(TurnJournalError) as refused:
                log.append_message({"role": "user", "content": attempt})
            self.assertEqual(refused.exception.code, "journal_fenced")  # TJ-DUR-040
        self.assertEqual(contents(log.path), ["acked"])

    def test_a_lock_of_another_namespace_promising_a_lease_over_five_minutes_is_unproven(self):
        lock = os.path.join(self.dir, "events.jsonl.lock")
        with open(lock, "w") as f:
            json.dump({"pid": 2, "host": socket.gethostname(), "pid_ns": "pid:[1]", "lease_ms": 300_001}, f)
        os.utime(lock, (0, 0))  # renewed long ago: expired, were the lease believed
        self.assertEqual(holder_status(read_bytes(lock), lock), "unproven")  # TJ-DUR-039
        with open(lock, "w") as f:
            json.dump({"pid": 2, "host": socket.gethostname(), "pid_ns": "pid:[1]", "lease_ms": 300_000}, f)
        os.utime(lock, (0, 0))
        self.assertEqual(holder_status(read_bytes(lock), lock), "expired")


class OneNamespace(Base):
    """Judged by pid: the holder that runs keeps the log, the one killed loses it at once (TJ-DUR-018, TJ-DUR-019)."""

    def test_each_refuses_the_other_while_it_runs_and_takes_over_once_it_is_killed(self):
        for first, second in (("py", "ts"), ("ts", "py")):
            with self.subTest(holder=first, other=second):
                self.file = self.new_file()
                holder, other = self.start(first, "a"), self.start(second, "b")
                self.assertEqual(holder.request(op="open")["opened"], True)
                self.append_acked(holder, 1, 2)
                self.assertEqual(other.request(op="open"), {"error": "journal_locked"})
                self.append_acked(holder, 3)
                holder.signal(signal.SIGKILL)
                holder.proc.wait(timeout=60)
                self.assertEqual(other.open_when_free(), {"opened": True, "pid": other.proc.pid, "tookOver": True})
                self.append_acked(other, 4)
                self.assertEqual(other.request(op="close"), {"closed": True})
                self.assertEqual(contents(self.file), ["a1", "a2", "a3", "b4"])


@unittest.skipIf(NAMESPACES_PROBLEM is not None and os.environ.get("CI") != "true" and os.getuid() != 0,
                 "PID namespaces unavailable: %s" % NAMESPACES_PROBLEM)
class TwoNamespaces(Base):
    """Judged by lease (TJ-DUR-038..041), each implementation against the other."""

    def setUp(self):
        super().setUp()
        if NAMESPACES_PROBLEM is not None:
            self.fail("the PID-namespace tests cannot run: %s" % NAMESPACES_PROBLEM)

    def test_a_holder_that_renews_its_lease_keeps_the_log_though_its_pid_is_absent_there(self):
        for first, second in (("py", "ts"), ("ts", "py")):
            with self.subTest(holder=first, other=second):
                self.file = self.new_file()
                holder = self.start(first, "a", pid_in_namespace=2)
                self.assertEqual(holder.request(op="open")["pid"], 2)
                self.append_acked(holder, 1, 2)
                # In the other namespace pid 2 ran and exited: by its pid alone the holder looks dead, and after three
                # leases its lock would look expired without renewals.
                other = self.start(second, "b", pid_in_namespace=3)
                time.sleep(3 * LEASE_MS / 1000)
                self.assertEqual(other.request(op="open"), {"error": "journal_locked"})
                self.append_acked(holder, 3)
                self.assertEqual(holder.request(op="close"), {"closed": True})
                self.assertEqual(contents(self.file), ["a1", "a2", "a3"])

    def test_a_writer_restarted_in_a_new_namespace_with_the_dead_holders_pid_takes_over_once_the_lease_runs_out(self):
        for first, second in (("py", "ts"), ("ts", "py")):
            with self.subTest(crashed=first, restarted=second):
                self.file = self.new_file()
                crashed = self.start(first, "a", pid_in_namespace=2)
                self.assertEqual(crashed.request(op="open")["pid"], 2)
                self.append_acked(crashed, 1)
                crashed.signal(signal.SIGKILL)
                # The restarted writer is pid 2 as well: by its pid, the dead holder would be alive (itself).
                restarted = self.start(second, "b", pid_in_namespace=2)
                self.assertEqual(restarted.open_when_free(), {"opened": True, "pid": 2, "tookOver": True})
                self.append_acked(restarted, 2)
                self.assertEqual(restarted.request(op="close"), {"closed": True})
                self.assertEqual(contents(self.file), ["a1", "b2"])

    def test_a_paused_holder_that_wakes_after_a_take_over_is_fenced_and_nothing_it_writes_lands(self):
        for first, second in (("py", "ts"), ("ts", "py")):
            with self.subTest(paused=first, taker=second):
                self.file = self.new_file()
                paused = self.start(first, "a", pid_in_namespace=2)
                self.assertEqual(paused.request(op="open")["opened"], True)
                self.append_acked(paused, 1, 2)
                paused.signal(signal.SIGSTOP)
                taker = self.start(second, "b", pid_in_namespace=3)
                self.assertEqual(taker.open_when_free(), {"opened": True, "pid": 3, "tookOver": True})
                self.append_acked(taker, 3, 4)
                paused.signal(signal.SIGCONT)
                self.assertEqual(paused.request(op="append", n=5), {"refused": 5, "error": "journal_fenced"})
                self.assertEqual(paused.request(op="append", n=6)["refused"], 6)
                self.append_acked(taker, 7)
                self.assertEqual(taker.request(op="close"), {"closed": True})
                self.assertEqual(contents(self.file), ["a1", "a2", "b3", "b4", "b7"])


if __name__ == "__main__":
    unittest.main()

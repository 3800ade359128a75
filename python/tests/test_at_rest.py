"""Plain JSONL at rest (spec TJ-RECOV-014, TJ-RECOV-015): after ``recover_store``, a file whose writer was killed is
read by ``json.loads`` per line, with no NUL bytes after its lines and no lock beside it. The writers are real child
processes killed with SIGKILL: the TypeScript writer (which pre-allocates space, spec §3.8; the test fixture
packages/writer/test/recovery/at-rest-child.mjs, built by ``npm run bootstrap``) and this library's own."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python", "src"))
ENV = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python", "src"))
TS_CHILD = os.path.join(REPO, "packages", "writer", "test", "recovery", "at-rest-child.mjs")
TS_DIST = os.path.join(REPO, "packages", "writer", "dist", "index.js")

from turnjournal import TurnJournal, check_store, recover_store  # noqa: E402

TS_JOURNALS = ["_turn_journal/sess-t~1.jsonl", "sess-e/events.jsonl", "sessions/2026/02/04/run-1.jsonl"]

# A Python writer of each family, killed while it holds its files. The state document's lock is taken the way
# write_state takes it, and held: a process killed inside write_state leaves that lock.
PY_CHILD = """
    import sys
    from turnjournal import EventLog, RunWriter, TurnJournal, write_state
    from turnjournal._internals.writer import acquire_lock
    root = sys.argv[1]
    run = RunWriter("run-py", "2026-02-05T00:00:00Z", root=root)
    run.run_start("list files")
    journal = TurnJournal(root, "sess-py", shard="1")
    journal.complete(journal.submit("hello", turn_id="t-1").turn_id)
    log = EventLog(root + "/sess-pe/events.jsonl")
    log.append_message({"role": "user", "content": "one"})
    state = write_state({"messages": [{"role": "user", "content": "one"}]}, root=root, session_id="sess-ps")
    acquire_lock(state.path)
    print("ready", flush=True)
    sys.stdin.read()
"""
PY_JOURNALS = ["_turn_journal/sess-py~1.jsonl", "sess-pe/events.jsonl", "sessions/2026/02/05/run-py.jsonl"]
PY_STATE = "sessions/state/sess-ps.json"


def run_and_kill(argv):
    """Start a writer child, wait for its ``ready`` line, SIGKILL it."""
    proc = subprocess.Popen(argv, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        line = proc.stdout.readline()
        if not line.startswith("ready"):
            proc.kill()
            raise AssertionError("writer child never got ready: %r %s" % (line, proc.stderr.read()))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
    if proc.returncode != -signal.SIGKILL:
        raise AssertionError("writer child exited with %s before it was killed" % proc.returncode)


def files_under(root):
    out = []
    for dirpath, _, names in os.walk(root):
        out += [os.path.relpath(os.path.join(dirpath, name), root) for name in names]
    return sorted(out)


def naive_read(path):
    """What the seeds' own readers do: one json.loads per line; the file must end with its last line's LF."""
    with open(path, "rb") as f:
        data = f.read()
    if not data.endswith(b"\n"):
        raise AssertionError("%s does not end with an LF: %r" % (path, data[-16:]))
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


def records_per_file(root):
    return {f["path"]: f["records"] for f in check_store([root])["files"]}


class AtRest(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-at-rest-")
        self.addCleanup(tmp.cleanup)
        self.root = os.path.realpath(tmp.name)

    def test_a_killed_typescript_writer_leaves_nul_space_and_locks_that_recovery_removes(self):
        if shutil.which("node") is None or not os.path.isfile(TS_DIST):
            raise AssertionError("the built TypeScript writer is needed: %s (run npm run bootstrap)" % TS_DIST)
        run_and_kill(["node", TS_CHILD, self.root])
        self.assertEqual(files_under(self.root), sorted(TS_JOURNALS + [f + ".lock" for f in TS_JOURNALS]))
        for name in TS_JOURNALS:
            with open(os.path.join(self.root, name), "rb") as f:
                self.assertEqual(f.read()[-1:], b"\x00", name)  # the space of §3.8, what json.loads fails on
        before = records_per_file(self.root)

        recovery = recover_store(self.root, None)

        self.assertEqual(recovery.plan, [])
        self.assertEqual(sorted(os.path.relpath(s["file"], self.root) for s in recovery.settled), TS_JOURNALS)
        self.assertTrue(all(s["removed_lock"] and s["trimmed_bytes"] > 0 for s in recovery.settled), recovery.settled)
        self.assertEqual(files_under(self.root), TS_JOURNALS)
        lines = {name: naive_read(os.path.join(self.root, name)) for name in TS_JOURNALS}
        self.assertEqual([r["type"] for r in lines["sessions/2026/02/04/run-1.jsonl"]],
                         ["header", "run.start", "run.status"])
        self.assertEqual(records_per_file(self.root), before)  # only space and locks went
        self.assertEqual(recover_store(self.root, None).settled, [])

    def test_a_killed_python_writer_leaves_locks_that_recovery_removes(self):
        run_and_kill([sys.executable, "-c", textwrap.dedent(PY_CHILD), self.root])
        expected = sorted(PY_JOURNALS + [PY_STATE])
        self.assertEqual(files_under(self.root), sorted(expected + [f + ".lock" for f in expected]))
        before = records_per_file(self.root)

        recovery = recover_store(self.root, None)

        self.assertEqual(sorted(os.path.relpath(s["file"], self.root) for s in recovery.settled), expected)
        self.assertTrue(all(s["removed_lock"] and s["trimmed_bytes"] == 0 for s in recovery.settled),
                        recovery.settled)
        self.assertEqual(files_under(self.root), expected)
        for name in PY_JOURNALS:
            naive_read(os.path.join(self.root, name))
        self.assertEqual(records_per_file(self.root), before)

    def test_a_file_a_live_writer_holds_is_left_alone(self):
        with TurnJournal(self.root, "sess-live", shard="1") as journal:
            journal.complete(journal.submit("hello", turn_id="t-1").turn_id)
            path = journal.path
            with open(path, "rb") as f:
                before = f.read()
            recovery = recover_store(self.root, None)
            self.assertEqual(recovery.settled, [])
            self.assertTrue(os.path.exists(path + ".lock"))
            with open(path, "rb") as f:
                self.assertEqual(f.read(), before)


if __name__ == "__main__":
    unittest.main()

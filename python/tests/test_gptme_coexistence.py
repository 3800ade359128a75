"""Compacting an event log beside gptme's own writer loses nothing (spec TJ-DUR-050, TJ-DUR-051). gptme (seed 002)
appends under ``fcntl.flock`` on ``<logdir>/.events.jsonl.lock`` and knows nothing of ``events.jsonl.lock``; a
compaction that read the log, let gptme append, then renamed its copy over the file dropped that append (before this
change: 2 of 3,000 messages in 1 of 5 runs; the TypeScript CLI's ``compact --retention 0``: 10 in 1 of 5). The
library's compaction takes gptme's flock from its read to its rename, and leaves a file that changed meanwhile anyway
(a writer that takes no lock at all) as it was."""

import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

import fcntl  # noqa: E402

from turnjournal import EventLog, compact_event_log, read_events, recover_messages  # noqa: E402
from turnjournal._internals import retention  # noqa: E402

GPTME_WRITER = os.path.join(HERE, "workers", "gptme_writer.py")
MESSAGES = 3000
RUNS = 3
#: Hang guard for one gptme-style writer (it takes about 5 s on a loaded 2-core machine).
WRITER_TIMEOUT_S = 120


def gptme_log(directory, contents):
    """A conversation directory whose events.jsonl gptme wrote: messages, then a checkpoint, then one more message."""
    with EventLog(directory) as log:
        for content in contents:
            log.append_message({"role": "user", "content": content})
        log.checkpoint()
        log.append_message({"role": "user", "content": "after"})
    return os.path.join(directory, "events.jsonl")


class Base(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-gptme-")
        self.addCleanup(tmp.cleanup)
        self.dir = os.path.realpath(tmp.name)


class BesideARealGptmeWriter(Base):
    def test_compacting_all_the_time_while_gptme_appends_3000_messages_loses_none(self):
        for run in range(RUNS):
            with self.subTest(run=run):
                logdir = os.path.join(self.dir, "run%d" % run)
                os.mkdir(logdir)
                writer = subprocess.Popen([sys.executable, GPTME_WRITER, logdir, str(MESSAGES), "1"],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                compactions = removed = 0
                deadline = time.monotonic() + WRITER_TIMEOUT_S
                while writer.poll() is None:
                    self.assertLess(time.monotonic(), deadline, "the gptme-style writer hung")
                    if not os.path.exists(os.path.join(logdir, "events.jsonl")):
                        time.sleep(0.001)
                        continue
                    removed += compact_event_log(logdir, retention_seconds=0)["removed_records"]
                    compactions += 1
                out, err = writer.communicate()
                self.assertEqual((writer.returncode, out.strip()), (0, "done %d" % MESSAGES), err)
                # The race was run: the log was cut many times while it grew.
                self.assertGreater(removed, MESSAGES // 2, "%d compactions removed %d records" % (compactions, removed))
                messages = [m["content"] for m in recover_messages(logdir) or []]
                self.assertEqual(messages, ["m%d" % n for n in range(MESSAGES)])
                seqs = [r["seq"] for r in read_events(logdir)]
                self.assertEqual(seqs, list(range(seqs[0], seqs[0] + len(seqs))))  # no seq lost after the cut


class TheLocks(Base):
    def test_compaction_waits_while_gptme_holds_its_flock_and_cuts_once_it_is_released(self):
        path = gptme_log(self.dir, ["a", "b"])
        with open(os.path.join(self.dir, ".events.jsonl.lock"), "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)  # gptme in the middle of an append
            done = []
            compacting = threading.Thread(target=lambda: done.append(compact_event_log(path, retention_seconds=0)))
            compacting.start()
            time.sleep(0.5)
            self.assertEqual(done, [], "compaction ran while gptme held its flock (TJ-DUR-050)")
            with open(path, "a") as f:  # gptme's append, under its lock
                f.write('{"seq": 4, "ts": "2026-01-01T00:00:00+00:00", "type": "message_append", '
                        '"payload": {"message": {"role": "user", "content": "appended under flock"}}}\n')
            fcntl.flock(held, fcntl.LOCK_UN)
            compacting.join(timeout=60)
        self.assertEqual(done[0]["removed_records"], 2)
        self.assertEqual([m["content"] for m in recover_messages(path)], ["a", "b", "after", "appended under flock"])

    def test_a_log_changed_between_the_read_and_the_rename_is_left_as_it_was(self):
        path = gptme_log(self.dir, ["a", "b"])
        line = ('{"seq": 4, "ts": "2026-01-01T00:00:00+00:00", "type": "message_append", '
                '"payload": {"message": {"role": "user", "content": "no lock at all"}}}\n')
        real_replace = retention.atomic_replace

        def replace_after_a_foreign_append(target, data, unchanged=None):
            with open(target, "a") as f:  # a writer that takes neither lock, after the compaction read the file
                f.write(line)
            return real_replace(target, data, unchanged)

        retention.atomic_replace = replace_after_a_foreign_append
        self.addCleanup(setattr, retention, "atomic_replace", real_replace)
        result = compact_event_log(path, retention_seconds=0, now=time.time() + 1)
        self.assertEqual(result["removed_records"], 0)
        self.assertIn("changed", result["skipped"])  # TJ-DUR-051
        self.assertEqual([m["content"] for m in recover_messages(path)], ["a", "b", "after", "no lock at all"])
        self.assertEqual([n for n in os.listdir(self.dir) if n.endswith(".tmp")], [])  # its copy removed

    def test_a_flock_held_past_the_wait_is_refused_with_journal_locked(self):
        from turnjournal import TurnJournalError
        from turnjournal._internals import foreign_lock
        path = gptme_log(self.dir, ["a"])
        with open(os.path.join(self.dir, ".events.jsonl.lock"), "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            with self.assertRaises(TurnJournalError) as refused:
                with foreign_lock.foreign_writers_excluded(path, wait_s=0.2):
                    pass
        self.assertEqual(refused.exception.code, "journal_locked")
        self.assertIn(".events.jsonl.lock", str(refused.exception))

    def test_without_flock_a_log_with_a_foreign_lock_file_is_refused_and_one_without_is_compacted(self):
        from turnjournal import TurnJournalError
        from turnjournal._internals import foreign_lock
        self.addCleanup(setattr, foreign_lock, "fcntl", foreign_lock.fcntl)
        foreign_lock.fcntl = None  # a platform without flock
        os.mkdir(os.path.join(self.dir, "a"))
        os.mkdir(os.path.join(self.dir, "b"))
        locked = gptme_log(os.path.join(self.dir, "a"), ["a", "b"])
        open(foreign_lock.foreign_lock_path(locked), "w").close()
        with open(locked, "rb") as f:
            before = f.read()
        with self.assertRaises(TurnJournalError) as refused:
            compact_event_log(locked, retention_seconds=0, now=time.time() + 1)
        self.assertEqual(refused.exception.code, "foreign_lock_unavailable")  # TJ-DUR-053
        with open(locked, "rb") as f:
            self.assertEqual(f.read(), before)
        free = gptme_log(os.path.join(self.dir, "b"), ["a", "b"])
        self.assertEqual(compact_event_log(free, retention_seconds=0, now=time.time() + 1)["removed_records"], 2)


if __name__ == "__main__":
    unittest.main()

"""The two flows the library is for, run for real with a kill -9 of a child process (fixed seed: TJ_PROPERTY_SEED,
printed on failure): seed 000's RFC (submit -> worker -> crash -> startup recovery through Python hooks) and seed
002's (recover_messages after a crash). Run from the repository root: python3 -m unittest discover -s python/tests"""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

import turnjournal  # noqa: E402
from turnjournal import EventLog, TurnJournal, TurnJournalError, recover_messages, recover_store  # noqa: E402

SEED = int(os.environ.get("TJ_PROPERTY_SEED", "20260511"))
ENV = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "src"))


def child(code, *args):
    """A Python child process running ``code`` with the library importable; its stdout is a pipe read by line."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)] + [str(a) for a in args], env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def kill(proc):
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    proc.stdout.close()
    proc.stderr.close()


class Transcript:
    """A host's JSON sidecar, as seed 000's web UI keeps one per session: the recovery hooks write into it."""

    def __init__(self, path):
        self.path = path

    def load(self):
        if not os.path.exists(self.path):
            return []
        with open(self.path) as f:
            return json.load(f)

    def save(self, messages):
        with open(self.path + ".tmp", "w") as f:
            json.dump(messages, f)
        os.replace(self.path + ".tmp", self.path)

    def ensure_user_message(self, turn, submitted):
        messages = self.load()
        if not any(m.get("turn_id") == turn.turn_id and m["role"] == "user" for m in messages):
            messages.append({"role": "user", "content": submitted["content"], "turn_id": turn.turn_id,
                             "recovered": True})
            self.save(messages)

    def ensure_interruption_marker(self, turn):
        messages = self.load()
        if not any(m.get("turn_id") == turn.turn_id and m.get("interrupted") for m in messages):
            messages.append({"role": "system", "content": "interrupted by a server restart",
                             "turn_id": turn.turn_id, "interrupted": True})
            self.save(messages)


class Seed000TurnJournal(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tj-py-flow-")
        self.root = os.path.realpath(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_submit_worker_crash_then_startup_recovery_through_python_hooks(self):
        # A finished turn first, from this process's shard; it must come through recovery untouched.
        with TurnJournal(self.root, "s1", shard="main") as journal:
            done = journal.submit("an answered question", turn_id="t-done").turn_id
            journal.worker_started(done)
            journal.complete(done, assistant_message_index=1)
        # The server process: submit (durable before it returns), start the worker, then die by kill -9.
        server = child("""
            import sys, os
            from turnjournal import TurnJournal
            journal = TurnJournal(sys.argv[1], "s1", shard=str(os.getpid()))
            turn = journal.submit("summarise the report", turn_id="t-crash", stream_id="stream-1")
            print("submitted", turn.turn_id, flush=True)
            journal.worker_started(turn.turn_id)
            print("worker_started", flush=True)
            sys.stdin.read()
        """, self.root)
        try:
            self.assertEqual(server.stdout.readline().split(), ["submitted", "t-crash"])
            self.assertEqual(server.stdout.readline().strip(), "worker_started")
        finally:
            kill(server)
        transcript = Transcript(os.path.join(self.root, "s1.json"))
        # The plan names the crashed turn only, and changes nothing.
        plan = turnjournal.plan_recovery(self.root)
        self.assertEqual([(p.turn_id, p.state) for p in plan.plan], [("t-crash", "worker_started")])
        self.assertEqual(transcript.load(), [])
        recovery = recover_store(self.root, transcript)
        self.assertTrue(recovery.complete)
        self.assertEqual(recovery.turns, [{"session_id": "s1", "turn_id": "t-crash", "outcome": "recovered",
                                           "performed": ["ensure_user_message", "ensure_interruption_marker",
                                                         "append_interrupted"]}])
        self.assertEqual([(m["role"], m["turn_id"]) for m in transcript.load()],
                         [("user", "t-crash"), ("system", "t-crash")])
        report = turnjournal.check_store([self.root])
        states = {t["turn_id"]: (t["state"], t.get("reason")) for t in report["sessions"][0]["turns"]}
        self.assertEqual(states, {"t-done": ("completed", None), "t-crash": ("interrupted", "server_startup_recovery")})
        # Idempotent: run again, nothing planned, nothing written.
        again = recover_store(self.root, transcript)
        self.assertEqual((again.plan, again.turns), ([], []))
        self.assertEqual(len(transcript.load()), 2)
        # The interrupted record went to the crashed process's shard, carrying the stream id (TJ-RECOV-006).
        shard = [n for n in os.listdir(os.path.join(self.root, "_turn_journal"))
                 if n.endswith(".jsonl") and n != "s1~main.jsonl"]
        with open(os.path.join(self.root, "_turn_journal", shard[0])) as f:
            last = json.loads(f.read().splitlines()[-1])
        self.assertEqual((last["event"], last["reason"], last["stream_id"]),
                         ("interrupted", "server_startup_recovery", "stream-1"))

    def test_a_retry_is_idempotent_across_shards_and_other_content_is_refused(self):
        with TurnJournal(self.root, "s2", shard="a") as a:
            first = a.submit("hello", turn_id="t1")
            with TurnJournal(self.root, "s2", shard="b") as b:
                retry = b.submit("hello", turn_id="t1")  # the browser's retry reached another process
                with self.assertRaises(TurnJournalError) as refused:
                    b.submit("other text", turn_id="t1")
                b.worker_started("t1")
                with self.assertRaises(TurnJournalError):
                    b.worker_started("t1")  # does not raise the state (TJ-TURN-014)
        self.assertEqual((first.created, retry.created, refused.exception.code), (True, False, "refused"))
        report = turnjournal.check_store([self.root])
        self.assertEqual(report["summary"]["records"], 2)  # one submitted, one worker_started: the retry wrote none

    def test_the_cli_recovers_through_a_hooks_file(self):
        with TurnJournal(self.root, "s3") as journal:
            journal.submit("pending", turn_id="t1")
        hooks = os.path.join(self.root, "hooks.py")
        with open(hooks, "w") as f:
            f.write("import json, os\nLOG = os.path.join(os.path.dirname(__file__), 'calls.jsonl')\n"
                    "def ensure_user_message(turn, submitted):\n"
                    "    open(LOG, 'a').write(json.dumps(['user', turn.turn_id, submitted['content']]) + '\\n')\n"
                    "def ensure_interruption_marker(turn):\n"
                    "    open(LOG, 'a').write(json.dumps(['marker', turn.turn_id]) + '\\n')\n")
        proc = subprocess.run([sys.executable, "-m", "turnjournal", "recover", self.root, "--apply", "--hooks", hooks,
                               "--format", "json"], env=ENV, capture_output=True, text=True, timeout=60)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(json.loads(proc.stdout)["complete"])
        with open(os.path.join(self.root, "calls.jsonl")) as f:
            self.assertEqual([json.loads(line) for line in f], [["user", "t1", "pending"], ["marker", "t1"]])


class Seed002EventLog(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tj-py-flow-")
        self.logdir = os.path.realpath(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_no_log_is_an_empty_result(self):
        self.assertEqual(turnjournal.read_events(self.logdir), [])
        self.assertIsNone(recover_messages(self.logdir))

    def test_recover_messages_after_kill_9_holds_every_acknowledged_change(self):
        rounds = 6
        for n in range(rounds):
            seed = SEED + n
            with self.subTest(seed=seed):
                self.kill_round(seed, os.path.join(self.logdir, "round-%d" % n))

    def kill_round(self, seed, logdir):
        os.makedirs(logdir)
        rng = random.Random(seed)
        kill_after = rng.randint(1, 120)
        writer = child("""
            import itertools, json, random, sys
            from turnjournal import EventLog
            rng = random.Random(int(sys.argv[2]))
            log = EventLog(sys.argv[1], checkpoint_interval=7)
            messages = []
            for i in itertools.count():  # until the kill
                roll = rng.random()
                if roll < 0.15 and messages:
                    op = ["undo"]
                    log.undo(1)
                elif roll < 0.3 and messages:
                    op = ["edit", rng.randrange(len(messages)), {"role": "user", "content": "edit %d" % i}]
                    log.edit_message(op[1], op[2])
                else:
                    op = ["append", {"role": rng.choice(["user", "assistant"]), "content": "m%d \\u2028 %d" % (i, i)}]
                    log.append_message(op[1])
                print(json.dumps(op), flush=True)  # the acknowledgement: after the call returned
        """, logdir, seed)
        acked = []
        try:
            for _ in range(kill_after):
                line = writer.stdout.readline()
                if not line:
                    self.fail("seed %d: the writer died: %s" % (seed, writer.stderr.read()))
                acked.append(json.loads(line))
        finally:
            writer.send_signal(signal.SIGKILL)
            writer.wait(timeout=60)
        # Every acknowledgement printed before the kill counts, read or not.
        acked.extend(json.loads(line) for line in writer.stdout.read().splitlines() if line.endswith("]"))
        writer.stdout.close()
        writer.stderr.close()
        model = []
        for op in acked:
            if op[0] == "append":
                model.append(op[1])
            elif op[0] == "edit":
                model[op[1]] = op[2]
            else:
                model.pop()
        recovered = recover_messages(logdir) or []
        # Every acknowledged change survives; the one in flight when the kill came may have landed too, so the log
        # holds the acknowledged list or one change more (never less, never anything else).
        # Every acknowledged change survives; the one in flight when the kill came may have landed too, so the log
        # holds the acknowledged changes or one change more (never fewer, never anything else).
        changes = len(turnjournal.read_events(logdir)) - self.checkpoints(logdir)
        self.assertIn(changes - len(acked), (0, 1), "seed %d: %d changes on disk, %d acknowledged"
                      % (seed, changes, len(acked)))
        if changes == len(acked):
            self.assertEqual(recovered, model, "seed %d: the recovered messages are not the acknowledged ones" % seed)
        # The log reopens where it ended (lock of the dead writer taken over, torn tail cut) and goes on.
        with EventLog(logdir) as log:
            before = log.messages
            log.append_message({"role": "user", "content": "after the crash"})
        self.assertEqual(recover_messages(logdir), before + [{"role": "user", "content": "after the crash"}],
                         "seed %d" % seed)

    @staticmethod
    def checkpoints(logdir):
        return sum(1 for e in turnjournal.read_events(logdir) if e["type"] == "checkpoint")

    def test_checkpoints_bound_the_replay_and_compaction_keeps_the_messages(self):
        path = os.path.join(self.logdir, "events.jsonl")
        with EventLog(self.logdir, checkpoint_interval=10) as log:
            for i in range(35):
                log.append_message({"role": "user", "content": "m%d" % i})
            log.undo(2)
            log.edit_message(0, {"role": "user", "content": "first, edited"})
            expected = log.messages
            events = turnjournal.read_events(path)
            self.assertEqual([e["seq"] for e in events], list(range(len(events))))
            # After every 10 records, once at least as many bytes as the last checkpoint's line followed it
            # (TJ-EVENT-006): ten ~130-byte appends always outweigh a checkpoint of at most 30 short messages here.
            self.assertEqual([e["seq"] for e in events if e["type"] == "checkpoint"], [10, 21, 32])
            self.assertEqual(recover_messages(path), expected)
            result = log.compact(now=time.time() + 1, retention_seconds=0)
            self.assertGreater(result["removed_records"], 0)
            log.append_message({"role": "assistant", "content": "after compaction"})
        self.assertEqual(recover_messages(path), expected + [{"role": "assistant", "content": "after compaction"}])
        self.assertEqual(turnjournal.read_events(path)[0]["type"], "checkpoint")

    def test_a_checkpoint_over_the_line_size_limit_is_split_and_recovered_whole(self):
        # Nine messages of 2 MiB: the checkpoint's line would be 18 MiB, over the 16 MiB limit (TJ-DUR-028), so it
        # goes out as parts (TJ-EVENT-028) with consecutive seqs, in order, the run index and epoch on the last only.
        path = os.path.join(self.logdir, "events.jsonl")
        with EventLog(self.logdir) as log:
            for i in range(9):
                log.append_message({"role": "user", "content": chr(97 + i) * (2 * 1024 * 1024)})
            log.checkpoint()
            expected = log.messages
            epoch = log.epoch
        parts = [e for e in turnjournal.read_events(path) if e["type"] == "checkpoint.part"]
        self.assertGreaterEqual(len(parts), 2)
        self.assertEqual([p["payload"]["part"] for p in parts], list(range(len(parts))))
        self.assertEqual({p["payload"]["parts"] for p in parts}, {len(parts)})
        self.assertEqual([p["seq"] for p in parts], list(range(parts[0]["seq"], parts[0]["seq"] + len(parts))))
        self.assertEqual([m for p in parts for m in p["payload"]["messages"]], expected)
        self.assertTrue(all("runs" not in p["payload"] and "epoch" not in p for p in parts[:-1]))
        self.assertIn("runs", parts[-1]["payload"])
        self.assertEqual(parts[-1].get("epoch"), epoch)
        self.assertEqual(recover_messages(path), expected)


if __name__ == "__main__":
    unittest.main()

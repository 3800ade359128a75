"""``recover_event_log``: the state of an event log, and an empty state — not an error — when there is no log, as
gptme's ``read_events`` answers ``[]`` for an old conversation directory (issue 41)."""

import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))

from turnjournal import BadRequest, EventLog, RunWriter, recover_event_log  # noqa: E402

EMPTY = {"messages": [], "last_seq": None, "epoch": None, "active_request_id": None, "overlay": None,
         "undelivered": [], "findings": []}


class RecoverEventLog(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-recover-")
        self.addCleanup(tmp.cleanup)
        self.dir = os.path.realpath(tmp.name)

    def test_a_missing_log_is_an_empty_state_whether_named_by_file_or_by_directory(self):
        self.assertEqual(recover_event_log(os.path.join(self.dir, "events.jsonl")), EMPTY)
        self.assertEqual(recover_event_log(self.dir), EMPTY)  # a conversation directory without events.jsonl
        self.assertEqual(os.listdir(self.dir), [])  # and nothing was created

    def test_a_log_gives_its_messages_seq_epoch_and_active_run(self):
        with EventLog(self.dir) as log:
            log.append_message({"role": "user", "content": "hi"})
            log.append("chat.started", {"request_id": "r1"})
            log.append("chat.delta", {"request_id": "r1", "message_id": "m1", "text": "hel"})
        state = recover_event_log(self.dir)
        self.assertEqual(state["messages"], [{"role": "user", "content": "hi"}])
        self.assertEqual((state["last_seq"], state["active_request_id"]), (2, "r1"))
        self.assertEqual(state["epoch"], log.epoch)

    def test_a_file_of_another_family_is_refused(self):
        with RunWriter("run-1", "2026-02-04T00:00:00Z", file=os.path.join(self.dir, "run.jsonl")) as run:
            run.run_start("x")
        with self.assertRaises(BadRequest):
            recover_event_log(run.path)


if __name__ == "__main__":
    unittest.main()

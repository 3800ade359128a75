"""Seed 004's writers (spec §7, §8, §16): ``RunWriter`` and ``write_state``. Every file written is read back by the
library's reader and, where it matters, by the TypeScript CLI (``node packages/conformance/dist/cli/main.js check``,
built by ``npm run bootstrap``): a file the writer produced must check clean."""

import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python", "src"))
TS_CLI = os.path.join(REPO, "packages", "conformance", "dist", "cli", "main.js")

from turnjournal import (BadRequest, RunWriter, TurnJournalError, check_store, read_run, read_state,  # noqa: E402
                         run_file_path, utc_timestamp, write_state)

STARTED = "2026-02-03T23:30:00.250-05:00"  # 2026-02-04 in UTC: the file is filed under that date


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def typescript_check(root):
    if shutil.which("node") is None or not os.path.isfile(TS_CLI):
        raise AssertionError("the TypeScript CLI is needed: %s (run npm run bootstrap)" % TS_CLI)
    proc = subprocess.run(["node", TS_CLI, "check", root, "--format", "json"], capture_output=True, text=True,
                          timeout=120)
    return json.loads(proc.stdout)


class Base(unittest.TestCase):
    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="tj-py-runs-")
        self.addCleanup(tmp.cleanup)
        self.root = os.path.realpath(tmp.name)


class RunFiles(Base):
    def test_a_whole_run_is_filed_by_its_utc_date_and_checks_clean_with_both_readers(self):
        with RunWriter("run-1", STARTED, root=self.root, session_id="s-1", model={"name": "m"}) as run:
            self.assertTrue(run.header_written)
            run.run_start("list files")
            self.assertEqual(run.llm_request({"messages": [{"role": "user", "content": "list files"}]}), 1)
            self.assertEqual(run.agent_event({"type": "tool_call", "tool": "ls"}), 0)
            run.tool_output("ls", "call_1", "a\nb\n", is_error=False)
            run.llm_response(1, {"messages": [{"role": "assistant", "content": "a, b"}]})
            self.assertEqual(run.agent_event({"type": "final", "content": "a, b"}), 1)
            run.context(42.5)
            run.status("completed")
            run.append("x.acme.note", {"note": "kept"})
            run.end("completed", final="a, b")
        path = os.path.join(self.root, "sessions", "2026", "02", "04", "run-1.jsonl")
        self.assertEqual(run.path, path)
        written = records(path)
        self.assertEqual(written[0], {"type": "header", "schema_version": 1, "run_id": "run-1", "session_id": "s-1",
                                      "started_at": "2026-02-04T04:30:00.250Z", "model": {"name": "m"}})
        self.assertEqual([r["type"] for r in written[1:]],
                         ["run.start", "llm.request", "agent.event", "tool.output", "llm.response", "agent.event",
                          "run.context", "run.status", "x.acme.note", "run.end"])
        summary = read_run(path)
        self.assertEqual((summary["outcome"], summary["llm_calls"], summary["agent_events"]), ("completed", 1, 2))
        self.assertEqual([f["code"] for f in summary["findings"]], [])
        report = typescript_check(self.root)
        self.assertEqual([f["code"] for f in report["findings"] if f["code"] != "unknown_record"], [],
                         json.dumps(report["findings"]))

    def test_a_reopened_run_gets_no_second_header_and_continues_its_numbering(self):
        with RunWriter("run-2", STARTED, root=self.root, first_llm_seq=7) as run:
            run.agent_event({"type": "a"})
            self.assertEqual(run.llm_request({"messages": []}), 7)
        with RunWriter("run-2", STARTED, root=self.root) as again:  # a restarted process
            self.assertEqual((again.header_written, again.resumed), (False, True))
            self.assertEqual(again.agent_event({"type": "b"}), 1)
            self.assertEqual(again.open_llm_requests, [7])
            again.llm_response(7, {"messages": []})
            with self.assertRaises(TurnJournalError):
                again.llm_response(7, {"messages": []})  # already answered (unpaired_llm_response, TJ-RUNSEM-005)
            self.assertEqual(again.llm_request({"messages": []}), 8)
        types = [r["type"] for r in records(again.path)]
        self.assertEqual(types.count("header"), 1)  # TJ-RUN-004
        self.assertEqual(types[0], "header")  # TJ-RUN-003

    def test_what_a_reader_would_report_is_refused_and_writes_nothing(self):
        with RunWriter("run-3", STARTED, root=self.root) as run:
            run.agent_event({"type": "a"}, seq=4)
            size = os.path.getsize(run.path)
            refusals = [
                lambda: run.agent_event({"type": "b"}, seq=4),  # agent_event_seq_regression (TJ-RUNSEM-007)
                lambda: run.llm_response(99, {"messages": []}),  # unpaired_llm_response (TJ-RUNSEM-005)
            ]
            seq = run.llm_request({"messages": []})
            size = os.path.getsize(run.path)
            refusals.append(lambda: run.llm_request({"messages": []}, seq=seq))  # seq_duplicate (TJ-RUNSEM-006)
            for refused in refusals:
                with self.assertRaises(TurnJournalError) as caught:
                    refused()
                self.assertEqual(caught.exception.code, "refused")
            for bad in (lambda: run.append("agent.event", {}), lambda: run.append("x.a.b", {"ts": "now"}),
                        lambda: run.run_start({"no": "type"}), lambda: run.context(float("nan"))):
                with self.assertRaises(TurnJournalError):
                    bad()
            self.assertEqual(os.path.getsize(run.path), size)
            run.end("cancelled")
            with self.assertRaises(TurnJournalError) as caught:
                run.status("running")
            self.assertEqual(caught.exception.code, "run_ended")  # TJ-RUNSEM-002
        self.assertEqual(records(run.path)[-1]["type"], "run.end")

    def test_a_file_of_another_run_is_refused_untouched(self):
        path = run_file_path(self.root, "run-4", STARTED)
        RunWriter("run-4", STARTED, file=path).close()
        with open(path, "rb") as f:
            before = f.read()
        with self.assertRaises(BadRequest):
            RunWriter("run-5", STARTED, file=path)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), before)


class CallerTimes(Base):
    """A run writer accepts the time the host observed an event as its ts (spec TJ-RUN-020), written in UTC."""

    def test_a_supplied_ts_is_written_in_utc_with_its_fraction_and_out_of_order_times_read_clean(self):
        observed = datetime.datetime(2026, 2, 4, 4, 31, 0, 123000, tzinfo=datetime.timezone.utc)
        with RunWriter("run-6", STARTED, root=self.root) as run:
            run.run_start("hi", ts="2026-02-04T05:31:00.123456+01:00")
            run.agent_event({"type": "x"}, ts=observed)
            run.status("running", ts="2026-02-04T04:30:59Z")  # observed before the previous record
            run.end("completed")
        stamps = [r.get("ts") for r in records(run.path)]
        self.assertEqual(stamps[1:4], ["2026-02-04T04:31:00.123456Z", "2026-02-04T04:31:00.123Z",
                                       "2026-02-04T04:30:59Z"])
        self.assertRegex(stamps[4], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")  # the time of writing
        self.assertEqual(read_run(run.path)["findings"], [])
        self.assertEqual([f["code"] for f in typescript_check(self.root)["findings"]], [])

    def test_a_supplied_ts_that_names_no_instant_is_refused(self):
        with RunWriter("run-7", STARTED, root=self.root) as run:
            size = os.path.getsize(run.path)
            for bad in ("yesterday", "2026-02-30T00:00:00Z", "2026-02-04T04:30:00", "",
                        datetime.datetime(2026, 2, 4, 4, 30)):  # naive: which zone?
                with self.assertRaises(BadRequest, msg=repr(bad)):
                    run.status("running", ts=bad)
            self.assertEqual(os.path.getsize(run.path), size)

    def test_utc_timestamp_keeps_a_leap_second_and_crosses_the_date_line(self):
        self.assertEqual(utc_timestamp("2016-12-31T23:59:60.5Z"), "2016-12-31T23:59:60.5Z")
        self.assertEqual(utc_timestamp("2026-01-01T00:30:00+01:00"), "2025-12-31T23:30:00Z")


class StateDocuments(Base):
    def test_a_snapshot_is_written_with_its_defaults_read_back_and_replaced_whole(self):
        first = write_state({"messages": [{"role": "user", "content": "a"}], "run_id": "run-1", "invoke_seq": 1},
                            root=self.root, session_id="s-1", updated_at="2026-02-04T04:31:00Z")
        self.assertEqual(first.path, os.path.join(self.root, "sessions", "state", "s-1.json"))
        self.assertEqual(read_state(first.path), {"messages": [{"role": "user", "content": "a"}], "run_id": "run-1",
                                                  "invoke_seq": 1, "schema_version": 1, "session_id": "s-1",
                                                  "updated_at": "2026-02-04T04:31:00Z"})
        write_state({"messages": []}, root=self.root, session_id="s-1")
        self.assertEqual(read_state(first.path)["messages"], [])
        self.assertEqual(sorted(os.listdir(os.path.dirname(first.path))), ["s-1.json"])  # no temporary, no lock left
        self.assertEqual(check_store([self.root])["findings"], [])

    def test_an_invalid_snapshot_is_refused_and_the_old_one_stays(self):
        kept = write_state({"messages": []}, root=self.root, session_id="s-2")
        for bad in ({"messages": [{"content": "no role"}]}, {"messages": []}, {"nothing": True},
                    {"messages": [], "session_id": "other"}, {"messages": [], "schema_version": 2}):
            with self.assertRaises(BadRequest, msg=repr(bad)):
                if bad == {"messages": []}:
                    write_state(bad, root=self.root)  # no session id
                else:
                    write_state(bad, root=self.root, session_id="s-2")
        self.assertEqual(read_state(kept.path), kept.state)

    def test_a_snapshot_another_live_writer_holds_is_refused(self):
        from turnjournal._internals.writer import acquire_lock, release_lock
        path = os.path.join(self.root, "sessions", "state", "s-3.json")
        write_state({"messages": [], "session_id": "s-3"}, file=path)
        token = acquire_lock(path)  # as a TypeScript writeStateDocument of this process would hold it
        try:
            with self.assertRaises(TurnJournalError) as caught:
                write_state({"messages": [{"role": "user", "content": "lost?"}], "session_id": "s-3"}, file=path)
            self.assertEqual(caught.exception.code, "journal_locked")
        finally:
            release_lock(path, token)
        self.assertEqual(read_state(path)["messages"], [])


if __name__ == "__main__":
    unittest.main()

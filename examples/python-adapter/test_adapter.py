"""Self-test: runs the store fixtures (fixtures/v1/store/*.json) through adapter.read_store and
compares with each case's `expect` the way the conformance runner does (findings as a multiset of
{code, file?, line?, turn_id?}, except codes in `ignore`; turns, runs and event_logs exactly).

Run from this directory: python3 -m unittest        (TJ_FIXTURES=<dir> to point elsewhere)
Set TJ_VERBOSE=1 to print every failing case.
"""

import json
import os
import subprocess
import sys
import tempfile
import unittest

import adapter

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.environ.get("TJ_FIXTURES") or os.path.join(HERE, "..", "..", "fixtures", "v1", "store")


def write_store(root, case):
    for item in case["files"]:
        path = os.path.realpath(os.path.join(root, item["path"]))
        if not path.startswith(root + os.sep):
            raise ValueError("fixture path leaves the store: %r" % item["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        data = item["text"].encode("utf-8", "surrogatepass") if "text" in item else bytes.fromhex(item["hex"])
        with open(path, "wb") as f:
            f.write(data)


def relative(root, path):
    return None if path is None else os.path.relpath(path, root).replace(os.sep, "/")


def observe(root, case):
    # A case may lower the line-size limit (`max_line_bytes`), as `read` does for the conformance runner.
    adapter.READ_LIMIT[0] = case.get("max_line_bytes", adapter.LINE_LIMIT)
    try:
        result = adapter.read_store([root], case.get("mode", "tolerant"), case.get("audit") is True)
    finally:
        adapter.READ_LIMIT[0] = adapter.LINE_LIMIT
    return {
        "turns": result["turns"],
        "findings": [
            {"code": f["code"], "file": relative(root, f.get("file")), "line": f.get("line"),
             "turn_id": f.get("turn_id")}
            for f in result["findings"]
        ],
        "runs": {relative(root, k): v for k, v in result["runs"].items()},
        "event_logs": {relative(root, k): without_epoch(v, case["expect"].get("event_logs", {}).get(relative(root, k)))
                       for k, v in result["event_logs"].items()},
        "plan": result.get("plan", []),
        "replay": [dict({k: q[k] for k in ("file", "after", "epoch") if k in q},
                        **adapter.replay(os.path.join(root, q["file"]), q["after"], q.get("epoch", adapter.NO_EPOCH)))
                   for q in case["expect"].get("replay", [])],
    }


def without_epoch(state, expected):
    """A log's state without its epoch when the case does not state one (cases older than epochs, spec §6.7)."""
    if isinstance(expected, dict) and "epoch" in expected:
        return state
    return {k: v for k, v in state.items() if k != "epoch"}


def canon(value):
    return json.dumps(value, sort_keys=True)


def compare(case, observed):
    expect = case["expect"]
    failures = []
    for member in ("turns", "runs", "event_logs"):
        if member in expect and canon(observed[member]) != canon(expect[member]):
            failures.append("%s: expected %s, got %s" % (member, canon(expect[member]), canon(observed[member])))
    for member in ("plan", "replay"):  # in order
        if member in expect and canon(observed[member]) != canon(expect[member]):
            failures.append("%s: expected %s, got %s" % (member, canon(expect[member]), canon(observed[member])))
    if "findings" in expect:
        ignore = set(expect.get("ignore", []))
        # Writer-violation findings are judged only where a case expects one (fixtures/README.md): older gold cases
        # hold CR LF, a BOM or a raw U+2028 on purpose and predate these findings.
        if not any(f["code"].startswith("writer_violation_") for f in expect["findings"]):
            ignore |= {"writer_violation_crlf", "writer_violation_bom", "writer_violation_unescaped_separator"}
        unmatched = [f for f in observed["findings"] if f["code"] not in ignore]
        missing = []
        for wanted in expect["findings"]:
            for i, f in enumerate(unmatched):
                if all(wanted.get(k) is None or wanted[k] == f[k] for k in ("file", "line", "turn_id")) \
                        and wanted["code"] == f["code"]:
                    del unmatched[i]
                    break
            else:
                missing.append(wanted)
        if missing:
            failures.append("findings: missing %s" % json.dumps(missing))
        if unmatched:
            failures.append("findings: unexpected %s" % json.dumps(unmatched))
    return failures


def superseded_cases():
    """The store cases fixtures/superseded.json lists (a later spec change outvoted them): every runner skips them."""
    path = os.path.join(FIXTURES, "..", "..", "superseded.json")
    if not os.path.exists(path):
        return set()
    with open(path, "rb") as f:
        listed = json.loads(f.read().decode("utf-8"))["cases"]
    return {(c["file"].rsplit("/", 1)[-1], c["case"]) for c in listed if c["file"].startswith("v1/store/")}


def run_all():
    """Returns {fixture file: (passed, failed, [(description, failures)])}."""
    results = {}
    skipped = superseded_cases()
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(FIXTURES, name), "rb") as f:
            fixture = json.loads(f.read().decode("utf-8"))
        passed, failed = 0, []
        for case in fixture["cases"]:
            if (name, case["description"]) in skipped:
                continue
            with tempfile.TemporaryDirectory(prefix="tj-py-") as tmp:
                root = os.path.realpath(tmp)
                write_store(root, case)
                failures = compare(case, observe(root, case))
            if failures:
                failed.append((case["description"], failures))
            else:
                passed += 1
        results[name] = (passed, failed)
    return results


class StoreFixtures(unittest.TestCase):
    def test_store_fixtures(self):
        results = run_all()
        total_failed = 0
        for name, (passed, failed) in results.items():
            sys.stderr.write("\n%-16s %3d passed %3d failed" % (name, passed, len(failed)))
            total_failed += len(failed)
            if os.environ.get("TJ_VERBOSE"):
                for description, failures in failed:
                    sys.stderr.write("\n  FAIL %s\n    %s" % (description, "\n    ".join(failures)))
        sys.stderr.write("\n")
        self.assertEqual(total_failed, 0, "store fixture cases failed; rerun with TJ_VERBOSE=1")


class Adapter:
    """One adapter process driven request by request, as the conformance runner drives it."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "adapter.py")], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.next_id = 1

    def send(self, op, **params):
        request = dict(id=self.next_id, op=op, **params)
        self.next_id += 1
        self.proc.stdin.write((json.dumps(request) + "\n").encode())
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError("adapter exited: " + self.proc.stderr.read().decode())
        response = json.loads(line)
        assert response["id"] == request["id"], response
        return response

    def finish(self):
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code


TURN = {"version": 1, "event": "submitted", "turn_id": "t1", "session_id": "s1", "created_at": 1,
        "role": "user", "content": "hi\u2028there"}


class Protocol(unittest.TestCase):
    """The adapter answers over stdin/stdout: start, an unknown op (error, no exit), read, stop (TJ-CONF-012/015)."""

    def test_session(self):
        with tempfile.TemporaryDirectory(prefix="tj-py-") as tmp:
            root = os.path.realpath(tmp)
            os.makedirs(os.path.join(root, "_turn_journal"))
            with open(os.path.join(root, "_turn_journal", "s1.jsonl"), "wb") as f:
                f.write(b'{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1,'
                        b'"role":"user","content":"hi"}\n{"vers')
            requests = [
                {"id": 1, "op": "start", "protocol": 1},
                {"id": 2, "op": "frobnicate"},
                {"id": 3, "op": "read", "paths": [root]},
                {"id": 4, "op": "read", "paths": ["relative/path"]},
                {"id": 5, "op": "stop"},
            ]
            proc = subprocess.run(
                [sys.executable, os.path.join(HERE, "adapter.py")],
                input=("not json\n" + "".join(json.dumps(r) + "\n" for r in requests)).encode(),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
            )
        self.assertEqual(proc.returncode, 0, proc.stderr.decode())
        responses = [json.loads(line) for line in proc.stdout.decode().splitlines()]
        self.assertEqual([r["id"] for r in responses], [1, 2, 3, 4, 5])
        self.assertEqual(responses[0]["result"]["levels"], ["reader", "writer"])
        self.assertEqual(responses[1]["error"]["code"], "unsupported")
        read = responses[2]["result"]
        self.assertEqual(read["turns"], {"s1": {"t1": "submitted"}})
        self.assertEqual([f["code"] for f in read["findings"]], ["torn_tail"])
        self.assertEqual(responses[3]["error"]["code"], "bad_request")
        self.assertEqual(responses[4], {"id": 5, "ok": True, "result": {}})
        self.assertIn(b"not JSON", proc.stderr)


    def test_representatives_only_when_asked(self):
        """Feature representatives (TJ-CONF-050): of two distinct submitted records in two shards, the smallest bytes
        represent the turn (TJ-DERIVE-013), though the shard read first holds the other."""
        with tempfile.TemporaryDirectory(prefix="tj-py-") as tmp:
            root = os.path.realpath(tmp)
            os.makedirs(os.path.join(root, "_turn_journal"))
            line = '{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1,"content":"%s"}\n'
            for name, content in (("s1.jsonl", "b"), ("s1~w1.jsonl", "a")):
                with open(os.path.join(root, "_turn_journal", name), "w") as f:
                    f.write(line % content)
            adapter = Adapter()
            try:
                self.assertIn("representatives", adapter.send("start", protocol=1)["result"]["features"])
                self.assertNotIn("representatives", adapter.send("read", paths=[root])["result"])
                asked = adapter.send("read", paths=[root], representatives=True)["result"]
                self.assertEqual(asked["representatives"], {"s1": {"t1": {"submitted": json.loads(line % "a")}}})
                adapter.send("stop")
            finally:
                self.assertEqual(adapter.finish(), 0)


LIBRARY = os.path.normpath(os.path.join(HERE, "..", "..", "python", "src"))


class Standalone(unittest.TestCase):
    """A copy of adapter.py taken out of the repository uses the installed library, or says what is missing."""

    def copy(self, directory):
        with open(os.path.join(HERE, "adapter.py"), "rb") as src, open(os.path.join(directory, "adapter.py"), "wb") as dst:
            dst.write(src.read())
        return os.path.join(directory, "adapter.py")

    def run_copy(self, argv, env):
        return subprocess.run([sys.executable] + argv, input=b'{"id":1,"op":"stop"}\n', stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=60, env=env)

    def test_says_the_library_is_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TJ_SCHEMA")}
            # -S: no site-packages, so an installed copy of the library cannot be found either.
            proc = self.run_copy(["-S", self.copy(tmp)], env)
            self.assertEqual((proc.returncode, proc.stdout), (2, b""))
            self.assertIn(b"turnjournal Python library is not installed", proc.stderr)
            self.assertIn(b"pip install", proc.stderr)

    def test_installed_library_bundled_or_explicit_schema(self):
        schema_path = os.path.join(HERE, "..", "..", "spec", "v1", "schema.json")
        with tempfile.TemporaryDirectory() as tmp:
            adapter_copy = self.copy(tmp)
            env = {k: v for k, v in os.environ.items() if k != "TJ_SCHEMA"}
            env["PYTHONPATH"] = LIBRARY
            stopped = (0, b'{"id":1,"ok":true,"result":{}}\n')
            proc = self.run_copy([adapter_copy], env)
            self.assertEqual((proc.returncode, proc.stdout), stopped)
            proc = self.run_copy([adapter_copy, "--schema", schema_path], env)
            self.assertEqual((proc.returncode, proc.stdout), stopped)
            missing = os.path.join(tmp, "nowhere", "schema.json")
            proc = self.run_copy([adapter_copy], dict(env, TJ_SCHEMA=missing))
            self.assertEqual((proc.returncode, proc.stdout), (2, b""))
            self.assertIn(("schema.json %s (from TJ_SCHEMA)" % missing).encode(), proc.stderr)


class SplitCheckpoints(unittest.TestCase):
    def test_compaction_cuts_at_the_first_part_of_a_complete_split_checkpoint(self):
        # TJ-RET-021: the parts are kept from the first one; an incomplete set after them is no cut.
        def line(seq, type_, payload):
            return json.dumps({"seq": seq, "ts": "2001-01-01T00:00:00Z", "type": type_, "payload": payload}).encode()

        a, b = {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}
        lines = [line(0, "message_append", {"message": a}), line(1, "checkpoint", {"messages": [a]}),
                 line(2, "message_append", {"message": b}),
                 line(3, "checkpoint.part", {"part": 0, "parts": 2, "messages": [a]}),
                 line(4, "checkpoint.part", {"part": 1, "parts": 2, "messages": [b], "runs": []}),
                 line(5, "message_append", {"message": a}),
                 line(6, "checkpoint.part", {"part": 0, "parts": 2, "messages": [a, b, a]}),
                 line(7, "message_append", {"message": b})]
        path = os.path.join(tempfile.mkdtemp(), "events.jsonl")
        with open(path, "wb") as f:
            f.write(b"\n".join(lines) + b"\n")
        result = adapter.compact_event_log(path, 2_000_000_000_000, 0, 0)
        self.assertEqual(result["removed_records"], 3)
        with open(path, "rb") as f:
            self.assertEqual(f.read(), b"\n".join(lines[3:]) + b"\n")


class SplitCheckpointFold(unittest.TestCase):
    def fold(self, records):
        from turnjournal._internals.event_fold import fold_event_log
        from turnjournal._internals.journal_file import read_journal_file
        path = os.path.join(tempfile.mkdtemp(), "events.jsonl")
        with open(path, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in records))
        findings = adapter.Findings()
        state = fold_event_log(read_journal_file(path, "tolerant", findings), findings)
        return state, [f["code"] for f in findings.items]

    def test_a_complete_set_is_one_checkpoint_at_its_last_part_and_an_incomplete_one_changes_nothing(self):
        # TJ-REPLAY-019, TJ-REPLAY-020; spec §6.7: a complete set without an epoch clears the log's, as a checkpoint does.
        a, b, c = ({"role": "user", "content": x} for x in "abc")
        epoch = "c0ffee00-0000-4000-8000-00000000000a"

        def rec(seq, type_, payload, **envelope):
            return dict({"seq": seq, "ts": "2001-01-01T00:00:00Z", "type": type_, "payload": payload}, **envelope)

        def part(seq, index, messages, **envelope):
            return rec(seq, "checkpoint.part", {"part": index, "parts": 2, "messages": messages}, **envelope)

        first = rec(0, "message_append", {"message": a}, epoch=epoch)
        state, codes = self.fold([first, part(1, 0, [b]), part(2, 1, [c], epoch=epoch)])
        self.assertEqual((state["messages"], state["epoch"], codes), ([b, c], epoch, []))
        state, codes = self.fold([first, part(1, 0, [b]), part(2, 1, [c])])
        self.assertEqual((state["messages"], state["epoch"], codes), ([b, c], None, []))
        state, codes = self.fold([first, part(1, 0, [b]), rec(2, "message_append", {"message": c})])
        self.assertEqual((state["messages"], state["epoch"], codes), ([a, c], epoch, ["incomplete_checkpoint"]))
        state, codes = self.fold([first, part(1, 1, [c], epoch=epoch)])
        self.assertEqual((state["messages"], codes), ([a], ["incomplete_checkpoint"]))


class Retention(unittest.TestCase):
    def test_lines_split_at_lf_only_and_a_sweep_prunes_an_old_turn(self):
        # The sweep drops lines by the reader's line numbers, which count LFs only: bytes.splitlines would also split
        # at a bare CR inside a damaged line and shift every later number, dropping the wrong lines.
        root = tempfile.mkdtemp()
        directory = os.path.join(root, "_turn_journal")
        os.makedirs(directory)
        old = 1_000_000
        lines = [
            b'{"version":1,"event":"submitted","turn_id":"t1","session_id":"s","created_at":%d,"role":"user","content":"a"}\n' % old,
            b'{"version":1,"event":"completed","turn_id":"t1","session_id":"s","created_at":%d}\n' % old,
        ]
        path = os.path.join(directory, "s.jsonl")
        with open(path, "wb") as f:
            f.write(b"".join(lines))
        self.assertEqual(adapter._lines(b"a\rb\nc\n" + b"torn"), [b"a\rb\n", b"c\n", b"torn"])
        # An append into pre-allocated space keeps the size but moves the data end, so the sweep's check that the
        # file did not change since its audit sees it (TJ-RET-015, TJ-FRAME-037).
        spaced = os.path.join(directory, "spaced.bin")
        with open(spaced, "wb") as f:
            f.write(b"a\n" + b"\x00" * 100)
        before = adapter._identity(spaced)
        self.assertEqual(adapter.data_end(spaced), 2)
        with open(spaced, "r+b") as f:
            f.seek(2)
            f.write(b"b\n")
        self.assertEqual(os.path.getsize(spaced), 102)
        self.assertNotEqual(adapter._identity(spaced), before)
        os.unlink(spaced)
        # Pre-allocated space is no line (TJ-FRAME-036), and not part of a torn tail before it.
        self.assertEqual(adapter._lines(b"a\n" + b"\x00" * 9), [b"a\n"])
        self.assertEqual(adapter._lines(b"a\ntorn" + b"\x00" * 9), [b"a\n", b"torn"])
        swept = adapter.sweep_store(root, (old + 100) * 1000, 10)
        self.assertEqual(swept, [{"session_id": "s", "pruned": ["t1"]}])
        with open(path, "rb") as f:
            rewritten = f.read().split(b"\n")
        self.assertEqual(len(rewritten), 2)  # the compacted record and the empty rest after its LF
        self.assertEqual(json.loads(rewritten[0])["removed_turn_ids"], ["t1"])
        self.assertFalse(os.path.exists(os.path.join(directory, ".turnjournal-sweep.lock")))


class Writer(unittest.TestCase):
    """open/append/close: lock (TJ-DUR-017/018/026), torn-tail repair (TJ-DUR-005), refusals (TJ-COMPAT-018)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="tj-py-")
        self.root = os.path.realpath(self.tmp.name)
        self.file = os.path.join(self.root, "_turn_journal", "s1.jsonl")

    def tearDown(self):
        self.tmp.cleanup()

    def test_append_lock_and_release(self):
        a, b = Adapter(), Adapter()
        try:
            handle = a.send("open", file=self.file, durability="every")["result"]["handle"]
            self.assertTrue(os.path.exists(self.file + ".lock"))
            locked = b.send("open", file=self.file, durability="every")
            self.assertEqual(locked["error"]["code"], "journal_locked")
            self.assertEqual(a.send("append", handle=handle, record=TURN)["result"], {})
            invalid = a.send("append", handle=handle, record=dict(TURN, created_at="yesterday"))
            self.assertEqual(invalid["error"]["code"], "bad_request")
            self.assertTrue(a.send("close", handle=handle)["ok"])
            self.assertFalse(os.path.exists(self.file + ".lock"))
        finally:
            self.assertEqual(a.finish(), 0)
            self.assertEqual(b.finish(), 0)
        with open(self.file, "rb") as f:
            data = f.read()
        self.assertEqual(data.count(b"\n"), 1)
        self.assertIn(b"\\u2028", data)  # TJ-FRAME-007
        self.assertEqual(json.loads(data), TURN)

    def test_torn_tail_is_repaired_before_the_first_append(self):
        os.makedirs(os.path.dirname(self.file))
        first = json.dumps(TURN, separators=(",", ":")).encode() + b"\n"
        with open(self.file, "wb") as f:
            f.write(first + b'{"version":1,"ev')
        a = Adapter()
        try:
            handle = a.send("open", file=self.file, durability="every")["result"]["handle"]
            record = {"version": 1, "event": "completed", "turn_id": "t1", "created_at": 2}
            self.assertTrue(a.send("append", handle=handle, record=record)["ok"])
            a.send("stop")
        finally:
            a.finish()
        with open(self.file, "rb") as f:
            self.assertEqual(f.read(), first + json.dumps(record, separators=(",", ":")).encode() + b"\n")
        with open("%s.%d.torn" % (self.file, len(first)), "rb") as f:
            self.assertEqual(f.read(), b'{"version":1,"ev')
        result = adapter.read_store([self.root])
        self.assertEqual(result["turns"], {"s1": {"t1": "completed"}})
        self.assertEqual(result["findings"], [])

    def test_open_removes_pre_allocated_space_and_quarantines_only_the_torn_bytes(self):
        """TJ-DUR-005 as amended, TJ-DUR-033: the NUL bytes that end a file are space, not torn bytes; the first
        append lands right after the last line, never after the space (which would make a zero-filled line)."""
        os.makedirs(os.path.dirname(self.file))
        first = json.dumps(TURN, separators=(",", ":")).encode() + b"\n"
        record = {"version": 1, "event": "completed", "turn_id": "t1", "created_at": 2}
        appended = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        for tail, torn in ((b"", None), (b'{"version":1,"ev', b'{"version":1,"ev'),
                           (b"\x00\x00x", b"\x00\x00x")):
            for space in (1, 3 * adapter.CHUNK // 2):
                with self.subTest(tail=tail, space=space):
                    quarantine = "%s.%d.torn" % (self.file, len(first))
                    if os.path.exists(quarantine):
                        os.unlink(quarantine)
                    with open(self.file, "wb") as f:
                        f.write(first + tail + b"\x00" * space)
                    writer = adapter.AppendFile(self.file, "every")
                    try:
                        writer.append(record)
                    finally:
                        writer.close()
                    with open(self.file, "rb") as f:
                        self.assertEqual(f.read(), first + appended)
                    if torn is None:
                        self.assertFalse(os.path.exists(quarantine))
                    else:
                        with open(quarantine, "rb") as f:
                            self.assertEqual(f.read(), torn)

    def test_a_dead_holders_lock_is_taken_over(self):
        os.makedirs(os.path.dirname(self.file))
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        with open(self.file + ".lock", "w") as f:
            json.dump({"pid": dead.pid, "host": adapter.socket.gethostname(), "token": "old"}, f)
        a = Adapter()
        try:
            response = a.send("open", file=self.file, durability="none")
            self.assertTrue(response["ok"], response)
            with open(self.file + ".lock") as f:
                self.assertNotEqual(json.load(f)["token"], "old")
        finally:
            a.finish()
        self.assertFalse(os.path.exists(self.file + ".lock"))

    def test_acknowledged_records_survive_a_kill(self):
        """TJ-CONF-009 in small: appends are pipelined and the adapter is killed after k acknowledgements; the file
        must hold the acknowledged records, then a gap-free prefix of the rest, at most a torn tail, no copies."""
        import random
        rng = random.Random(int(os.environ.get("TJ_PROPERTY_SEED", "20260511")))
        for round_ in range(5):
            file = os.path.join(self.root, "r%d" % round_, "events.jsonl")
            a = Adapter()
            handle = a.send("open", file=file, durability="every")["result"]["handle"]
            records = [{"seq": seq, "ts": "2026-01-01T00:00:00Z", "type": "message_append",
                        "payload": {"message": {"role": "user", "content": "m%d" % seq * 50}}} for seq in range(200)]
            for i, record in enumerate(records):
                a.proc.stdin.write((json.dumps({"id": 100 + i, "op": "append", "handle": handle,
                                                "record": record}) + "\n").encode())
            a.proc.stdin.flush()
            k = rng.randint(0, 150)
            acked = 0
            for _ in range(k):
                response = json.loads(a.proc.stdout.readline())
                self.assertTrue(response["ok"], response)
                acked += 1
            a.proc.kill()
            a.proc.wait()
            for stream in (a.proc.stdin, a.proc.stdout, a.proc.stderr):
                stream.close()
            with open(file, "rb") as f:
                lines = f.read().split(b"\n")
            survived = [json.loads(line) for line in lines[:-1]]  # lines[-1]: empty or a torn tail
            msg = "seed %s round %d k=%d" % (os.environ.get("TJ_PROPERTY_SEED", "20260511"), round_, k)
            self.assertGreaterEqual(len(survived), acked, msg)
            self.assertEqual(survived, records[: len(survived)], msg)


if __name__ == "__main__":
    unittest.main()

"""The Python library's speed on one event log against the TypeScript library's and against gptme's own reader style
(issue 41). Not a test, nothing asserted on time: it prints a table. From the repository root, after
``npm run bootstrap`` (the TypeScript side runs from the built dist):

    nice python3 python/bench/speed.py [--mb 20] [--runs 3]

It writes a log of ``--mb`` MB of ``message_append`` records in a temporary directory (what a long gptme conversation
holds), then runs each subject ``--runs`` times in a child process of its own and reports the best time and the peak
resident memory of that child:

- ``recover_messages`` (this library: framing, validation, the fold of spec §15.1);
- gptme's reader style: ``json.loads`` of every line and a list of the messages (no framing, validation or fold);
- ``recoverEventLog`` (@turnjournal/reader);
- ``python -m turnjournal check`` and the TypeScript CLI's ``check`` (whole processes, start-up included).

Every subject must find the same number of messages; a subject that does not is reported, not timed."""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
PY_SRC = os.path.join(REPO, "python", "src")
READER_DIST = os.path.join(REPO, "packages", "reader", "dist", "index.js")
TS_CLI = os.path.join(REPO, "packages", "conformance", "dist", "cli", "main.js")
ENV = dict(os.environ, PYTHONPATH=PY_SRC)

# Each library subject prints "<seconds> <messages>": the time of the call alone, inside its process.
PY_LIBRARY = """
import sys, time
from turnjournal import recover_messages
t = time.perf_counter(); messages = recover_messages(sys.argv[1]); t = time.perf_counter() - t
print(t, len(messages))
"""
GPTME_STYLE = """
import json, sys, time
t = time.perf_counter()
with open(sys.argv[1]) as f:
    events = [json.loads(line) for line in f]
messages = [e["payload"]["message"] for e in events if e["type"] == "message_append"]
t = time.perf_counter() - t
print(t, len(messages))
"""
TS_LIBRARY = """
const { recoverEventLog } = await import(process.argv[1]);
const t = performance.now(); const r = await recoverEventLog(process.argv[2]); const s = (performance.now() - t) / 1000;
console.log(s, r.messages.length);
"""


def write_log(path, megabytes):
    """message_append records of about 230 bytes, seq from 1, until the file holds ``megabytes`` MB."""
    target = megabytes * 1_000_000
    written = seq = 0
    with open(path, "w") as f:
        while written < target:
            seq += 1
            record = {"seq": seq, "ts": "2026-01-01T00:00:00.000Z", "type": "message_append",
                      "payload": {"message": {"role": "user" if seq % 2 else "assistant",
                                              "content": "message %d: %s" % (seq, "lorem ipsum " * 12)}}}
            line = json.dumps(record, separators=(",", ":")) + "\n"
            f.write(line)
            written += len(line)
    return seq


def run_child(argv):
    """Runs a child; returns its stdout and the wall seconds of the whole process."""
    started = time.perf_counter()
    proc = subprocess.Popen(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (argv[:3], proc.returncode, err.strip()[-500:]))
    return out, wall


def peak_of(argv):
    """The peak resident memory (MB) of one more run of ``argv``, from its own wait4 (RUSAGE_CHILDREN would give the
    largest of all children so far)."""
    proc = subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for needed in (READER_DIST, TS_CLI):
        if not os.path.isfile(needed) or shutil.which("node") is None:
            sys.exit("needs node and the built TypeScript packages (npm run bootstrap): %s" % needed)
    work = tempfile.mkdtemp(prefix="tj-py-speed-")
    try:
        log = os.path.join(work, "events.jsonl")
        records = write_log(log, args.mb)
        size = os.path.getsize(log) / 1_000_000
        print("event log: %.1f MB, %d message_append records; best of %d, peak RSS of the child process"
              % (size, records, args.runs))
        library = [
            ("recover_messages (Python library)", [sys.executable, "-c", PY_LIBRARY, log]),
            ("json.loads per line (gptme's read_events style)", [sys.executable, "-c", GPTME_STYLE, log]),
            ("recoverEventLog (TypeScript library)",
             ["node", "--input-type=module", "-e", TS_LIBRARY, "--", "file://" + READER_DIST, log]),
        ]
        whole = [
            ("python -m turnjournal check (whole process)",
             [sys.executable, "-m", "turnjournal", "check", log, "--format", "json"]),
            ("turnjournal check, TypeScript CLI (whole process)", ["node", TS_CLI, "check", log, "--format", "json"]),
        ]
        rows = []
        for name, argv in library:
            best = None
            for _ in range(args.runs):
                out, _ = run_child(argv)
                seconds, count = out.split()
                if int(count) != records:
                    raise RuntimeError("%s found %s messages, not %d" % (name, count, records))
                best = float(seconds) if best is None else min(best, float(seconds))
            rows.append((name, best, peak_of(argv)))
        for name, argv in whole:
            best = None
            for _ in range(args.runs):
                out, wall = run_child(argv)
                if json.loads(out)["files"][0]["records"] != records:
                    raise RuntimeError("%s read %s records, not %d" % (name, json.loads(out)["files"][0], records))
                best = wall if best is None else min(best, wall)
            rows.append((name, best, peak_of(argv)))
        width = max(len(name) for name, _, _ in rows)
        print("%s  %8s  %8s  %9s" % ("subject".ljust(width), "seconds", "MB/s", "peak MB"))
        for name, seconds, peak in rows:
            print("%s  %8.2f  %8.1f  %9.0f" % (name.ljust(width), seconds, size / seconds, peak))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()

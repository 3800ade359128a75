"""Reproduces (or shows gone) the loss of issue 41: compaction beside gptme's own writer. Each run starts
gptme_writer.py appending COUNT messages (1 ms apart) under gptme's flock while compactions with retention 0 run back
to back, then counts the messages ``recover_messages`` gets back. Not a test (the loss is a race: 1 run in 5 or so);
the measured figures are in python/README.md. From the repository root, after ``npm run bootstrap``:

    python3 python/tests/workers/gptme_compaction_race.py MODE [RUNS] [COUNT]

MODE: ``python`` (the library's compaction, gptme's flock taken), ``python-before`` (the same with the flock and the
change check of TJ-DUR-050/051 switched off, as the library was before), ``ts-cli`` (``turnjournal compact``, which
takes the flock through flock(1) since TJ-DUR-052), ``ts-cli-flock`` (the same under ``flock(1)`` on gptme's lock file, 0.3 s between runs so that gptme gets its turn)."""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "python", "src"))

import turnjournal  # noqa: E402
from turnjournal._internals import retention  # noqa: E402

WRITER = os.path.join(HERE, "gptme_writer.py")
CLI = os.path.join(REPO, "packages", "conformance", "dist", "cli", "main.js")


def main():
    mode = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    if mode == "python-before":
        replace = retention.atomic_replace
        retention.atomic_replace = lambda path, data, unchanged=None: replace(path, data)
        retention.foreign_writers_excluded = lambda path: contextlib.nullcontext()
    elif mode not in ("python", "ts-cli", "ts-cli-flock"):
        sys.exit("mode: python, python-before, ts-cli or ts-cli-flock")
    for run in range(runs):
        logdir = tempfile.mkdtemp(prefix="tj-gptme-race-")
        started = time.monotonic()
        writer = subprocess.Popen([sys.executable, WRITER, logdir, str(count), "1"], stdout=subprocess.DEVNULL)
        compactions = 0
        while writer.poll() is None:
            if not os.path.exists(os.path.join(logdir, "events.jsonl")):
                time.sleep(0.001)
                continue
            if mode.startswith("ts-cli"):
                command = ["node", CLI, "compact", logdir, "--retention", "0"]
                if mode == "ts-cli-flock":
                    command = ["flock", os.path.join(logdir, ".events.jsonl.lock")] + command
                subprocess.run(command, capture_output=True, check=False)
                if mode == "ts-cli-flock":
                    time.sleep(0.3)
            else:
                turnjournal.compact_event_log(logdir, retention_seconds=0)
            compactions += 1
        got = [m["content"] for m in turnjournal.recover_messages(logdir) or []]
        want = ["m%d" % n for n in range(count)]
        print("%s run %d: %d compactions, lost %d of %d messages, %.1f s"
              % (mode, run, compactions, len(set(want) - set(got)), count, time.monotonic() - started), flush=True)
        shutil.rmtree(logdir)


if __name__ == "__main__":
    main()

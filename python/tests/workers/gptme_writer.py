"""A writer doing what gptme's event log writer does (seed 002): for each message, take ``fcntl.flock(LOCK_EX)`` on
``<logdir>/.events.jsonl.lock``, open ``events.jsonl`` in append mode, write one line, close it and unlock; every 50
events a checkpoint of the whole message list. No fsync, no turnjournal lock: a foreign writer. Arguments: logdir,
count, and optionally a pause in milliseconds after each message (an agent's messages are spaced by model calls).
Prints "done <count>" when every message is written."""

import datetime
import fcntl
import json
import os
import sys
import time

CHECKPOINT_INTERVAL = 50


def main():
    logdir, count = sys.argv[1], int(sys.argv[2])
    pause_s = float(sys.argv[3]) / 1000 if len(sys.argv) > 3 else 0.0
    events = os.path.join(logdir, "events.jsonl")
    lock = os.path.join(logdir, ".events.jsonl.lock")
    messages = []
    seq = 0

    def append(kind, payload):
        nonlocal seq
        event = {"seq": seq, "ts": datetime.datetime.now(datetime.timezone.utc).isoformat(), "type": kind,
                 "payload": payload}
        with open(lock, "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            with open(events, "a") as f:
                f.write(json.dumps(event) + "\n")
            fcntl.flock(held, fcntl.LOCK_UN)
        seq += 1

    for n in range(count):
        message = {"role": "user", "content": "m%d" % n}
        append("message_append", {"message": message})
        messages.append(message)
        if seq % CHECKPOINT_INTERVAL == 0:
            append("checkpoint", {"messages": list(messages)})
        if pause_s:
            time.sleep(pause_s)
    print("done %d" % count, flush=True)


if __name__ == "__main__":
    main()

"""The Python library's event-log writer as a child process of the lock tests (test_lock_lease.py), speaking the
same line protocol as ts_event_writer.mjs. Argument: JSON {file, leaseMs, tag}. Commands on stdin, one JSON object a
line; answers on stdout: open -> {"opened", "pid", "tookOver"} or {"error"}; append n -> {"acked": n} once durable or
{"refused": n, "error"}; close -> {"closed": true}, then the process exits."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src"))

from turnjournal import EventLog, TurnJournalError  # noqa: E402


def main():
    config = json.loads(sys.argv[1])
    log = None

    def say(answer):
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        command = json.loads(line)
        try:
            if command["op"] == "open":
                log = EventLog(config["file"], lease_ms=config["leaseMs"])
                say({"opened": True, "pid": os.getpid(), "tookOver": log.took_over_lock})
            elif command["op"] == "append":
                log.append_message({"role": "user", "content": "%s%d" % (config["tag"], command["n"])})
                say({"acked": command["n"]})
            elif command["op"] == "close":
                log.close()
                say({"closed": True})
                return
        except TurnJournalError as error:
            say({"refused": command["n"], "error": error.code} if command["op"] == "append" else {"error": error.code})


if __name__ == "__main__":
    main()

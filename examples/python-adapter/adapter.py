#!/usr/bin/env python3
"""The turnjournal conformance kit's adapter protocol (spec §17.3, spec/v1/adapter.md) on stdin/stdout, over the
`turnjournal` Python library (python/ in this repository). The library reads and writes; this file only speaks the
protocol, so the kit's reader and writer tiers prove the library:

    turnjournal conformance --adapter "python3 examples/python-adapter/adapter.py"

The library is imported as installed (`pip install ./python`), else from the checkout around this file
(python/src). Records are validated against the schema bundled with the library, or the schema.json given with
--schema or $TJ_SCHEMA.
"""

import json
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
_CHECKOUT_LIBRARY = os.path.normpath(os.path.join(_HERE, "..", "..", "python", "src"))
try:
    import turnjournal  # noqa: F401 (installed)
except ImportError:
    if not os.path.isdir(os.path.join(_CHECKOUT_LIBRARY, "turnjournal")):
        sys.stderr.write("adapter.py: the turnjournal Python library is not installed and %s does not exist: "
                         "pip install <turnjournal checkout>/python, or set PYTHONPATH\n" % _CHECKOUT_LIBRARY)
        sys.exit(2)
    sys.path.insert(0, _CHECKOUT_LIBRARY)

from turnjournal._internals import defects  # noqa: E402
from turnjournal._internals.errors import BadRequest  # noqa: E402
from turnjournal import EventLog, TurnJournal, TurnJournalError  # noqa: E402
from turnjournal._internals.lifecycle import run_step, state_write  # noqa: E402
from turnjournal._internals.records import Findings  # noqa: E402,F401 (for tests)
from turnjournal._internals.recovery import recover_store  # noqa: E402
from turnjournal._internals.retention import _identity, _lines, compact_event_log, data_end, sweep_store  # noqa: E402,F401
from turnjournal._internals.schema import CHUNK, LINE_LIMIT, READ_LIMIT, is_integer, use_schema  # noqa: E402,F401
from turnjournal._internals.store import NO_EPOCH, read_store, replay  # noqa: E402
from turnjournal._internals.framing import _reject_constant  # noqa: E402
from turnjournal._internals.writer import AppendFile, WriterError  # noqa: E402
import socket  # noqa: E402,F401 (tests patch adapter.socket)

NAME = "turnjournal-python-example"
VERSION = "0.2.0"
PROTOCOL = 1
PROTOCOL_ERRORS = ("unsupported", "bad_request", "journal_locked", "failed", "refused")

# --- Defect switches (mutation matrix, scripts/mutation-matrix.ts) -----------------------------------------------
# TJ_MUTANT=<name> breaks exactly one requirement so that the conformance kit can show it catches the defect; unset,
# nothing changes. Every hook below is one `if MUTANT == ...` line at the place it breaks.
MUTANT = os.environ.get("TJ_MUTANT", "")
defects.MUTANT = MUTANT
MUTANTS = ("pid-only-liveness", "no-dir-fsync", "no-fdatasync", "no-poison", "sorted-members", "accept-invalid",
           "unlink-any-lock", "no-close-fsync", "role-required", "no-seq-limit", "no-duplicate-run-start",
           "follow-symlink", "no-file-type-check", "no-line-limit", "banner-on-stdout", "string-ids",
           "exit-on-unknown-op", "no-levels-claim", "no-every-claim", "group-sync-every-4th", "submitted-unsynced",
           "swallow-write-error", "truncate-last-on-close",
           "no-bom-skip", "crlf-is-damage", "blank-is-damage", "nul-not-damage", "no-salvage", "damage-raises",
           "strict-reads-on", "prefix-reads-on", "oversized-as-malformed", "utf8-replace", "dup-member-first",
           "default-prefix", "torn-as-line", "type-case-insensitive", "no-mixed-families", "no-unknown-object",
           "bad-discriminator-ignored", "no-invalid-session-id", "no-session-mismatch", "reserved-scanned",
           "no-run-id-mismatch", "no-invalid-run-id", "reject-unknown-type", "extension-reported",
           "type-before-version", "reject-unknown-members", "no-dedupe", "no-orphan-finding", "interrupted-wins",
           "removed-turns-kept", "no-event-after-terminal", "first-shard-only",
           "no-seq-gap", "duplicate-as-regression", "replay-epoch-ignored", "no-epoch-conflict", "epoch-not-cleared",
           "regressed-seq-kept", "no-abandoned-run", "acks-ignored",
           "edit-out-of-range-appends", "checkpoint-ignored", "replay-no-ahead", "replay-no-compacted",
           "replay-inclusive", "no-record-after-run-end", "no-llm-seq-duplicate", "agent-gap-reported",
           "no-agent-regression", "no-unpaired-request", "no-unpaired-response", "no-missing-header",
           "no-interrupted-finding", "plan-ignores-locks", "no-pending-finding", "no-malformed-event-finding",
           "plan-no-user-message", "state-bom-rejected", "no-stale-state",
           "lax-turn-version", "lax-turn-id", "lax-submitted", "lax-interrupted", "lax-compacted",
           "lax-event-payload", "lax-stream-request-id", "lax-run-ts", "lax-header", "lax-run-end",
           "lax-event-ts", "lax-message-edit", "lax-run-id", "lax-run-start-input", "lax-agent-event",
           "lax-llm-request", "lax-llm-response", "extension-event-counts", "terminal-member-decides",
           "no-conflicting-duplicate", "strict-failure-no-line", "audit-repairs-tail",
           "kebab-codes", "findings-without-line",
           "unsafe-integers-written", "duplicate-member", "first-line-per-read", "strict-requests",
           "reader-follows-links", "reader-opens-fifo", "plan-takes-locks",
           "run-id-before-type",
           "schema-not-checked", "lax-state", "turn-id-identifier-only", "closed-reason-enum", "strict-timestamps",
           "last-event-wins", "shard-own-session", "state-line-silent", "mixed-records-kept",
           "family-from-name", "torn-zeros-zero-filled", "torn-is-damage", "salvage-head-too", "split-u2028",
           "no-strict-mode", "llm-seq-from-zero", "pair-by-order", "outcome-normalised", "no-end-means-cancelled",
           "ack-unknown-run-reported", "malformed-state-raises", "malformed-state-silent", "stop-exit-1",
           "no-durability-claim", "latin1-lines", "crlf-lines", "pretty-responses",
           "overlay-any-message-id", "checkpoint-closes-segment", "checkpoint-merges", "torn-checkpoint-used",
           "invalid-checkpoint-resets", "recursive-canonical",
           "session-from-records", "read-omits-event-logs", "records-kept",
           "lock-written-in-place", "single-write",
           "no-truncate-after-failure", "space-as-torn-tail",
           "split-checkpoint-ignored", "incomplete-parts-used", "compact-at-last-part",
           "checkpoint-always-split", "separator-2028-only",
           "offset-index", "first-record-represents",
           "representatives-omitted", "extension-closes-segment", "below-first-silent", "limit-in-characters")
if MUTANT and MUTANT not in MUTANTS:
    sys.stderr.write("adapter.py: unknown TJ_MUTANT %r; one of %s\n" % (MUTANT, ", ".join(MUTANTS)))
    sys.exit(2)


# Lifecycle ops (adapter.md §5.4) through the library's public API: each request opens the journal or log (lock
# taken, torn tail repaired, state read back), makes one call and closes it again.


def turn_submit(root, sid, tid, content):
    with TurnJournal(_absolute(root), sid) as journal:
        return {"created": journal.submit(content, turn_id=tid).created}


def turn_event(root, sid, tid, event, reason):
    with TurnJournal(_absolute(root), sid) as journal:
        if event == "worker_started":
            journal.worker_started(tid)
        elif event == "assistant_started":
            journal.assistant_started(tid)
        elif event == "completed":
            journal.complete(tid)
        elif event == "interrupted":
            journal.interrupt(tid, reason if isinstance(reason, str) and reason else "error")
        else:
            raise BadRequest("event must be worker_started, assistant_started, completed or interrupted")
    return {}


def event_append(file, rtype, payload):
    if not isinstance(rtype, str) or not isinstance(payload, dict):
        raise BadRequest("event_append needs file (an absolute path), type and payload (an object)")
    with EventLog(_absolute(file)) as log:
        if rtype == "message_append":
            seq = log.append_message(payload.get("message"))
        elif rtype == "message_edit" and "messages" in payload:
            seq = log.replace_messages(payload["messages"])
        elif rtype == "message_edit":
            seq = log.edit_message(payload.get("index"), payload.get("message"))
        elif rtype == "undo":
            seq = log.undo(payload.get("n", 1))
        elif rtype == "checkpoint":
            seq = log.checkpoint()
        else:
            seq = log.append(rtype, payload)
    return {"seq": seq}


def _absolute(path):
    if not isinstance(path, str) or not os.path.isabs(path):
        raise BadRequest("root and file must be absolute paths")
    return path


def capabilities():
    return {
        "name": NAME,
        "version": VERSION,
        "language": "python",
        "protocol": PROTOCOL,
        **({} if MUTANT == "no-levels-claim" else {"levels": ["reader", "writer"]}),  # defect switch: TJ-CONF-001
        "families": ["turn", "event", "run", "state"],
        # group is served by one fdatasync per record: each append is acknowledged after a sync covering it.
        "durability": {"no-every-claim": ["group", "none"], "no-durability-claim": []}.get(
            MUTANT, ["every", "group", "none"]),  # defect switches: TJ-DUR-011, TJ-DUR-013
        "features": ["audit", "replay", "lifecycle", "recovery", "retention", "representatives"],
    }


WRITERS = {}
_next_handle = [1]


def close_all():
    for handle_id in list(WRITERS):
        writer = WRITERS.pop(handle_id)
        try:
            writer.close()
        except OSError as e:
            print("adapter: closing %s: %s" % (writer.file, e), file=sys.stderr)


def handle(request):
    op = request.get("op")
    if op == "open":
        file, durability = request.get("file"), request.get("durability")
        if not isinstance(file, str) or not os.path.isabs(file):
            raise BadRequest("open needs file, an absolute path")
        if durability not in ("every", "group", "none"):
            raise BadRequest("durability must be every, group or none")
        writer = AppendFile(file, durability)
        handle_id = "h%d" % _next_handle[0]
        _next_handle[0] += 1
        WRITERS[handle_id] = writer
        return {"handle": handle_id}
    if op in ("append", "close"):
        writer = WRITERS.get(request.get("handle"))
        if writer is None:
            raise BadRequest("no open handle %r" % (request.get("handle"),))
        if op == "append":
            writer.append(request.get("record"))
        else:
            del WRITERS[request.get("handle")]
            writer.close()
        return {}
    if op == "start":
        if request.get("protocol") != PROTOCOL:
            raise BadRequest("protocol %r is not supported; this adapter speaks %d"
                             % (request.get("protocol"), PROTOCOL))
        return capabilities()
    if op == "read":
        if MUTANT == "strict-requests" and set(request) - {"id", "op", "paths", "mode", "audit", "max_line_bytes"}:
            raise BadRequest("unknown members in read")  # defect switch: TJ-CONF-021
        paths = request.get("paths")
        if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and os.path.isabs(p)
                                                                for p in paths):
            raise BadRequest("read needs paths: a non-empty array of absolute paths")
        mode = request.get("mode", "prefix" if MUTANT == "default-prefix" else "tolerant")  # switch: TJ-FRAME-020
        if mode not in ("tolerant", "prefix", "strict") or (MUTANT == "no-strict-mode" and mode == "strict"):
            raise BadRequest("mode must be tolerant, prefix or strict")  # defect switch above: TJ-FRAME-019
        for p in paths:
            if not os.path.exists(p):
                raise BadRequest("no such file or directory: " + p)
        limit = request.get("max_line_bytes", LINE_LIMIT)
        if not is_integer(limit) or limit < 1:
            raise BadRequest("max_line_bytes must be an integer >= 1")
        READ_LIMIT[0] = int(limit)
        try:
            result = read_store(paths, mode, request.get("audit") is True,  # defect switch below: TJ-CONF-050
                                request.get("representatives") is True and MUTANT != "representatives-omitted")
        finally:
            READ_LIMIT[0] = LINE_LIMIT
        result["findings"] = [
            {k: v for k, v in f.items() if k in ("code", "file", "line", "turn_id")} for f in result["findings"]
        ]
        result.pop("strict_failure", None)
        if request.get("audit") is not True:
            result.pop("plan", None)
        return result
    if op == "replay":
        path, after = request.get("file"), request.get("after")
        if not isinstance(path, str) or not os.path.isabs(path) or not is_integer(after) or after < -1:
            raise BadRequest("replay needs file (an absolute path) and after (an integer >= -1)")
        if not os.path.isfile(path):
            raise BadRequest("no such file: " + path)
        try:
            return replay(path, int(after), request.get("epoch", NO_EPOCH))
        except ValueError as e:
            raise BadRequest(str(e))
    if op == "turn_submit":
        return turn_submit(request.get("root"), request.get("session_id"), request.get("turn_id"),
                           request.get("content"))
    if op == "turn_event":
        return turn_event(request.get("root"), request.get("session_id"), request.get("turn_id"),
                          request.get("event"), request.get("reason"))
    if op == "event_append":
        return event_append(request.get("file"), request.get("type"), request.get("payload"))
    if op == "run_step":
        return run_step(request)
    if op == "state_write":
        return state_write(request.get("root"), request.get("session_id"), request.get("messages"))
    if op == "recover":
        root = request.get("root")
        if not isinstance(root, str) or not os.path.isabs(root):
            raise BadRequest("recover needs root, an absolute path")
        return {"recovered": recover_store(root)}
    if op == "sweep":
        root, now, window = request.get("root"), request.get("now"), request.get("window_s")
        if not isinstance(root, str) or not os.path.isabs(root) or not is_integer(now) \
                or (window is not None and not isinstance(window, (int, float))):
            raise BadRequest("sweep needs root (an absolute path), now (epoch ms) and an optional window_s")
        return {"sessions": sweep_store(root, now, window)}
    if op == "compact":
        path, now = request.get("file"), request.get("now")
        window, delivery = request.get("window_s"), request.get("delivery_window_s")
        if not isinstance(path, str) or not os.path.isabs(path) or not is_integer(now):
            raise BadRequest("compact needs file (an absolute path) and now (epoch ms)")
        if not os.path.isfile(path):
            raise BadRequest("no such file: " + path)
        return compact_event_log(path, now, window, delivery)
    if op == "stop":
        close_all()
        return {}
    if MUTANT == "exit-on-unknown-op":
        sys.exit(3)  # defect switch: TJ-CONF-015
    raise Unsupported("op %r is not supported by this adapter" % (op,))


class Unsupported(Exception):
    pass


def serve(stdin=None, stdout=None):
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout
    # Nothing but responses may reach stdout (TJ-CONF-012): a stray print goes to stderr instead.
    sys.stdout = sys.stderr
    if MUTANT == "banner-on-stdout":
        stdout.write("turnjournal python adapter ready\n")  # defect switch: TJ-CONF-012
        stdout.flush()
    lines = iter(stdin.readline, b"")
    if MUTANT == "first-line-per-read":  # defect switch: TJ-CONF-020 (requests that came in one read are dropped)
        lines = (chunk.split(b"\n", 1)[0] + b"\n" for chunk in iter(lambda: os.read(stdin.fileno(), 65536), b""))
    for raw in lines:
        if not raw.strip():
            continue
        try:
            request = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as e:
            # No id to answer with: say so on stderr and read on.
            print("adapter: ignoring a line that is not JSON (%s): %r" % (e, raw[:200]), file=sys.stderr)
            continue
        request_id = 0
        op = None
        try:
            if not isinstance(request, dict):
                raise BadRequest("request is not a JSON object")
            if is_integer(request.get("id")):
                request_id = int(request["id"])
            else:
                raise BadRequest("request has no integer id")
            op = request.get("op")
            result = handle(request)
            response = {"id": str(request_id) if MUTANT == "string-ids" else request_id,  # switch: TJ-CONF-019
                        "ok": True, "result": result}
        except Unsupported as e:
            response = {"id": request_id, "ok": False, "error": {"code": "unsupported", "message": str(e)}}
        except BadRequest as e:
            response = {"id": request_id, "ok": False, "error": {"code": "bad_request", "message": str(e)}}
        except TurnJournalError as e:
            print("adapter: %s: %s" % (op, e), file=sys.stderr)
            # The protocol's codes (adapter.md); the library's others (journal_fenced) are failures.
            code = e.code if e.code in PROTOCOL_ERRORS else "failed"
            response = {"id": request_id, "ok": False, "error": {"code": code, "message": str(e)}}
        except Exception as e:  # never exit on a request (TJ-CONF-015)
            print("adapter: %s: %r" % (type(e).__name__, e), file=sys.stderr)
            response = {"id": request_id, "ok": False, "error": {"code": "failed", "message": repr(e)}}
        # Compact, like the records: the harness's strace check looks for `"id":<n>` in the acknowledgement.
        stdout.write(json.dumps(response, ensure_ascii=True, allow_nan=False, separators=(",", ":"),
                                indent=1 if MUTANT == "pretty-responses" else None) + "\n")  # switch: TJ-CONF-018
        stdout.flush()
        if op == "stop" and response["ok"]:
            return 1 if MUTANT == "stop-exit-1" else 0  # defect switch: TJ-CONF-023
    close_all()  # end of input: close every file (fsync, release locks)
    return 0


def main(argv):
    import argparse

    parser = argparse.ArgumentParser(description="turnjournal v1 adapter (spec/v1/adapter.md) on stdin/stdout")
    parser.add_argument("--schema", help="path of schema.json (default: $TJ_SCHEMA, else the library's bundled copy)")
    args = parser.parse_args(argv)
    explicit = args.schema or os.environ.get("TJ_SCHEMA")
    if explicit:
        try:
            use_schema(explicit)
        except (OSError, ValueError) as e:
            print("adapter.py: cannot use schema.json %s (from %s): %s"
                  % (explicit, "--schema" if args.schema else "TJ_SCHEMA", e), file=sys.stderr)
            return 2
    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

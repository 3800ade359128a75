"""Lifecycle operations of the adapter protocol (adapter.md §5.4), one open-append-close per call."""

import datetime
import json
import os
import time

from .errors import BadRequest
from .event_fold import fold_event_log
from .journal_file import read_journal_file
from .records import FINISHING, Findings, RANK, valid_identifier
from .recovery import TURN_DIR
from .schema import is_integer
from .writer import AppendFile, WriterError, atomic_replace, make_dirs


# ---------------------------------------------------------------------------
# Lifecycle (adapter.md §5.4): what the writers decide. Each request opens the file's writer (lock taken, torn tail
# repaired), reads what it needs back from the file, makes one call and closes it again.
# ---------------------------------------------------------------------------


def _now_iso():
    import datetime
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _with_writer(file, body):
    """Open ``file``'s writer, call ``body(writer, records)`` with the file's accepted records, close the writer."""
    writer = AppendFile(file, "every")
    try:
        existing = [rec["obj"] for rec in read_journal_file(file, "tolerant", Findings()).records
                    if not rec.get("unknown")]
        return body(writer, existing)
    finally:
        writer.close()


def _session_journal(root, sid):
    if not isinstance(root, str) or not os.path.isabs(root):
        raise BadRequest("root must be an absolute path")
    if not isinstance(sid, str) or not valid_identifier(sid):
        raise BadRequest("session id %r is not a valid identifier (TJ-FAM-010)" % (sid,))  # before any path is built
    return os.path.join(root, TURN_DIR, sid + ".jsonl")


def turn_submit(root, sid, tid, content):
    """A user turn's ``submitted``; a retry with the same content writes nothing (TJ-TURN-012), other content is
    refused (TJ-TURN-003)."""
    import time

    def body(writer, existing):
        earlier = next((r for r in existing if r.get("event") == "submitted" and r.get("turn_id") == tid), None)
        if earlier is not None:
            if earlier.get("content") == content:
                return {"created": False}
            raise WriterError("refused", "turn %s was submitted with other content (TJ-TURN-003)" % tid)
        writer.append({"version": 1, "event": "submitted", "turn_id": tid, "session_id": sid,
                       "created_at": time.time(), "role": "user", "content": content})
        return {"created": True}
    return _with_writer(_session_journal(root, sid), body)


def turn_event(root, sid, tid, event, reason):
    """A turn's next step: only one that raises its state, never after a terminal one (TJ-TURN-014)."""
    import time
    if event not in ("worker_started", "assistant_started", "completed", "interrupted"):
        raise BadRequest("event must be worker_started, assistant_started, completed or interrupted")

    def body(writer, existing):
        ranks = [RANK[r["event"]] for r in existing if r.get("turn_id") == tid and r.get("event") in RANK]
        current = max(ranks) if ranks else -1
        if current < 0 or current == 3 or RANK[event] <= current:
            raise WriterError("refused", "%s does not raise the state of turn %s (TJ-TURN-014)" % (event, tid))
        record = {"version": 1, "event": event, "turn_id": tid, "created_at": time.time()}
        if event == "interrupted":
            record["reason"] = reason if isinstance(reason, str) and reason else "error"
        writer.append(record)
        return {}
    return _with_writer(_session_journal(root, sid), body)


def _known_runs(existing):
    """Every run of the log, request id -> finished: the last checkpoint's run index (runs whose records compaction
    removed), then every record of the file (TJ-EVENT-017, TJ-EVENT-020: a whole scan, not the index alone)."""
    runs = {}
    checkpoints = [r for r in existing if r.get("type") == "checkpoint"]
    index = checkpoints[-1].get("payload", {}).get("runs") if checkpoints else None
    if isinstance(index, list):
        for entry in index:
            if isinstance(entry, dict) and isinstance(entry.get("request_id"), str):
                runs[entry["request_id"]] = entry.get("outcome") is not None
    for r in existing:
        payload = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        rid = payload.get("request_id")
        if r.get("type") == "chat.started" and isinstance(rid, str):
            runs[rid] = runs.pop(rid, False)  # keeps start order: a run started later moves to the end
        elif r.get("type") in FINISHING and rid in runs:
            runs[rid] = True
    return runs


def event_append(file, rtype, payload):
    """An event-log record; the writer gives its seq, one more than the last (TJ-EVENT-003/004), and refuses a run
    while another is active (TJ-EVENT-009) or for a request id the log holds (TJ-EVENT-010, TJ-EVENT-017), and an ack
    through a record not yet written (TJ-EVENT-021)."""
    if not isinstance(file, str) or not os.path.isabs(file) or not isinstance(rtype, str) \
            or not isinstance(payload, dict):
        raise BadRequest("event_append needs file (an absolute path), type and payload (an object)")

    def body(writer, existing):
        seqs = [r["seq"] for r in existing if is_integer(r.get("seq"))]
        seq = max(seqs) + 1 if seqs else 0
        if rtype == "chat.started":
            runs = _known_runs(existing)
            if payload.get("request_id") in runs:
                raise WriterError("refused", "request %s already has a run (TJ-EVENT-010)" % payload.get("request_id"))
            if runs and not list(runs.values())[-1]:
                raise WriterError("refused", "a run is active (TJ-EVENT-009)")
        through = payload.get("through_seq")
        if rtype == "delivery.ack" and is_integer(through) and through >= seq:
            raise WriterError("refused", "through_seq %d is not below this ack's seq %d (TJ-EVENT-021)" % (through, seq))
        record = {"seq": seq, "ts": _now_iso(), "type": rtype, "payload": payload}
        writer.append(record)
        last = max((i for i, r in enumerate(existing) if r.get("type") == "checkpoint"), default=-1)
        # The count from the records already read; the file is read again only for the byte condition.
        if len(existing) - last >= CHECKPOINT_EVERY and _checkpoint_bytes_due(file):  # TJ-EVENT-006
            folded = fold_event_log(read_journal_file(file, "tolerant", Findings()), Findings())
            writer.append({"seq": seq + 1, "ts": _now_iso(), "type": "checkpoint",
                           "payload": {"messages": folded["messages"],  # TJ-EVENT-007
                                       "runs": _run_index(existing + [record])}})  # TJ-EVENT-019
        return {"seq": seq}
    return _with_writer(file, body)


CHECKPOINT_EVERY = 50


def _checkpoint_bytes_due(file):
    """TJ-EVENT-006's byte condition: at least as many bytes as the previous checkpoint's line follow it."""
    records = read_journal_file(file, "tolerant", Findings()).records
    last = max((i for i, r in enumerate(records) if r.get("type") == "checkpoint"), default=None)
    if last is None:
        return True
    line = len(records[last]["raw"]) + 1
    return os.path.getsize(file) - (records[last]["offset"] + line) >= line


def _run_index(records):
    """The run index of a checkpoint after ``records`` (spec §6.2): each run in start order with its first start, its
    first finish and the clients that acknowledged it."""
    outcomes = {"chat.done": "done", "chat.error": "error", "chat.cancelled": "cancelled"}
    runs = {}
    for r in records:
        payload = r.get("payload") if isinstance(r.get("payload"), dict) else {}
        rid = payload.get("request_id")
        if r.get("type") == "chat.started" and isinstance(rid, str) and rid not in runs:
            runs[rid] = {"request_id": rid, "started_seq": r["seq"], "started_ts": r["ts"], "outcome": None,
                         "finished_seq": None, "finished_ts": None, "acked": False, "acked_by": []}
        run = runs.get(rid)
        if run is None:
            continue
        if r.get("type") in outcomes and run["outcome"] is None:
            run.update(outcome=outcomes[r["type"]], finished_seq=r["seq"], finished_ts=r["ts"])
        if r.get("type") == "delivery.ack":
            run["acked"] = True
            client = payload.get("client_id")
            if isinstance(client, str) and client not in run["acked_by"]:
                run["acked_by"].append(client)
    return list(runs.values())


def run_step(request):
    """One record of a run: a header first in a new file and never again (TJ-RUN-003/004), agent events numbered
    from 0 (TJ-RUNSEM-010), model requests from 1, each response with its open request's seq (TJ-RUNSEM-011)."""
    file, run_id, started_at, step = (request.get(k) for k in ("file", "run_id", "started_at", "step"))
    if not isinstance(file, str) or not os.path.isabs(file) or not isinstance(run_id, str) \
            or not valid_identifier(run_id) or not isinstance(started_at, str):
        raise BadRequest("run_step needs file (an absolute path), run_id (an identifier) and started_at")

    def body(writer, existing):
        if not existing:
            writer.append({"type": "header", "schema_version": 1, "run_id": run_id, "started_at": started_at})
        base = {"run_id": run_id, "ts": _now_iso()}
        seqs = lambda t: [r["seq"] for r in existing if r.get("type") == t and is_integer(r.get("seq"))]
        if step == "start":
            writer.append(dict({"type": "run.start"}, **base, input=request.get("input")))
            return {}
        if step == "agent_event":
            done = seqs("agent.event")
            seq = max(done) + 1 if done else 0
            writer.append(dict({"type": "agent.event"}, **base, seq=seq, event=request.get("event")))
            return {"seq": seq}
        if step == "llm_request":
            done = seqs("llm.request")
            seq = max(done) + 1 if done else 1
            writer.append(dict({"type": "llm.request"}, **base, seq=seq, input=request.get("input")))
            return {"seq": seq}
        if step == "llm_response":
            seq = request.get("seq")
            if seq not in seqs("llm.request") or seq in seqs("llm.response"):
                raise WriterError("refused", "no open llm.request with seq %r (TJ-RUNSEM-005)" % (seq,))
            writer.append(dict({"type": "llm.response"}, **base, seq=seq, output=request.get("output")))
            return {}
        if step == "end":
            writer.append(dict({"type": "run.end"}, **base, outcome=request.get("outcome", "completed")))
            return {}
        raise BadRequest("step must be start, agent_event, llm_request, llm_response or end")
    return _with_writer(file, body)


def state_write(root, sid, messages):
    """Replace the session's state document atomically (TJ-STATE-005, TJ-DUR-009)."""
    if not isinstance(root, str) or not os.path.isabs(root) or not isinstance(sid, str) or not valid_identifier(sid):
        raise BadRequest("state_write needs root (an absolute path) and session_id (an identifier)")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                                                 for m in messages):
        raise BadRequest("messages must be a list of objects with a string role")
    path = os.path.join(root, "sessions", "state", sid + ".json")
    make_dirs(os.path.dirname(path))
    document = {"schema_version": 1, "session_id": sid, "updated_at": _now_iso(), "messages": messages}
    atomic_replace(path, json.dumps(document, ensure_ascii=True, separators=(",", ":")).encode("ascii"))
    return {}

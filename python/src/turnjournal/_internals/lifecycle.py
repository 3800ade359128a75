"""Run files and state documents as the adapter protocol's lifecycle ops write them (adapter.md §5.4): one
open-append-close per call. (Turn journals and event logs have public writers: turnjournal.journal, .events.)"""

import datetime
import json
import os

from .errors import BadRequest
from .journal_file import read_journal_file
from .records import Findings, valid_identifier
from .schema import is_integer
from .writer import AppendFile, WriterError, atomic_replace, make_dirs


def _now_iso():
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

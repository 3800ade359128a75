"""Run files and state documents as the adapter protocol's lifecycle ops write them (adapter.md §5.4): one
open-append-close per call, through the public writers (turnjournal.runs)."""

import os

from .errors import BadRequest, TurnJournalError
from .records import valid_identifier


def run_step(request):
    """One record of a run through the library's RunWriter, opened and closed for the call: a header first in a new
    file and never again (TJ-RUN-003/004), agent events numbered from 0 (TJ-RUNSEM-010), model requests from 1, each
    response with its open request's seq (TJ-RUNSEM-011)."""
    from ..runs import RunWriter

    file, run_id, started_at, step = (request.get(k) for k in ("file", "run_id", "started_at", "step"))
    if not isinstance(file, str) or not os.path.isabs(file) or not isinstance(run_id, str) \
            or not valid_identifier(run_id) or not isinstance(started_at, str):
        raise BadRequest("run_step needs file (an absolute path), run_id (an identifier) and started_at")
    if step not in ("start", "agent_event", "llm_request", "llm_response", "end"):
        raise BadRequest("step must be start, agent_event, llm_request, llm_response or end")
    with RunWriter(run_id, started_at, file=file) as writer:
        try:
            if step == "start":
                writer.run_start(request.get("input"))
            elif step == "agent_event":
                return {"seq": writer.agent_event(request.get("event"))}
            elif step == "llm_request":
                return {"seq": writer.llm_request(request.get("input"))}
            elif step == "llm_response":
                writer.llm_response(request.get("seq"), request.get("output"))
            else:
                writer.end(request.get("outcome", "completed"))
        except TurnJournalError as refusal:
            if refusal.code == "run_ended":
                raise TurnJournalError("refused", str(refusal)) from refusal  # the protocol's code (adapter.md §5.4)
            raise
    return {}


def state_write(root, sid, messages):
    """Replace the session's state document atomically (TJ-STATE-005, TJ-DUR-009), through write_state."""
    from ..runs import write_state

    if not isinstance(root, str) or not os.path.isabs(root) or not isinstance(sid, str) or not valid_identifier(sid):
        raise BadRequest("state_write needs root (an absolute path) and session_id (an identifier)")
    if not isinstance(messages, list) or not all(isinstance(m, dict) and isinstance(m.get("role"), str)
                                                 for m in messages):
        raise BadRequest("messages must be a list of objects with a string role")
    write_state({"messages": messages}, root=root, session_id=sid)
    return {}
